package agentruntime

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

var (
	simChatOptIn  = clientKind{simchat.Name, true}
	simChatLegacy = clientKind{simchat.Name, false}
	simCanvas     = clientKind{dialect: simcanvas.Name}
	composeClient = clientKind{dialect: compose.Name}
)

// TestFaultSwitches runs each fault against a clean runtime on the same session and shows the
// frames it changes, and that the dialect's checker reports the rule the fault breaks (a check
// that cannot fail is a defect; this is where each one fails).
func TestFaultSwitches(t *testing.T) {
	t.Parallel()
	clean := newEnv(t, 0, Options{})
	for _, tc := range []faultCase{
		// The intermediate turn's preamble is never retracted, so the client ends with preamble + answer.
		{"no-reset", simChatOptIn, "openai-none", "preamble-tool", `"event":"chunk_reset"`, "", protocol.RConverge},
		// Same on the canvas, where resets are stream:chunk_reset events.
		{"no-reset", simCanvas, "anthropic-all", "preamble-tool", `stream:chunk_reset`, "", protocol.RConverge},
		// A reset in a single-turn (final) stream.
		{"reset-in-final", simChatOptIn, "openai-none", "plain-answer", "", `"event":"chunk_reset"`, protocol.RResetScope},
		// The canvas has the same rule.
		{"reset-in-final", simCanvas, "openai-all", "plain-answer", "", `stream:chunk_reset`, protocol.RResetScope},
		// Thinking text arrives as a chunk for an opted-in client...
		{"leak-thinking", simChatOptIn, "openai-none", "thinking-answer", "", `"chunk":`, protocol.RNoThinkingAnswer},
		// ...inside the settled answer for a legacy client...
		{"leak-thinking", simChatLegacy, "anthropic-none", "thinking-answer", "", `"chunk":`, protocol.RNoThinkingAnswer},
		// ...and as stream:chunk instead of stream:thinking on the canvas.
		{"leak-thinking", simCanvas, "openai-all", "thinking-answer", `stream:thinking`, "", protocol.RNoThinkingAnswer},
		// A legacy client gets live preamble text and a reset.
		{"ignore-header", simChatLegacy, "openai-none", "preamble-tool", "", `"event":"chunk_reset"`, simchat.RLegacySettled},
		// Thinking frames on a deployment whose policy hides them.
		{"ignore-policy", simChatOptIn, "openai-none", "thinking-answer", "", `"event":"thinking"`, simchat.RThinkingGate},
		// Tool frames on a deployment whose policy hides them.
		{"ignore-policy", simChatOptIn, "anthropic-none", "preamble-tool", "", `"event":"tool"`, simchat.RToolGate},
		// Tool arguments in the public tool frame and final envelope.
		{"expose-tool-args", simChatOptIn, "openai-tools", "preamble-tool", "", `"arguments"`, simchat.RToolRedaction},
		// Even a legacy client's final envelope leaks them.
		{"expose-tool-args", simChatLegacy, "openai-none", "preamble-tool", "", `"arguments"`, simchat.RToolRedaction},
		// A tool start without its end.
		{"unbalanced-tool", simChatOptIn, "openai-tools", "preamble-tool", `"phase":"end"`, "", protocol.RToolLifecycle},
		// On the canvas.
		{"unbalanced-tool", simCanvas, "anthropic-all", "preamble-tool", `"phase":"end"`, "", protocol.RToolLifecycle},
		// In compose, a tool_start never closed.
		{"unbalanced-tool", composeClient, "openai-all", "preamble-tool", `"type":"tool_end"`, "", protocol.RToolLifecycle},
		// Two finals in sim-chat.
		{"double-terminal", simChatOptIn, "openai-none", "plain-answer", "", "", protocol.RTerminal},
		// Two execution:completed on the canvas.
		{"double-terminal", simCanvas, "openai-all", "plain-answer", "", "", protocol.RTerminal},
		// stopped then done in compose.
		{"double-terminal", composeClient, "anthropic-all", "plain-answer", "", `"type":"stopped"`, protocol.RTerminal},
		// No end marker in sim-chat ("[DONE]" as a JSON string)...
		{"missing-done", simChatLegacy, "openai-none", "plain-answer", `"[DONE]"`, "", protocol.RTerminal},
		// ...on the canvas...
		{"missing-done", simCanvas, "openai-all", "plain-answer", `data: [DONE]`, "", protocol.RTerminal},
		// ...and in compose.
		{"missing-done", composeClient, "anthropic-all", "plain-answer", `data: [DONE]`, "", protocol.RTerminal},
		// first_text_delta before model_start (the plan and side-event faults need a client that
		// answers approvals: loadgen TestSelfProofPlanFaults).
		{"timing-out-of-order", composeClient, "openai-all", "plain-answer", "", "", compose.RTimingOrder},
	} {
		t.Run(tc.fault+"/"+tc.client.String(), func(t *testing.T) {
			t.Parallel()
			g, b, vs := tc.play(t, clean, 3)
			rules := rulesOf(vs)
			if !slices.Contains(rules, tc.rule) {
				t.Errorf("checker reported %v, want %s", rules, tc.rule)
			}
			t.Logf("rules reported: %v; frames changed:\n%s", rules, frameDiff(g, b))
		})
	}
}

// faultCase is a fault switch played as client on one session of scenario on deployment slug.
type faultCase struct {
	fault    string
	client   clientKind
	slug     string
	scenario string
	// gone must be in the clean stream and not the faulted one; added in the faulted one more
	// often than in the clean one ("" skips either).
	gone, added string
	rule        protocol.Rule
}

// play plays the session (seed) on clean and on a runtime with the fault, and checks that the fault
// changed the stream, gone and added, and that the clean stream has no violation; it returns
// both streams normalized and the faulted one's violations.
func (tc faultCase) play(t *testing.T, clean *env, seed uint64) (g, b string, vs []protocol.Violation) {
	t.Helper()
	f, err := ParseFaults([]string{tc.fault})
	if err != nil {
		t.Fatal(err)
	}
	faulty := newEnv(t, 0, Options{Faults: f})
	dep, _ := clean.rt.deps.Lookup(tc.slug)
	good := clean.open(tc.client, tc.slug, tc.scenario, seed, t.Name())
	bad := faulty.open(tc.client, tc.slug, tc.scenario, seed, t.Name())
	g, b = normalize(good.body), normalize(bad.body)
	if g == b {
		t.Fatalf("fault %s changed nothing", tc.fault)
	}
	if tc.gone != "" && (!strings.Contains(g, tc.gone) || strings.Contains(b, tc.gone)) {
		t.Errorf("want %q in the clean stream only", tc.gone)
	}
	if tc.added != "" && strings.Count(b, tc.added) <= strings.Count(g, tc.added) {
		t.Errorf("want more %q in the faulted stream (clean %d, faulted %d)", tc.added, strings.Count(g, tc.added), strings.Count(b, tc.added))
	}
	if vs := check(t, tc.client, dep, tc.scenario, seed, good); len(vs) > 0 {
		t.Errorf("clean stream has violations: %+v", vs)
	}
	return g, b, check(t, tc.client, dep, tc.scenario, seed, bad)
}

// frameDiff lists the frames only one of the two streams has (- clean, + faulted).
func frameDiff(clean, faulted string) string {
	c, f := strings.Split(clean, "\n\n"), strings.Split(faulted, "\n\n")
	var b strings.Builder
	for _, fr := range c {
		if !slices.Contains(f, fr) {
			b.WriteString("- " + fr + "\n")
		}
	}
	for _, fr := range f {
		if !slices.Contains(c, fr) {
			b.WriteString("+ " + fr + "\n")
		}
	}
	return b.String()
}

// TestFaultSlowFirstChunk: the first answer chunk of every dialect is held back by the delay;
// the frames themselves do not change.
func TestFaultSlowFirstChunk(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	faulty := newEnv(t, 0, Options{Faults: Faults{SlowFirstChunk: delay}})
	clean := newEnv(t, 0, Options{})
	for _, c := range []clientKind{simChatOptIn, simChatLegacy, simCanvas, composeClient} {
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			bad := faulty.open(c, "openai-all", "plain-answer", 1, t.Name())
			if took := time.Since(start); took < delay {
				t.Errorf("stream took %s, want at least the %s first-chunk delay", took, delay)
			}
			good := clean.open(c, "openai-all", "plain-answer", 1, t.Name())
			if normalize(good.body) != normalize(bad.body) {
				t.Errorf("slow-first-chunk changed the frames")
			}
		})
	}
}

// TestFaultNoCancel: with no-cancel a disconnect is not propagated: the provider plays its
// stream to the end and a running tool finishes instead of settling cancelled; the clean
// runtime's behaviour is in TestAbortDuringTool and TestAbortMidAnswer.
func TestFaultNoCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.1, Options{Faults: faultsOn("no-cancel"), ToolTimeScale: 0.1})
	m := e.rt.metrics.registry

	r, closeConn := e.openLive("openai-none", directive("abort-mid-answer", 1, "nocancel-answer"))
	for range 5 {
		readUntil(t, r, `"chunk"`)
	}
	closeConn()
	var rec mockrecords.Record
	eventually(t, 5*time.Second, "provider stream played to its end", func() bool {
		recs := e.mock.Sessions("nocancel-answer")
		if len(recs) == 1 && !recs[0].End.IsZero() {
			rec = recs[0]
			return true
		}
		return false
	})
	if rec.Outcome != mockrecords.OutcomeCompleted || !rec.ClientGone.IsZero() {
		t.Errorf("mock outcome %s (client gone at %v), want completed and never gone: the fault must hide the disconnect", rec.Outcome, rec.ClientGone)
	}

	r, closeConn = e.openLive("openai-tools", directive("abort-during-tool", 1, "nocancel-tool"))
	readUntil(t, r, `"phase":"start"`)
	closeConn()
	eventually(t, 5*time.Second, "next turn requested after the tool finished", func() bool {
		return len(e.mock.Sessions("nocancel-tool")) == 2
	})
	if got := gauge(t, m, MetricToolsCancelled); got != 0 {
		t.Errorf("tools cancelled = %v, want 0 under no-cancel", got)
	}
}

// TestFaultLeakGoroutine: each aborted request leaves exactly one goroutine behind (a leak
// check must see it), released at Close.
func TestFaultLeakGoroutine(t *testing.T) {
	t.Parallel()
	// Real-time pacing: each aborted stream is still running when its client leaves, however
	// loaded the machine is.
	e := newEnv(t, 1, Options{Faults: faultsOn("leak-goroutine")})
	base := labelledGoroutines(t, e.rt)
	for i := range 3 {
		r, closeConn := e.openLive("openai-none", directive("abort-mid-answer", uint64(i), "leak"))
		readUntil(t, r, `"chunk"`)
		closeConn()
		eventually(t, 5*time.Second, "abort counted", func() bool { return gauge(t, e.rt.metrics.registry, MetricClientAborts) == float64(i+1) })
	}
	eventually(t, 5*time.Second, "three leaked goroutines", func() bool { return labelledGoroutines(t, e.rt) == base+3 })
	_ = e.rt.Close()
	eventually(t, 5*time.Second, "leaked goroutines released at Close", func() bool { return labelledGoroutines(t, e.rt) <= base })
}

// faultsOn is Faults with the named switches on, built without ParseFaults.
func faultsOn(names ...string) Faults {
	var f Faults
	for _, name := range names {
		f.on |= faultBits[name]
	}
	return f
}

func TestParseFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      []string
		want    Faults
		wantErr string
	}{
		// No switch is a correct runtime.
		{"none", nil, Faults{}, ""},
		// Switches combine.
		{"two", []string{"no-reset", "missing-done"}, faultsOn("no-reset", "missing-done"), ""},
		// The only valued switch parses a Go duration.
		{"slow", []string{"slow-first-chunk=250ms"}, Faults{SlowFirstChunk: 250 * time.Millisecond}, ""},
		// An unknown name lists the valid ones.
		{"unknown", []string{"no-resets"}, Faults{}, "unknown fault \"no-resets\" (valid: no-reset, reset-in-final"},
		// A valued switch without a value says what it needs.
		{"slow without value", []string{"slow-first-chunk"}, Faults{}, "needs a positive duration"},
		// A flag switch given a value is a mistake, not silently accepted.
		{"flag with value", []string{"no-cancel=1"}, Faults{}, "takes no value"},
	} {
		got, err := ParseFaults(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got err %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestFaultNamesRoundTrip(t *testing.T) {
	t.Parallel()
	var all []string
	for _, s := range FaultSwitches() {
		name := s.Name
		if name == slowFirstChunk {
			name += "=1.5s"
		}
		all = append(all, name)
		f, err := ParseFaults([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Names(); !slices.Equal(got, []string{name}) {
			t.Errorf("%s: Names() = %v", name, got)
		}
		if !strings.Contains(FaultHelp(), s.Name) {
			t.Errorf("FaultHelp lacks %s", s.Name)
		}
	}
	f, err := ParseFaults(all)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); !slices.Equal(got, all) {
		t.Errorf("all: Names() = %v, want %v", got, all)
	}
}

// TestFaultNamesInCode: every switch the code asks for by name (Faults.has) is in FaultSwitches,
// so a misspelt name fails here rather than panicking in a rarely played branch.
func TestFaultNamesInCode(t *testing.T) {
	t.Parallel()
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	asked := regexp.MustCompile(`\.has\("([^"]+)"\)`)
	n := 0
	for _, file := range files {
		name := file.Name()
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range asked.FindAllSubmatch(src, -1) {
			n++
			if _, ok := faultBits[string(m[1])]; !ok {
				t.Errorf("%s asks for fault %q, which FaultSwitches lacks", name, m[1])
			}
		}
	}
	if n < len(faultBits) {
		t.Errorf("found %d fault checks in the code, want at least one per switch (%d)", n, len(faultBits))
	}
}
