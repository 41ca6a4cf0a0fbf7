package compose

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// Swarm children (docs/PROTOCOLS.md, "compose swarm children"): the checker follows every
// swarm_child_* frame by runKey and judges R-swarm-close, R-swarm-order, R-swarm-chain,
// R-swarm-parent-done and, against the ground truth, R-swarm-content. R-swarm-cancel is judged
// by the load generator at the mock, as R-abort is. The checker also measures, per stream,
// child_ttfd (a child's start → its first delta) and children_per_run.

// Measure names the compose checker reports (protocol.Measurer).
const (
	MeasureChildTTFD      = "child_ttfd"
	MeasureChildrenPerRun = "children_per_run"
)

// swarmFrame holds the members of the swarm_child_* frames the checker judges.
type swarmFrame struct {
	RootRunID   *string  `json:"rootRunId"`
	ParentRunID *string  `json:"parentRunId"`
	SubID       *string  `json:"subId"`
	Depth       *int     `json:"depth"`
	RunKey      *string  `json:"runKey"`
	RunKeyChain []string `json:"runKeyChain"`
	Delta       *string  `json:"delta"`
	ToolName    string   `json:"toolName"`
	Failed      *bool    `json:"failed"`
	Error       *string  `json:"error"`
}

// swarmChild is one started child as the stream showed it.
type swarmChild struct {
	runKey, subID, parent string
	chain                 []string
	depth                 int
	// chainOK: the child's chain passed R-swarm-chain, so its shape can be compared with the
	// script (a broken chain is R-swarm-chain's finding alone).
	chainOK bool
	// closed counts done/error frames; errored and errMsg describe the first.
	closed  int
	errored bool
	errMsg  string
	// parentDone: the child's parent (the root run, or the parent child) said done while this
	// child was still open.
	parentDone string
	text       strings.Builder
	tools      []string // tool names started, in order
	openTools  []string
	started    time.Time
	firstDelta time.Duration // 0: no delta yet
}

// swarmState is the checker's view of the run's children.
type swarmState struct {
	children  []*swarmChild
	byKey     map[string]int
	rootRunID string
	// now is the clock for child_ttfd (time.Now; tests set their own).
	now func() time.Time
}

// isSwarmType reports whether typ is one of the swarm frames the checker judges.
func isSwarmType(typ string) bool {
	switch typ {
	case TypeChildStart, TypeChildDelta, TypeChildToolStart, TypeChildToolEnd, TypeChildDone, TypeChildError:
		return true
	}
	return false
}

// observeSwarm judges one swarm_child_* frame; ok is false for any other type.
func (c *Checker) observeSwarm(typ string, data []byte) (protocol.Observation, bool) {
	if !isSwarmType(typ) {
		return protocol.Observation{}, false
	}
	obs := protocol.Observation{Kind: protocol.FrameOther}
	var f swarmFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.v.Add(protocol.RFraming, "%s: %v in %s", typ, err, protocol.Quote(string(data), 80))
		return obs, true
	}
	if f.RunKey == nil || *f.RunKey == "" {
		c.v.Add(protocol.RFraming, "%s: expected a runKey, saw %s", typ, protocol.Quote(string(data), 80))
		return obs, true
	}
	sw := &c.swarm
	if sw.byKey == nil {
		sw.byKey = map[string]int{}
	}
	key := *f.RunKey
	if typ == TypeChildStart {
		c.onChildStart(key, &f, data)
		return obs, true
	}
	i, known := sw.byKey[key]
	if !known {
		c.v.Add(RSwarmOrder, "%s for runKey %q: expected a swarm_child_start for it first, saw none", typ, key)
		return obs, true
	}
	ch := sw.children[i]
	if ch.closed > 0 {
		if typ == TypeChildDone || typ == TypeChildError {
			c.v.Add(RSwarmClose, "child %s: expected exactly one swarm_child_done or swarm_child_error, saw %s after the first", key, typ)
		} else {
			c.v.Add(RSwarmOrder, "child %s: expected no %s after its swarm_child_done/error", key, typ)
		}
		return obs, true
	}
	switch typ {
	case TypeChildDelta:
		if f.Delta == nil {
			c.v.Add(protocol.RFraming, "%s: expected a string delta, saw %s", typ, protocol.Quote(string(data), 80))
			return obs, true
		}
		if ch.firstDelta == 0 && *f.Delta != "" {
			ch.firstDelta = max(sw.clock().Sub(ch.started), 1)
		}
		ch.text.WriteString(*f.Delta)
	case TypeChildToolStart:
		ch.tools = append(ch.tools, f.ToolName)
		ch.openTools = append(ch.openTools, f.ToolName)
	case TypeChildToolEnd:
		j := slices.Index(ch.openTools, f.ToolName)
		if j < 0 {
			c.v.Add(RSwarmOrder, "child %s: swarm_child_tool_end %s: expected an open swarm_child_tool_start of that toolName, saw none", key, f.ToolName)
			return obs, true
		}
		ch.openTools = slices.Delete(ch.openTools, j, j+1)
	case TypeChildDone, TypeChildError:
		c.onChildClose(ch, typ == TypeChildError, jsonwire.Deref(f.Error))
	}
	return obs, true
}

func (sw *swarmState) clock() time.Time {
	if sw.now != nil {
		return sw.now()
	}
	return time.Now()
}

// onChildStart registers a child and judges its place in the tree (R-swarm-chain) and, with
// ground truth, its identity (R-swarm-content).
func (c *Checker) onChildStart(key string, f *swarmFrame, data []byte) {
	sw := &c.swarm
	if _, dup := sw.byKey[key]; dup {
		c.v.Add(RSwarmOrder, "swarm_child_start for runKey %q: expected each runKey to start once, saw it again", key)
		return
	}
	if f.Depth == nil || f.ParentRunID == nil || f.RootRunID == nil || f.SubID == nil || f.RunKeyChain == nil {
		c.v.Add(protocol.RFraming, "swarm_child_start: expected rootRunId, parentRunId, subId, depth, runKey and runKeyChain, saw %s", protocol.Quote(string(data), 120))
	}
	ch := &swarmChild{runKey: key, subID: jsonwire.Deref(f.SubID), parent: jsonwire.Deref(f.ParentRunID), chain: f.RunKeyChain, started: sw.clock()}
	if f.Depth != nil {
		ch.depth = *f.Depth
	}
	if c.terminal == "done" {
		c.v.Add(RSwarmParentDone, "child %s: expected every child to start before the parent's done, saw swarm_child_start after it", key)
		ch.parentDone = "the run"
	}
	ch.chainOK = c.judgeChain(ch, jsonwire.Deref(f.RootRunID))
	sw.byKey[key] = len(sw.children)
	sw.children = append(sw.children, ch)
	if ch.chainOK && !c.s.NoGroundTruth {
		c.judgeChildIdentity(ch)
	}
}

// judgeChain checks runKeyChain = the parent's chain + runKey, depth = len(chain)-1, the
// parent (parentRunId) being the chain's first element at depth 1 and a started, open child at
// depth 2 and more, and one rootRunId for every child of the stream.
func (c *Checker) judgeChain(ch *swarmChild, root string) bool {
	sw := &c.swarm
	bad := func(format string, args ...any) bool {
		c.v.Add(RSwarmChain, "child %s: "+format, append([]any{ch.runKey}, args...)...)
		return false
	}
	if sw.rootRunID == "" {
		sw.rootRunID = root
	} else if root != sw.rootRunID {
		return bad("expected rootRunId %q (as every child of this run), saw %q", sw.rootRunID, root)
	}
	n := len(ch.chain)
	switch {
	case n < 2:
		return bad("expected a runKeyChain of the parent's chain plus the child (at least 2 keys), saw %q", ch.chain)
	case ch.chain[n-1] != ch.runKey:
		return bad("expected runKeyChain to end with the child's runKey, saw %q", ch.chain)
	case ch.depth != n-1:
		return bad("expected depth %d (len(runKeyChain)-1 for %q), saw %d", n-1, ch.chain, ch.depth)
	case ch.depth == 1 && ch.parent != ch.chain[0]:
		return bad("expected parentRunId %q (the chain's first key at depth 1), saw %q", ch.chain[0], ch.parent)
	case ch.depth == 1:
		return true
	}
	pi, ok := sw.byKey[ch.parent]
	if !ok {
		return bad("expected parentRunId %q to be a started child at depth %d, saw none", ch.parent, ch.depth)
	}
	p := sw.children[pi]
	if !slices.Equal(p.chain, ch.chain[:n-1]) {
		return bad("expected runKeyChain %q + %q (the parent's chain plus the child), saw %q", p.chain, ch.runKey, ch.chain)
	}
	if p.closed > 0 {
		c.v.Add(RSwarmOrder, "child %s: expected its parent %s to be running, saw the start after the parent finished", ch.runKey, p.runKey)
	}
	return true
}

// judgeChildIdentity compares a started child with the script: a scripted subId, at its depth,
// under its scripted parent.
func (c *Checker) judgeChildIdentity(ch *swarmChild) {
	want, ok := c.s.Expected.ChildByName(ch.subID)
	if !ok {
		c.v.Add(RSwarmContent, "child %s: subId %q is not a scripted child (expected one of %s)", ch.runKey, ch.subID, strings.Join(c.childNames(), ", "))
		return
	}
	if ch.depth != want.Depth {
		c.v.Add(RSwarmContent, "child %s: expected depth %d as scripted, saw %d", ch.runKey, want.Depth, ch.depth)
	}
	parentSub := ""
	if ch.depth > 1 {
		if pi, ok := c.swarm.byKey[ch.parent]; ok {
			parentSub = c.swarm.children[pi].subID
		}
	}
	if parentSub != want.Parent {
		c.v.Add(RSwarmContent, "child %s: expected it under %s as scripted, saw it under %s", ch.runKey, orRoot(want.Parent), orRoot(parentSub))
	}
}

func orRoot(s string) string {
	if s == "" {
		return "the root run"
	}
	return s
}

func (c *Checker) childNames() []string {
	names := make([]string, len(c.s.Expected.Children))
	for i, ec := range c.s.Expected.Children {
		names[i] = ec.Name
	}
	return names
}

// onChildClose settles a child: a parent's done before it (R-swarm-parent-done), and its
// text, tools and outcome against the script.
func (c *Checker) onChildClose(ch *swarmChild, errored bool, msg string) {
	ch.closed++
	ch.errored, ch.errMsg = errored, msg
	if ch.parentDone != "" {
		c.v.Add(RSwarmParentDone, "child %s: expected it to finish before %s's done, saw its swarm_child_%s after it", ch.runKey, ch.parentDone, map[bool]string{true: "error", false: "done"}[errored])
	}
	if !errored {
		// A child's done, like the run's, comes after its own children finished.
		for _, d := range c.swarm.children {
			if d.closed == 0 && d.parentDone == "" && len(d.chain) > len(ch.chain) && slices.Equal(d.chain[:len(ch.chain)], ch.chain) {
				d.parentDone = ch.runKey
			}
		}
	}
	if c.s.NoGroundTruth || !ch.chainOK {
		return
	}
	want, ok := c.s.Expected.ChildByName(ch.subID)
	if !ok {
		return // reported at its start
	}
	// After a stop or an abort children end cancelled: only what they showed so far is judged.
	cut := c.stopped || c.s.Aborted
	got := ch.text.String()
	switch {
	case cut && !strings.HasPrefix(want.Text, got):
		c.v.Add(RSwarmContent, "child %s: deltas diverge from the script: expected a prefix of %s, saw %s", ch.runKey, protocol.Quote(want.Text, 60), protocol.Quote(got, 60))
	case !cut && got != want.Text:
		c.v.Add(RSwarmContent, "child %s: expected deltas %s, saw %s", ch.runKey, protocol.Quote(want.Text, 60), protocol.Quote(got, 60))
	}
	if cut {
		return
	}
	if gotTools, wantTools := slices.Sorted(slices.Values(ch.tools)), slices.Sorted(slices.Values(want.Tools)); !slices.Equal(gotTools, wantTools) {
		c.v.Add(RSwarmContent, "child %s: expected tools %q, saw %q", ch.runKey, want.Tools, ch.tools)
	}
	switch {
	case errored && want.Outcome != scenarios.ChildError:
		c.v.Add(RSwarmContent, "child %s: expected swarm_child_done, saw swarm_child_error %s", ch.runKey, protocol.Quote(msg, 60))
	case !errored && want.Outcome == scenarios.ChildError:
		c.v.Add(RSwarmContent, "child %s: expected swarm_child_error (%s), saw swarm_child_done", ch.runKey, protocol.Quote(want.Error, 60))
	case errored && !strings.Contains(msg, want.Error):
		c.v.Add(RSwarmContent, "child %s: expected an error naming %s, saw %s", ch.runKey, protocol.Quote(want.Error, 60), protocol.Quote(msg, 60))
	}
}

// swarmTerminal notes the run's first terminal: at done every open child is one the parent
// did not wait for (R-swarm-parent-done if it finishes later, R-swarm-close if never).
// Stopped and error terminals are lenient: the seed does not say whether a stop closes
// children on the wire, and their cancellation is judged at the mock (R-swarm-cancel).
func (c *Checker) swarmTerminal(typ string) {
	if typ != "done" {
		return
	}
	for _, ch := range c.swarm.children {
		if ch.closed == 0 && ch.parentDone == "" {
			ch.parentDone = "the run"
		}
	}
}

// finishSwarm judges the end of a stream that ended cleanly with done: every child closed
// (R-swarm-close) and, with ground truth and a run that was neither stopped nor aborted, every
// scripted child started (R-swarm-content).
func (c *Checker) finishSwarm(clean bool) {
	if !clean || c.terminal != "done" {
		return
	}
	for _, ch := range c.swarm.children {
		if ch.closed == 0 {
			c.v.Add(RSwarmClose, "child %s: expected a swarm_child_done or swarm_child_error, the stream ended without one", ch.runKey)
		}
	}
	if c.s.NoGroundTruth || c.stopped || c.s.Expected.ProviderError != "" {
		return
	}
	for _, ec := range c.s.Expected.Children {
		if !slices.ContainsFunc(c.swarm.children, func(ch *swarmChild) bool { return ch.subID == ec.Name }) {
			c.v.Add(RSwarmContent, "scripted child %s (depth %d) never started", ec.Name, ec.Depth)
		}
	}
}

// Measures reports the stream's compose measures (protocol.Measurer); call after Finish. Each
// family of frames appends its own: the swarm's here, the approval round trip (plan.go).
func (c *Checker) Measures() []protocol.Measure {
	return c.swarmMeasures(c.planMeasures())
}

// swarmMeasures appends each child's time to first delta and how many children the run
// started (nothing when it started none).
func (c *Checker) swarmMeasures(out []protocol.Measure) []protocol.Measure {
	if len(c.swarm.children) == 0 {
		return out
	}
	for _, ch := range c.swarm.children {
		if ch.firstDelta > 0 {
			out = append(out, protocol.Measure{Name: MeasureChildTTFD, Kind: protocol.MeasureLatency, Duration: ch.firstDelta})
		}
	}
	return append(out, protocol.Measure{Name: MeasureChildrenPerRun, Kind: protocol.MeasureCount, Count: int64(len(c.swarm.children))})
}

var _ protocol.Measurer = (*Checker)(nil)

// childDeltaOpen starts a child delta in the exact shape the Writer encodes it; fastChildDelta
// follows it without decoding JSON (child deltas are per token, like the parent's text).
const childDeltaOpen = `{"type":"swarm_child_delta","runKey":"`

// fastChildDelta judges {"type":"swarm_child_delta","runKey":"…","delta":"…"} (from after the
// runKey's opening quote) for a started, open child; anything else takes the general path.
func (c *Checker) fastChildDelta(b []byte) bool {
	key, rest, ok := jsonwire.CutPlainString(b)
	if !ok || len(key) == 0 {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","delta":"`)); !ok {
		return false
	}
	i, known := c.swarm.byKey[string(key)]
	if !known || c.swarm.children[i].closed > 0 {
		return false // the general path reports it
	}
	if c.scratch, rest, ok = appendJSONBody(c.scratch[:0], rest); !ok || string(rest) != `"}` {
		return false
	}
	ch := c.swarm.children[i]
	if ch.firstDelta == 0 && len(c.scratch) > 0 {
		ch.firstDelta = max(c.swarm.clock().Sub(ch.started), 1)
	}
	ch.text.Write(c.scratch)
	return true
}
