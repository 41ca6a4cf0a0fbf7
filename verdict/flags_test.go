package verdict

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestParseFlags: good expressions of each flag make the config; a bad one is an error
// naming its flag.
func TestParseFlags(t *testing.T) {
	t.Parallel()
	shared, err := protocol.NewRuleSet(protocol.SharedRules())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                              string
		thresholds, regressions, allow    []string
		wantThresholds, wantRegs, wantAll int
		wantErr                           string
	}{
		// one of each
		{"good", []string{"ttfc.p99<300ms"}, []string{"ttfc.p99=10%"}, []string{"R-abort"}, 1, 1, 1, ""},
		// none at all
		{"empty", nil, nil, nil, 0, 0, 0, ""},
		// a threshold that does not parse
		{"threshold", []string{"ttfc.p99<<"}, nil, nil, 0, 0, 0, "--threshold:"},
		// a regression that does not parse
		{"regression", nil, []string{"ttfc.p99"}, nil, 0, 0, 0, "--max-regression:"},
		// an unknown rule
		{"allow", nil, nil, []string{"R-nope"}, 0, 0, 0, "--allow:"},
		// a threshold on a rule that does not exist (a typo) would measure nothing and pass
		{"threshold rule", []string{"violations{rule=R-convergence}==0"}, nil, nil, 0, 0, 0, `--threshold: threshold "violations{rule=R-convergence}==0": unknown rule "R-convergence"`},
		// a threshold on a known rule
		{"threshold rule ok", []string{"violations{rule=R-abort}<5"}, nil, nil, 1, 0, 0, ""},
		// a rule the set given does not have (a dialect's, with the shared rules only)
		{"allow other", nil, nil, []string{"R-agui-run"}, 0, 0, 0, `unknown rule "R-agui-run"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ParseFlags(shared, tc.thresholds, tc.regressions, tc.allow)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if cfg.Rules != shared {
				t.Error("the config does not keep the rules")
			}
			if err != nil || len(cfg.Thresholds) != tc.wantThresholds || len(cfg.Regressions) != tc.wantRegs || len(cfg.Allow) != tc.wantAll {
				t.Fatalf("config %+v, err %v", cfg, err)
			}
		})
	}
}
