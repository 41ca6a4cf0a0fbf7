package compose

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// relayRunID is the run id of relayed streams (the root of every runKeyChain).
const relayRunID = "run_RELAY"

// relaySwarm writes what a conforming runtime streams for children: each child's start, its
// tool batch (its own children inside it), its deltas, then done or error. Children run one
// after another here; the runtime interleaves them, which the checker must not mind.
func relaySwarm(t testing.TB, w *Writer, children []scenarios.ScriptChild, chain []string) {
	t.Helper()
	must := dialecttest.Must(t)
	for _, c := range children {
		cc := append(slices.Clip(chain), c.Name)
		must(w.ChildStart(ChildStart{RootRunID: relayRunID, ParentRunID: chain[len(chain)-1], SubID: c.Name,
			Depth: len(cc) - 1, AgentWallet: "0xchild", RunKey: c.Name, RunKeyChain: cc}))
		batches := 0
		for _, st := range c.Turns {
			for _, step := range st.Steps {
				if step.Kind == scenarios.StepText {
					must(w.ChildDelta(c.Name, step.Text))
				}
			}
			if len(st.ToolCalls) == 0 {
				continue
			}
			batches++
			for _, call := range st.ToolCalls {
				must(w.ChildToolStart(c.Name, call.Name, []byte(call.Arguments)))
			}
			relaySwarm(t, w, st.Swarm, cc)
			for _, call := range st.ToolCalls {
				must(w.ChildToolEnd(c.Name, call.Name, call.Outcome != scenarios.OutcomeSuccess, call.Result))
			}
		}
		if c.Outcome == scenarios.ChildError {
			must(w.ChildError(c.Name, c.Error))
		} else {
			must(w.ChildDone(ChildDone{RunKey: c.Name, ToolBatches: batches, StopReason: StopReasonCompleted, WallMs: 12}))
		}
	}
}

// TestSwarmRules: edits of a conforming depth-2 swarm stream, each reported as its rule alone.
func TestSwarmRules(t *testing.T) {
	t.Parallel()
	const start = `"type":"swarm_child_start"`
	for _, tc := range []struct {
		name, scenario string
		stopped        bool
		noGroundTruth  bool
		edit           func(t *testing.T, f []string) []string
		want           []protocol.Rule
	}{
		// The conforming stream passes.
		{"conforming", "swarm-depth2", false, false, nil, nil},
		// A failing child's error passes too.
		{"child error", "swarm-child-error", false, false, nil, nil},
		// A child's done removed: the run's done comes with the child still open.
		{"no done", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"researcher-b"`, 0))
		}, []protocol.Rule{RSwarmClose}},
		// A child finished twice.
		{"double done", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"researcher-b"`, 0)
			return dialecttest.Insert(f, i+1, dialecttest.Raw(`{"type":"swarm_child_error","runKey":"researcher-b","error":"again"}`))
		}, []protocol.Rule{RSwarmClose}},
		// A delta for a runKey that never started.
		{"delta before start", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"type":"swarm_child_delta","runKey":"ghost","delta":"boo"}`))
		}, []protocol.Rule{RSwarmOrder}},
		// A tool event after the child's done.
		{"tool after done", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"researcher-b"`, 0)
			return dialecttest.Insert(f, i+1, dialecttest.Raw(`{"type":"swarm_child_tool_start","runKey":"researcher-b","toolName":"x","input":{}}`))
		}, []protocol.Rule{RSwarmOrder}},
		// A tool end with no tool start.
		{"tool end without start", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_delta","runKey":"researcher-b"`, 0)
			return dialecttest.Insert(f, i, dialecttest.Raw(`{"type":"swarm_child_tool_end","runKey":"researcher-b","toolName":"x","failed":false}`))
		}, []protocol.Rule{RSwarmOrder}},
		// A runKey started twice.
		{"start twice", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, start, 0)
			return dialecttest.Insert(f, i+1, f[i])
		}, []protocol.Rule{RSwarmOrder}},
		// The grandchild's chain skips its parent.
		{"chain skips parent", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"subId":"analyst-a1"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"runKeyChain":["run_RELAY","researcher-a","analyst-a1"]`, `"runKeyChain":["run_RELAY","other","analyst-a1"]`, 1))
		}, []protocol.Rule{RSwarmChain}},
		// A depth that does not match the chain.
		{"wrong depth", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"subId":"analyst-a1"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"depth":2`, `"depth":1`, 1))
		}, []protocol.Rule{RSwarmChain}},
		// A child under another root run.
		{"other root", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"subId":"researcher-b"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"rootRunId":"run_RELAY"`, `"rootRunId":"run_OTHER"`, 1))
		}, []protocol.Rule{RSwarmChain}},
		// The last child's done moved after the parent's done.
		{"done before children", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"researcher-b"`, 0)
			done := f[i]
			f = dialecttest.Remove(f, i)
			return dialecttest.Insert(f, dialecttest.Index(t, f, `"type":"done"`, 0)+1, done)
		}, []protocol.Rule{RSwarmParentDone}},
		// A child's done before its own child's.
		{"child done before its child", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"analyst-a1"`, 0)
			done := f[i]
			f = dialecttest.Remove(f, i)
			return dialecttest.Insert(f, dialecttest.Index(t, f, `"type":"swarm_child_done","runKey":"researcher-a"`, 0)+1, done)
		}, []protocol.Rule{RSwarmParentDone}},
		// A child's text differs from its script.
		{"wrong text", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_delta","runKey":"researcher-b"`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"type":"swarm_child_delta","runKey":"researcher-b","delta":"Wendor"}`))
		}, []protocol.Rule{RSwarmContent}},
		// Without ground truth the text is not judged.
		{"wrong text, no ground truth", "swarm-depth2", false, true, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_delta","runKey":"researcher-b"`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"type":"swarm_child_delta","runKey":"researcher-b","delta":"Wendor"}`))
		}, nil},
		// A scripted failure reported as done.
		{"error as done", "swarm-child-error", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_error"`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"type":"swarm_child_done","runKey":"windows-check","usage":{},"toolBatches":0,"stopReason":"completed","wallMs":1}`))
		}, []protocol.Rule{RSwarmContent}},
		// A scripted child that never started (its frames removed).
		{"missing child", "swarm-depth2", false, false, func(t *testing.T, f []string) []string {
			return slices.DeleteFunc(f, func(fr string) bool {
				return strings.Contains(fr, `researcher-b"`) && strings.Contains(fr, "swarm_child")
			})
		}, []protocol.Rule{RSwarmContent}},
		// A stop while children run: the delegation settles cancelled and the stream stops with
		// children still open (lenient: their cancellation is judged at the mock).
		{"stopped with open children", "swarm-depth2", true, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"swarm_child_delta","runKey":"researcher-a"`, 0)
			return append(f[:i:i], dialecttest.Raw(`{"type":"tool_end","toolName":"delegate_agents","failed":true}`),
				dialecttest.Raw(`{"type":"stopped","reason":"user_stop","usage":{"input_tokens":1,"output_tokens":1}}`), dialecttest.Raw("[DONE]"))
		}, nil},
		// The seed's own example frames, on a runtime whose children are not scripted.
		{"seed shapes", "plain-answer", false, true, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1,
				dialecttest.Raw(`{"type":"swarm_child_start","rootRunId":"root-1","parentRunId":"run-parent","subId":"child_1","depth":1,"agentWallet":"0xchild","runKey":"child_1","runKeyChain":["run-parent","child_1"]}`),
				dialecttest.Raw(`{"type":"swarm_child_delta","runKey":"child_1","delta":"Analyzing..."}`),
				dialecttest.Raw(`{"type":"swarm_child_done","runKey":"child_1","usage":{"inputTokens":100,"outputTokens":50,"totalTokens":150},"toolBatches":2,"stopReason":"completed","wallMs":3400}`))
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantEdited(t, tc.scenario, relayOptions{}, tc.edit, func(s *protocol.Session) { s.NoGroundTruth = tc.noGroundTruth }, tc.stopped, tc.want)
		})
	}
}

// TestSwarmMeasures: child_ttfd per child from its start to its first delta, and the number
// of children, on a stream with a clock the test moves; a stream without children reports none.
func TestSwarmMeasures(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "swarm-depth2", 1)
	s := dialecttest.Session(sc)
	c := NewChecker(s)
	now := time.Unix(0, 0)
	c.swarm.now = func() time.Time { return now }
	for _, ev := range dialecttest.DecodeAll(t, relay(t, sc, relayOptions{})) {
		if strings.Contains(string(ev.Data), `"type":"swarm_child_start"`) {
			now = now.Add(time.Second) // each child's first delta comes 10 ms after its start
		} else if strings.Contains(string(ev.Data), `"type":"swarm_child_delta"`) {
			now = now.Add(10 * time.Millisecond)
		}
		c.Observe(&ev)
	}
	if vs := c.Finish(nil); len(vs) > 0 {
		t.Fatalf("violations: %+v", vs)
	}
	var ttfd []time.Duration
	var count int64 = -1
	for _, m := range c.Measures() {
		switch m.Name {
		case MeasureChildTTFD:
			ttfd = append(ttfd, m.Duration)
		case MeasureChildrenPerRun:
			count = m.Count
		}
	}
	if count != 3 || len(ttfd) != 3 {
		t.Fatalf("children_per_run %d and %d child_ttfd, want 3 and 3: %+v", count, len(ttfd), c.Measures())
	}
	// researcher-a's first delta follows its tool batch and its child's whole stream.
	if ttfd[1] != 10*time.Millisecond || ttfd[0] <= ttfd[1] {
		t.Errorf("child_ttfd %v: want analyst-a1 (2nd) at 10ms and researcher-a (1st) later", ttfd)
	}
	plain := NewChecker(dialecttest.Session(dialecttest.Script(t, "plain-answer", 1)))
	if got := plain.Measures(); got != nil {
		t.Errorf("a stream without children measured %+v, want none", got)
	}
}

// BenchmarkCheckerSwarm judges a whole depth-2 swarm stream, per frame, as BenchmarkCheckerStream
// does for the others: most of its frames are child deltas, which take the fast path.
func BenchmarkCheckerSwarm(b *testing.B) {
	benchStream(b, dialecttest.Script(b, "swarm-depth2", 1))
}
