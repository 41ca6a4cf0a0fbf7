package mockprovider

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// paced is a one-turn scenario of tokens one-token steps.
func paced(t *testing.T, tokens int) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Parse("paced.yaml", fmt.Appendf(nil, "name: paced\ndescription: cache test\ntiming:\n  ttft: 1ms\n  itl: 1ms\n  tokensPerFrame: 1\nturns:\n  - text: {tokens: %d}\n", tokens))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestScriptCache(t *testing.T) {
	t.Parallel()
	small := paced(t, 10)
	tests := []struct {
		name string
		run  func(t *testing.T, c *scriptCache)
	}{
		// The same pair again is the script already rendered, not a new one.
		{"same pair is cached", func(t *testing.T, c *scriptCache) {
			if a, b := c.render(small, 1), c.render(small, 1); a != b {
				t.Fatal("second render of (scenario, seed 1) is a new script")
			}
		}},
		// Another seed is another script, and each is what Render makes of its seed.
		{"seeds differ and match Render", func(t *testing.T, c *scriptCache) {
			a, b := c.render(small, 1), c.render(small, 2)
			if a == b {
				t.Fatal("seeds 1 and 2 share one script")
			}
			for seed, got := range map[uint64]*scenarios.Script{1: a, 2: b} {
				if want := small.Render(seed); !reflect.DeepEqual(got, want) {
					t.Errorf("seed %d: cached script differs from Render's", seed)
				}
			}
		}},
		// Another *Scenario of the same name (a reloaded library) never plays the old script.
		{"keyed by scenario, not name", func(t *testing.T, c *scriptCache) {
			if c.render(small, 1) == c.render(paced(t, 10), 1) {
				t.Fatal("two scenarios of one name share a script")
			}
		}},
		// Past maxCachedScripts pairs the cache starts over, so it stays bounded.
		{"bounded in scripts", func(t *testing.T, c *scriptCache) {
			for seed := range uint64(maxCachedScripts + 1) {
				c.render(small, seed)
			}
			if n := len(c.scripts); n > maxCachedScripts || n == 0 {
				t.Fatalf("%d scripts cached after %d pairs, want 1..%d", n, maxCachedScripts+1, maxCachedScripts)
			}
			if c.steps != len(c.scripts)*turnSteps(small.Render(0).Turns) {
				t.Fatalf("step count %d for %d scripts", c.steps, len(c.scripts))
			}
		}},
		// A script over the step budget is rendered for the request and not kept.
		{"oversized script not kept", func(t *testing.T, c *scriptCache) {
			big := paced(t, maxCachedSteps+1)
			if a, b := c.render(big, 1), c.render(big, 1); a == b || len(c.scripts) != 0 {
				t.Fatalf("a script of %d steps was cached", turnSteps(a.Turns))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, &scriptCache{})
		})
	}
}
