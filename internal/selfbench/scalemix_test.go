package selfbench

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// TestScaleDefaultMix: the default-mix scale workload keeps every scenario, dialect and
// target of the default mix, plays scale-stream in scaleStreamShare of every profile's
// sessions, reaches every counted family early, and its scenario directory serves them all.
func TestScaleDefaultMix(t *testing.T) {
	t.Parallel()
	def := loadgen.DefaultMix()
	mix, err := scaleDefaultMix()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range def.ScenarioNames() {
		if !slices.Contains(mix.ScenarioNames(), name) {
			t.Errorf("scenario %s of the default mix is not played", name)
		}
	}
	if !slices.Equal(mix.Dialects(), def.Dialects()) || len(mix.Profiles) != len(def.Profiles) {
		t.Errorf("dialects %v, want %v; %d profiles, want %d", mix.Dialects(), def.Dialects(), len(mix.Profiles), len(def.Profiles))
	}
	picks, streams := make([]int, len(mix.Profiles)), make([]int, len(mix.Profiles))
	families := scaleFamilies()
	firstAt := make([]int, len(families))
	for i := range firstAt {
		firstAt[i] = -1
	}
	const n = 40_000
	for i := range n {
		p := mix.Pick(mix.Seed, uint64(i))
		picks[p.ProfileIndex]++
		if p.Scenario == scaleStreamName {
			streams[p.ProfileIndex]++
		}
		for j, f := range families {
			if firstAt[j] < 0 && f.match(p.Scenario, p.Target) {
				firstAt[j] = i
			}
		}
	}
	for i, p := range mix.Profiles {
		if share := float64(streams[i]) / float64(picks[i]); math.Abs(share-scaleStreamShare) > 0.03 {
			t.Errorf("profile %s plays scale-stream in %.3f of %d sessions, want %.2f", p.Name, share, picks[i], scaleStreamShare)
		}
	}
	for j, f := range families {
		// The run's report says how early each family comes; 1,000 sessions is far inside a
		// 5,000-stream run's.
		if firstAt[j] < 0 || firstAt[j] >= 1000 {
			t.Errorf("family %s: first session at index %d, want one within the first 1000", f.name, firstAt[j])
		}
	}
	// Every profile's own scenario is some family's: a new one must be counted too.
	for _, p := range def.Profiles {
		for name := range p.Scenarios {
			if !slices.ContainsFunc(families, func(f scaleFamily) bool { return f.match(name, loadgen.Target{}) }) {
				t.Errorf("profile %s's own scenario %s is in no scaleFamilies entry", p.Name, name)
			}
		}
	}
	docs := embeddedDocs()
	docs[scaleStreamName] = "name: scale-stream\nturns:\n  - text: {tokens: 3}\n"
	dir, lib, err := writeScenarioDir(docs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	for _, name := range mix.ScenarioNames() {
		if _, ok := lib.Get(name); !ok {
			t.Errorf("scenario directory lacks %s", name)
		}
	}
}

// TestFamilyCounter counts each session in its families (or as scale-stream, or other), a
// failed one as failed too, and reports a family that never ran as a missed target.
func TestFamilyCounter(t *testing.T) {
	t.Parallel()
	mix, err := scaleDefaultMix()
	if err != nil {
		t.Fatal(err)
	}
	c := newFamilyCounter(mix)
	for _, s := range []struct {
		scenario, slug string
		outcome        measure.Outcome
		violations     []protocol.Violation
	}{
		{"scale-stream", "openai-all", measure.OutcomeCompleted, nil},                                              // a long stream, not a family
		{"swarm-depth2", "openai-all", measure.OutcomeCompleted, nil},                                              // a swarm
		{"swarm-stop", "anthropic-all", measure.OutcomeAborted, nil},                                               // a stopped swarm: a swarm, not failed
		{"plan-approve", "openai-all", measure.OutcomeCompleted, []protocol.Violation{{Rule: protocol.RTerminal}}}, // a failed plan approval
		{"pii-answer", "openai-redacted", measure.OutcomeCompleted, nil},                                           // a PII scenario on a redacted workflow: both
		{"plain-answer", "openai-nothink-all", measure.OutcomeStalled, nil},                                        // a nothink deployment, stalled: failed
		{"plain-answer", "openai-all", measure.OutcomeCompleted, nil},                                              // none of them
	} {
		c.add(loadgen.SessionEnd{Scenario: s.scenario, Target: s.slug, Outcome: s.outcome, Violations: s.violations})
	}
	rep := &Report{}
	c.report(rep)
	for _, want := range []struct {
		name  string
		value float64
		unit  string
		met   bool
	}{
		{"sessions: compose swarms (swarm-*)", 2, "sessions (0 failed)", true},
		{"sessions: compose plan approvals (plan-*)", 1, "sessions (1 failed)", true},
		{"sessions: PII scenarios (pii-*)", 1, "sessions (0 failed)", true},
		{"sessions: sessions on PII-redacted workflows", 1, "sessions (0 failed)", true},
		{"sessions: sessions on nothink deployments", 1, "sessions (1 failed)", true},
		{"sessions: canvas reconnects (reconnect-*)", 0, "sessions (0 failed)", false},
	} {
		f := figure(t, rep, want.name)
		if f.Value != want.value || f.Unit != want.unit || f.Met == nil || *f.Met != want.met {
			t.Errorf("%s: %+v, want %v %s met %v", want.name, f, want.value, want.unit, want.met)
		}
	}
	if f := figure(t, rep, "scale-stream sessions"); f.Value != 1 {
		t.Errorf("scale-stream sessions %v, want 1", f.Value)
	}
	if f := figure(t, rep, "sessions: other default-mix scenarios"); f.Value != 1 {
		t.Errorf("other sessions %v, want 1", f.Value)
	}
	if len(rep.Failures) > 0 {
		t.Errorf("a family not reached failed the report: %v", rep.Failures)
	}
}

// TestScaleDefaultMixRun plays the default-mix scale run briefly, served in process: every
// user in a stream at once, new-family sessions among them, no error, violation or leak. Not
// parallel: the leak check counts the whole process's goroutines and descriptors.
func TestScaleDefaultMixRun(t *testing.T) {
	inProcess := func(_ string, lib *scenarios.Library, providerHTTP1 bool) (*stack.Stack, error) {
		return stack.StartInProcess(stack.Options{TimeScale: 1, Library: lib, ProviderHTTP1: providerHTTP1})
	}
	const streams = 30
	rep, err := scale(context.Background(), Options{Streams: streams, Ramp: time.Second, StreamLength: 2 * time.Second,
		InterToken: 100 * time.Millisecond, DefaultMix: true}, inProcess)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	_ = rep.WriteText(&text)
	if len(rep.Failures) > 0 {
		t.Errorf("failures %v\n%s", rep.Failures, text.String())
	}
	if f := figure(t, rep, "peak concurrent streams"); f.Value != streams {
		t.Errorf("peak %v streams, want %d\n%s", f.Value, streams, text.String())
	}
	var families float64
	for _, f := range rep.Figures {
		if strings.HasPrefix(f.Name, "sessions: ") && f.Name != "sessions: other default-mix scenarios" {
			families += f.Value
		}
	}
	if families == 0 || figure(t, rep, "scale-stream sessions").Value == 0 {
		t.Errorf("no session of the new families, or no long stream:\n%s", text.String())
	}
	if f := figure(t, rep, "TTFC p50, scale-stream on opted-in sim-chat"); f.Value < 200 {
		t.Errorf("opted-in sim-chat's long streams: TTFC p50 %v ms, want at least the scripted 200 ms\n%s", f.Value, text.String())
	}
	if !strings.Contains(rep.Command, "--default-mix") {
		t.Errorf("command %q lacks --default-mix", rep.Command)
	}
}
