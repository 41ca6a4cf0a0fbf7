package agentruntime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// Swarms: a scenarios.DelegateTool call runs its child agents in parallel, each a tool loop of
// its own whose provider requests name it, so the mock records (and checks the cancellation of)
// every child turn.

type childRun struct {
	// runKey is the child's key on the wire and its sub-agent id (its scripted name);
	// parentRunID the parent child's runKey, or the run id under the root run; chain the run
	// id then every runKey down to this child's.
	runKey, path, parentRunID string
	chain                     []string
	depth                     int
	started                   time.Time
	usage                     protocol.Usage
	toolBatches               int
}

// swarm runs the delegations of one turn. Children hand their events (an emitter call each)
// to the run's goroutine on events, unbuffered, so every event of a delegation is written
// before it settles; abandon is closed when the run's goroutine stops listening.
type swarm struct {
	rn          *run
	events      chan func(*composeEmitter)
	abandon     chan struct{}
	abandonOnce sync.Once
}

func (sw *swarm) send(ev func(*composeEmitter)) {
	select {
	case sw.events <- ev:
	case <-sw.abandon:
	}
}

// delegation returns the children a tool call delegates to (nil for an ordinary tool).
func delegation(t *toolRun) []scenarios.SimChild {
	if t.Name != scenarios.DelegateTool {
		return nil
	}
	if t.Input == nil {
		if json.Unmarshal([]byte(t.Args), &t.Input) != nil {
			return nil
		}
	}
	children, err := decodeMember[[]scenarios.SimChild](t.Input, scenarios.SwarmArgument)
	if err != nil {
		return nil
	}
	return children
}

// runTurnTools runs a turn's tools (or delegations) in parallel, writing all their frames through
// em on the run's goroutine, the stream's single writer; a cancelled ctx settles them at once.
func (rn *run) runTurnTools(ctx context.Context, em emitter, calls []*toolRun) {
	sw := &swarm{rn: rn, events: make(chan func(*composeEmitter)), abandon: make(chan struct{})}
	defer sw.abandonOnce.Do(func() { close(sw.abandon) })
	for _, t := range calls {
		em.toolStart(t)
	}
	rn.flush()
	settled := make(chan *toolRun, len(calls))
	for _, t := range calls {
		go func() {
			sw.settle(ctx, t, nil)
			settled <- t
		}()
	}
	sem, _ := em.(*composeEmitter) // the one dialect that streams swarm children
	relay := func(ev func(*composeEmitter)) {
		if sem != nil {
			ev(sem)
		}
	}
	for left := len(calls); left > 0; {
		select {
		case t := <-settled:
			em.toolEnd(t)
			left--
		case ev := <-sw.events:
			relay(ev)
			// Relay a bounded batch of what is ready, then flush once, as the parent's own
			// frames go out per provider read rather than per frame.
		batch:
			for range maxRelayBatch {
				select {
				case ev := <-sw.events:
					relay(ev)
				default:
					break batch
				}
			}
		}
		rn.flush()
	}
}

// maxRelayBatch bounds how many ready child events are written between flushes.
const maxRelayBatch = 64

// delegate runs children (of parent; nil for the root run) in parallel and settles t when
// every one finished.
func (sw *swarm) delegate(t *toolRun, children []scenarios.SimChild, parent *childRun) {
	rn := sw.rn
	ctx := rn.ctx
	if rn.faults.has("child-not-cancelled") {
		ctx = context.WithoutCancel(ctx)
	}
	var wg sync.WaitGroup
	for _, sc := range children {
		c := &childRun{runKey: sc.Name, path: sc.Path, parentRunID: rn.id, chain: []string{rn.id}}
		if parent != nil {
			c.parentRunID, c.chain = parent.runKey, parent.chain
		}
		c.chain = append(slices.Clip(c.chain), c.runKey)
		c.depth = len(c.chain) - 1
		wg.Go(func() { sw.runChild(ctx, c, rn.s.toolTime(sc.DelayMs)) })
	}
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-rn.ctx.Done():
		if rn.faults.has("child-not-cancelled") {
			// The fault: the run ends while its children play on, unheard.
			sw.abandonOnce.Do(func() { close(sw.abandon) })
			break
		}
		<-all
	}
	t.Status, t.Result = scenarios.OutcomeSuccess, fmt.Sprintf("%d child agents finished", len(children))
	if d, err := simDirectiveOf(t.Input); err == nil && d.Result != "" {
		t.Result = d.Result
	}
	if rn.ctx.Err() != nil {
		t.Status, t.Result = scenarios.OutcomeCancelled, "cancelled"
	}
}

// runChild plays one child agent: after its delay, its start, its turns, then done or error.
func (sw *swarm) runChild(ctx context.Context, c *childRun, delay time.Duration) {
	if !sleep(ctx, delay) || ctx.Err() != nil {
		return // never started: nothing to report
	}
	rn := sw.rn
	c.started = time.Now()
	sw.send(func(em *composeEmitter) { em.childStart(c) })
	// The directive names the child too: a gateway may drop ChildHeader.
	input, _ := scenarios.WithChild(rn.input, c.path)
	msgs := []protocol.Message{{Role: "user", Text: input}}
	for turn := 0; ; turn++ {
		if turn >= rn.s.opts.MaxTurns {
			msg := fmt.Sprintf("child still calling tools after %d turns", rn.s.opts.MaxTurns)
			sw.send(func(em *composeEmitter) { _ = em.w.ChildError(c.runKey, msg) })
			return
		}
		text, calls, err := sw.childTurn(ctx, c, msgs)
		if err != nil {
			msg := errorMessage(err)
			if ctx.Err() != nil {
				msg = "cancelled"
			}
			sw.send(func(em *composeEmitter) { _ = em.w.ChildError(c.runKey, msg) })
			return
		}
		if len(calls) == 0 {
			sw.send(func(em *composeEmitter) { em.childDone(c) })
			return
		}
		c.toolBatches++
		sw.childTools(ctx, c, calls)
		if ctx.Err() != nil {
			sw.send(func(em *composeEmitter) { _ = em.w.ChildError(c.runKey, "cancelled") })
			return
		}
		msgs = appendToolTurn(msgs, text, calls)
	}
}

func (sw *swarm) childTools(ctx context.Context, c *childRun, calls []*toolRun) {
	for _, t := range calls {
		sw.send(func(em *composeEmitter) { _ = em.w.ChildToolStart(c.runKey, t.Name, t.input()) })
	}
	var wg sync.WaitGroup
	for _, t := range calls {
		wg.Go(func() {
			sw.settle(ctx, t, c)
			sw.send(func(em *composeEmitter) {
				_ = em.w.ChildToolEnd(c.runKey, t.Name, t.Status != scenarios.OutcomeSuccess, t.Result)
			})
		})
	}
	wg.Wait()
}

// settle runs t, a tool call of parent (nil: of the root run), or the children it delegates to.
func (sw *swarm) settle(ctx context.Context, t *toolRun, parent *childRun) {
	rn := sw.rn
	var children []scenarios.SimChild
	if parent != nil || rn.dep.allowsTool(t.Name) { // runTool answers a tool the deployment does not enable
		children = delegation(t)
	}
	switch {
	case children == nil:
		rn.s.runTool(ctx, rn.dep, t)
	case parent != nil && parent.depth >= scenarios.MaxSwarmDepth:
		// No script nests deeper: a provider that plays a child the wrong script (its run's,
		// say) must not make the runtime fan out without end.
		t.Status, t.Result = scenarios.OutcomeError, fmt.Sprintf("delegation refused: child %s is at depth %d, the most a swarm nests", parent.path, parent.depth)
	default:
		sw.delegate(t, children, parent)
	}
}

// childTurn requests one of a child's provider turns, relays its text as deltas and returns its
// text and tool calls.
func (sw *swarm) childTurn(ctx context.Context, c *childRun, msgs []protocol.Message) (string, []*toolRun, error) {
	header := sw.rn.header.Clone()
	if header == nil {
		header = make(http.Header)
	}
	header.Set(scenarios.ChildHeader, c.path)
	var text strings.Builder
	calls, err := sw.rn.providerTurn(ctx, &protocol.ModelRequest{Messages: msgs, Header: header}, turnSink{
		text: func(piece string) {
			if piece != "" {
				text.WriteString(piece)
				sw.send(func(em *composeEmitter) { em.childDelta(c, piece) })
			}
		},
		usage: &c.usage,
	})
	if err != nil {
		return "", nil, fmt.Errorf("child %s: %w", c.runKey, err)
	}
	return text.String(), calls, nil
}

// agentWallet is a child's made-up, stable wallet address.
func agentWallet(runKey string) string {
	sum := sha256.Sum256([]byte(runKey))
	return "0x" + hex.EncodeToString(sum[:20])
}

// The compose emitter streams children; its faults break one swarm rule each.

func (e *composeEmitter) childStart(c *childRun) {
	e.endThinking()
	chain := c.chain
	if e.rn.faults.has("child-bad-chain") {
		chain = slices.Clone(chain)
		slices.Reverse(chain)
	}
	_ = e.w.ChildStart(compose.ChildStart{
		RootRunID: e.rn.id, ParentRunID: c.parentRunID, SubID: c.runKey, Depth: c.depth,
		AgentWallet: agentWallet(c.runKey), RunKey: c.runKey, RunKeyChain: chain,
	})
}

func (e *composeEmitter) childDelta(c *childRun, text string) {
	if e.rn.faults.has("child-wrong-text") && !slices.Contains(e.mangled, c.runKey) {
		e.mangled = append(e.mangled, c.runKey)
		text += "~"
	}
	_ = e.w.ChildDelta(c.runKey, text)
}

func (e *composeEmitter) childDone(c *childRun) {
	f := e.rn.faults
	if e.rn.once("child-no-done") {
		return
	}
	frame := compose.ChildDone{
		RunKey: c.runKey, ToolBatches: c.toolBatches, StopReason: compose.StopReasonCompleted,
		Usage:  compose.ChildUsage{InputTokens: c.usage.InputTokens, OutputTokens: c.usage.OutputTokens, TotalTokens: c.usage.InputTokens + c.usage.OutputTokens},
		WallMs: time.Since(c.started).Milliseconds(),
	}
	if f.has("done-before-children") {
		// Hold the latest child's done back until after the parent's done (finish).
		if e.heldChildDone != nil {
			_ = e.w.ChildDone(*e.heldChildDone)
		}
		e.heldChildDone = &frame
		return
	}
	_ = e.w.ChildDone(frame)
	if e.rn.once("child-delta-after-done") {
		_ = e.w.ChildDelta(c.runKey, " (late)")
	}
}
