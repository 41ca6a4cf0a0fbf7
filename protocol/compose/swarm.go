package compose

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// Swarm children (docs/PROTOCOLS.md, "compose swarm children"): every swarm_child_* frame is
// followed by runKey for the swarm rules (R-swarm-cancel is the load generator's) and the
// measures child_ttfd (a child's start → its first delta) and children_per_run.

// Measure names the compose checker reports (protocol.Measurer).
const (
	MeasureChildTTFD      = "child_ttfd"
	MeasureChildrenPerRun = "children_per_run"
)

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
	chainOK               bool // R-swarm-chain passed, so the shape can be compared with the script
	closed                int  // done/error frames; errored and errMsg describe the first
	errored               bool
	errMsg                string
	// parentDone names the parent (the run or a child) that said done while this was open.
	parentDone string
	text       strings.Builder
	tools      []string // tool names started, in order
	openTools  []string
	started    time.Time
	firstDelta time.Duration // 0: no delta yet
}

type swarmState struct {
	children  []*swarmChild
	byKey     map[string]int
	rootRunID string
	now       func() time.Time // the clock for child_ttfd (nil: time.Now)
}

// observeSwarm judges one swarm_child_* frame; ok is false for any other type.
func (c *Checker) observeSwarm(typ string, data []byte) (protocol.Observation, bool) {
	switch typ {
	case TypeChildStart, TypeChildDelta, TypeChildToolStart, TypeChildToolEnd, TypeChildDone, TypeChildError:
	default:
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

// onChildStart registers a child and judges its place in the tree and its identity.
func (c *Checker) onChildStart(key string, f *swarmFrame, data []byte) {
	sw := &c.swarm
	if _, dup := sw.byKey[key]; dup {
		c.v.Add(RSwarmOrder, "swarm_child_start for runKey %q: expected each runKey to start once, saw it again", key)
		return
	}
	if f.Depth == nil || f.ParentRunID == nil || f.RootRunID == nil || f.SubID == nil || f.RunKeyChain == nil {
		c.v.Add(protocol.RFraming, "swarm_child_start: expected rootRunId, parentRunId, subId, depth, runKey and runKeyChain, saw %s", protocol.Quote(string(data), 120))
	}
	ch := &swarmChild{runKey: key, subID: jsonwire.Deref(f.SubID), parent: jsonwire.Deref(f.ParentRunID), chain: f.RunKeyChain,
		depth: jsonwire.Deref(f.Depth), started: sw.clock()}
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

// judgeChain checks runKeyChain = the parent's chain + runKey, depth = len(chain)-1,
// parentRunId the chain's first key at depth 1 (an open child deeper), one rootRunId.
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

// judgeChildIdentity checks a started child is a scripted subId at its depth, under its parent.
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
		c.v.Add(RSwarmContent, "child %s: expected it under %s as scripted, saw it under %s",
			ch.runKey, cmp.Or(want.Parent, "the root run"), cmp.Or(parentSub, "the root run"))
	}
}

func (c *Checker) childNames() []string {
	names := make([]string, len(c.s.Expected.Children))
	for i, ec := range c.s.Expected.Children {
		names[i] = ec.Name
	}
	return names
}

// onChildClose settles a child: a parent's done before it, its text, tools and outcome.
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

// swarmTerminal notes the run's first terminal: at done every open child is one the parent did
// not wait for. Stopped and error are lenient: the seed does not say whether a stop closes
// children on the wire (their cancel is judged at the mock).
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

// finishSwarm judges a clean end with done: every child closed and every scripted one started.
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

// Measures reports the stream's compose measures (protocol.Measurer); call after Finish.
func (c *Checker) Measures() []protocol.Measure {
	return c.swarmMeasures(c.planMeasures())
}

// swarmMeasures appends each child's child_ttfd and children_per_run (none without children).
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

// childDeltaOpen starts a child delta as the Writer encodes it: per token, so fastChildDelta
// follows {"type":"swarm_child_delta","runKey":"…","delta":"…"} (from after the runKey's
// quote) of an open child without decoding JSON.
const childDeltaOpen = `{"type":"swarm_child_delta","runKey":"`

func (c *Checker) fastChildDelta(b []byte) bool {
	key, rest, ok := jsonwire.CutPlainString(b)
	if !ok || len(key) == 0 {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","delta":`)); !ok {
		return false
	}
	i, known := c.swarm.byKey[string(key)]
	if !known || c.swarm.children[i].closed > 0 {
		return false // the general path reports it
	}
	delta, rest, ok := c.cutString(rest)
	if !ok || string(rest) != "}" {
		return false
	}
	ch := c.swarm.children[i]
	if ch.firstDelta == 0 && len(delta) > 0 {
		ch.firstDelta = max(c.swarm.clock().Sub(ch.started), 1)
	}
	ch.text.Write(delta)
	return true
}
