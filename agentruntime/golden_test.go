package agentruntime

import (
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// goldenClients are the client variants of the golden tests: sim-chat opted in and legacy under
// each policy, then canvas and compose (whose output no policy changes).
func goldenClients() []struct {
	client clientKind
	policy string
} {
	var out []struct {
		client clientKind
		policy string
	}
	for _, opt := range []bool{true, false} {
		for _, p := range []string{"none", "thinking", "tools", "all"} {
			out = append(out, struct {
				client clientKind
				policy string
			}{clientKind{simchat.Name, opt}, p})
		}
	}
	out = append(out, struct {
		client clientKind
		policy string
	}{clientKind{dialect: simcanvas.Name}, "all"}, struct {
		client clientKind
		policy string
	}{clientKind{dialect: compose.Name}, "all"})
	return out
}

// TestGoldenFrames pins the exact frame sequence of every dialect × opt-in × policy on the core
// scenarios. Both provider wires must produce the same client stream (the runtime hides the
// provider), and every stream must pass the load generator's own checker for its dialect.
func TestGoldenFrames(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	for _, scenario := range []string{"plain-answer", "thinking-answer", "preamble-tool", "parallel-tools"} {
		for _, gc := range goldenClients() {
			name := gc.client.String() + "-" + gc.policy
			t.Run(scenario+"/"+name, func(t *testing.T) {
				t.Parallel()
				var first string
				for _, wire := range []string{"openai", "anthropic"} {
					dep, _ := e.rt.deps.Lookup(wire + "-" + gc.policy)
					sr := e.open(gc.client, dep.Slug, scenario, 7, t.Name()+"-"+wire)
					got := normalize(sr.body)
					if vs := check(t, gc.client, dep, scenario, 7, sr); len(vs) > 0 {
						t.Errorf("%s wire: checker found violations: %+v\n%s", wire, vs, got)
					}
					if first == "" {
						first = got
						golden.Check(t, filepath.Join("testdata", "golden", scenario, name+".golden"), []byte(got))
					} else if got != first {
						t.Errorf("%s wire: stream differs from openai wire's:\n--- openai\n%s\n--- %s\n%s", wire, first, wire, got)
					}
				}
			})
		}
	}
}
