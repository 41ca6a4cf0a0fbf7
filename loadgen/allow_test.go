package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// TestAllowedRulesDoNotFailTheRun: violations of rules the mix (or Config.Allow) declares as
// known findings are counted and listed as allowed, and the run passes; the same run without
// the allow list fails; a rule allowed that the run did not break is not listed.
func TestAllowedRulesDoNotFailTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		mixAllow string
		allow    []protocol.Rule
		wantPass bool
	}{
		// nothing allowed: R-framing and R-converge fail the run
		{"none", "", nil, false},
		// the mix allows one of the two rules: the other still fails the run
		{"one", "allow: [R-framing]\n", nil, false},
		// the mix and Config.Allow together allow both
		{"both", "allow: [R-framing, R-abort]\n", []protocol.Rule{protocol.RConverge}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// A stream that ends as it should but breaks two rules: text off the script
				// (R-converge) and a frame that is not JSON (R-framing).
				var body struct {
					Input string `json:"input"`
				}
				_ = json.NewDecoder(r.Body).Decode(&body)
				d, _, _ := scenarios.ParseDirective(body.Input)
				sc, _ := scenarios.Embedded().Get(d.Scenario)
				final, _ := json.Marshal(sc.Render(d.Seed).Expected().FinalText())
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("X-Sim-Stream-Protocol", "agent-events-v1")
				_, _ = w.Write([]byte("data: {\"blockId\":\"b1\",\"chunk\":\"nope\"}\n\ndata: {not json\n\n" +
					"data: {\"event\":\"final\",\"data\":{\"success\":true,\"output\":{\"content\":" + string(final) + "}}}\n\ndata: \"[DONE]\"\n\n"))
			}))
			defer srv.Close()
			run := runLoad(t, Config{
				Target: srv.URL, Mix: stallMix(t, tc.mixAllow), MixName: "allow", Rate: 50, Sessions: 1,
				Allow: tc.allow, Grace: 5 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-", SamplesPerRule: 1,
			})
			s := run.Summary
			if s.Violations[protocol.RFraming] != 1 || s.Violations[protocol.RConverge] != 1 || s.Counters.Outcome(measure.OutcomeCompleted) != 1 {
				t.Fatalf("violations %v, outcomes %v: want R-framing and R-converge once each, allowed or not, on a completed session", s.Violations, s.Counters.Outcomes)
			}
			if got := s.Counters.FailedByRules; len(got) != 1 || got["R-converge,R-framing"] != 1 {
				t.Errorf("failed by rules %v, want the session under R-converge,R-framing", got)
			}
			if s.Verdict.Pass != tc.wantPass {
				t.Errorf("verdict %+v, want pass %v", s.Verdict, tc.wantPass)
			}
			for _, rule := range s.Config.Allow {
				want := string(rule) + "×1"
				if listed := slices.Contains(s.Verdict.Allowed, want); listed != (rule != protocol.RAbort) {
					t.Errorf("verdict allowed %q: %s listed %v (a rule broken is listed, one not broken is not)", s.Verdict.Allowed, want, listed)
				}
			}
			for _, r := range s.Verdict.Reasons {
				for _, rule := range s.Config.Allow {
					if strings.Contains(r, string(rule)) {
						t.Errorf("reason %q names allowed rule %s", r, rule)
					}
				}
			}
		})
	}
}

// TestAllowNamesKnownRules: a misspelt rule is bad input, named, in the mix and in Config.
func TestAllowNamesKnownRules(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("typo.yaml", []byte("scenarios: {plain-answer: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: x}]}\nallow: [R-abrot]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), withDialects(Config{Target: "http://127.0.0.1:1", Sessions: 1, Clients: 1, Mix: m, MixName: "typo.yaml", NoLeakCheck: true}))
	if err == nil || !strings.Contains(err.Error(), `mix typo.yaml: allow[0]: unknown rule "R-abrot"`) {
		t.Errorf("mix with allow: [R-abrot]: %v, want an error naming the file, allow[0] and the rule", err)
	}
	_, err = Run(context.Background(), withDialects(Config{Target: "http://127.0.0.1:1", Sessions: 1, Clients: 1, Allow: []protocol.Rule{"abort"}, NoLeakCheck: true}))
	if err == nil || !strings.Contains(err.Error(), `allow[0]: unknown rule "abort"`) {
		t.Errorf("Config.Allow [abort]: %v, want an error naming allow[0] and the rule", err)
	}
	// A mix threshold on a misspelt rule would measure nothing and pass: refused before the
	// run, as gate refuses it after; a known rule's threshold is taken.
	for _, tc := range []struct{ rule, want string }{{"R-convergence", `mix t.yaml: thresholds[0]: threshold "violations{rule=R-convergence}==0": unknown rule "R-convergence"`}, {"R-converge", ""}} {
		m, err := ParseMix("t.yaml", []byte("scenarios: {plain-answer: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: x}]}\nthresholds: ['violations{rule="+tc.rule+"}==0']\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), withDialects(Config{Target: "http://127.0.0.1:1", Sessions: 1, Clients: 1, Mix: m, MixName: "t.yaml", NoLeakCheck: true}))
		if got := err != nil && strings.Contains(err.Error(), "thresholds[0]"); got != (tc.want != "") || (tc.want != "" && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("mix threshold on %s: %v, want %q", tc.rule, err, tc.want)
		}
	}
}
