package loadgen

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// TestSwarmMeasuresRecorded: compose swarms run clean, and the checker's measures reach
// summary.json: child_ttfd per child, children_per_run per run, each with its kind.
func TestSwarmMeasuresRecorded(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	run := runLoad(t, s.config(mixOf(t, []string{"swarm-depth2", "swarm-child-error"}, composeAll()), 4, 12))
	sum := run.Summary
	// Violations only: the leak check's goroutine gauges are the process's, which parallel
	// tests share.
	if n := sum.TotalViolations(); n != 0 {
		t.Fatalf("clean runtime: %d violations\n%s", n, describe(run))
	}
	want := []measure.MeasureInfo{{Name: "child_ttfd", Kind: measure.MeasureKindLatency}, {Name: "children_per_run", Kind: measure.MeasureKindCount}}
	if !slices.Equal(sum.Measures, want) {
		t.Errorf("measures %+v, want %+v", sum.Measures, want)
	}
	perRun := map[string]int64{}
	var ttfd, runs int64
	for _, m := range sum.Metrics {
		switch m.Metric {
		case "child_ttfd":
			ttfd += m.Count
		case "children_per_run":
			runs += m.Count
			perRun[m.Scenario] = m.Max
		}
	}
	// swarm-depth2 has 3 children, swarm-child-error 2; every child streams text.
	if perRun["swarm-depth2"] != 3 || perRun["swarm-child-error"] != 2 || runs != 12 {
		t.Errorf("children_per_run max %v over %d runs, want depth2 3 and child-error 2 over 12", perRun, runs)
	}
	if ttfd < 2*12 {
		t.Errorf("%d child_ttfd samples, want one per child (at least 24)", ttfd)
	}
}

// TestSwarmChildrenCancelled is the self-proof of R-swarm-cancel: with child-not-cancelled the
// children of stopped and aborted runs stream on at the mock, reported as R-swarm-cancel alone
// (not R-abort: the parent's own provider stream had ended); the clean runtime cancels them.
// The faulty runtime's children stream on for seconds on purpose; the leak checks of the tests
// running alongside read their own stack's gauges (stack.config), not this process's
// goroutines.
func TestSwarmChildrenCancelled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		faults []string
		want   []protocol.Rule
	}{
		// The clean runtime: every child's provider stream ends with the run.
		{nil, nil},
		// The fault: children play their scripts to the end (seconds after the stop or abort).
		{[]string{"child-not-cancelled"}, []protocol.Rule{protocol.RSwarmCancel}},
	} {
		t.Run(strings.Join(append([]string{"clean"}, tc.faults...), "+"), func(t *testing.T) {
			t.Parallel()
			// Real time: the children still have ~2 s to stream when the client acts at 3 s,
			// far past the 1 s tolerance.
			s := newStack(t, 1, tc.faults...)
			run := runLoad(t, s.config(mixOf(t, []string{"swarm-stop", "swarm-abort"}, composeAll()), 4, 4))
			got := slices.Sorted(func(yield func(protocol.Rule) bool) {
				for r := range run.Summary.Violations {
					if !yield(r) {
						return
					}
				}
			})
			if !slices.Equal(got, tc.want) {
				t.Errorf("rules %v, want %v\n%s", got, tc.want, describe(run))
			}
			if run.Summary.Counters.Outcome(measure.OutcomeAborted) != 4 {
				t.Errorf("%d sessions aborted or stopped, want 4", run.Summary.Counters.Outcome(measure.OutcomeAborted))
			}
		})
	}
}

// TestSwarmMixIsComposeOnly: a swarm scenario played by a non-compose profile is a
// configuration error naming the profile and the scenario; in the compose profile it is fine.
func TestSwarmMixIsComposeOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		shared   map[string]float64
		profiles []Profile
		err      string
	}{
		// Shared by a sim-chat profile: rejected.
		{"shared", map[string]float64{"swarm-depth2": 1}, []Profile{optedInAll(), composeAll()}, `plays swarm scenario "swarm-depth2": swarm children are compose only`},
		// The compose profile's own: accepted, and sim-chat plays only the shared ones.
		{"compose own", map[string]float64{"plain-answer": 1}, []Profile{optedInAll(), withScenarios(composeAll(), "swarm-depth2")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := NewMix("test", 1, tc.shared, tc.profiles)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Target: "http://127.0.0.1:1", Mix: m, MixName: "test", Clients: 1, Duration: time.Second}
			cfg = withDialects(cfg)
			_, err = cfg.withDefaults()
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
		})
	}
}

// withScenarios gives p scenarios of its own.
func withScenarios(p Profile, names ...string) Profile {
	p.Scenarios = map[string]float64{}
	for _, n := range names {
		p.Scenarios[n] = 1
	}
	return p
}
