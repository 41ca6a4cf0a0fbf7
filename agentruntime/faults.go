package agentruntime

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// Faults are the runtime's fault switches, each breaking the rule named beside it on purpose, so
// the load generator's checkers can be shown to catch it (FaultSwitches says what each does).
// The zero value is a correct runtime.
type Faults struct {
	NoReset                   bool          // R-converge
	ResetInFinal              bool          // R-reset-scope
	LeakThinking              bool          // R-no-thinking-in-answer
	IgnoreHeader              bool          // R-legacy-settled
	IgnorePolicy              bool          // R-thinking-gate, R-tool-gate
	ExposeToolArgs            bool          // R-tool-redaction
	UnbalancedTool            bool          // R-tool-lifecycle
	DoubleTerminal            bool          // R-terminal
	MissingDone               bool          // R-terminal
	NoCancel                  bool          // R-abort
	LeakGoroutine             bool          // R-abort and the leak check: one goroutine blocked per aborted request, until Shutdown
	RedactLive                bool          // R-redact-live
	UnredactedOutput          bool          // R-redact-output
	ReplayLiveOnly            bool          // R-reconnect-live-only
	DropReplay                bool          // R-reconnect-replay
	PauseNotReported          bool          // R-paused
	PreambleInOutput          bool          // R-final-output
	ThinkingWithoutCapability bool          // R-thinking-capability
	TimeoutAsCancel           bool          // R-cancel-not-timeout
	CancelAsTimeout           bool          // R-cancel-not-timeout
	LiveSettledTools          bool          // R-settled-tools
	UncappedThinking          bool          // R-thinking-cap
	ApprovalBeforeProposal    bool          // R-plan-order
	PlanVersionStuck          bool          // R-plan-version
	PlanRejectDone            bool          // R-plan-outcome
	TaskBeforeApproval        bool          // R-plan-tasks
	ActionNoStatus            bool          // R-compose-action
	ConclaveVersionReset      bool          // R-conclave-version
	TraceBadSource            bool          // R-trace-source
	TimingOutOfOrder          bool          // R-timing-order
	ChildNoDone               bool          // R-swarm-close
	ChildBadChain             bool          // R-swarm-chain
	ChildDeltaAfterDone       bool          // R-swarm-order
	DoneBeforeChildren        bool          // R-swarm-parent-done
	ChildWrongText            bool          // R-swarm-content
	ChildNotCancelled         bool          // R-swarm-cancel, seen at the mock
	AGUINoRunStarted          bool          // R-agui-run
	AGUIOpenMessage           bool          // R-agui-message
	AGUIOpenReasoning         bool          // R-agui-reasoning
	AGUIOpenTool              bool          // R-agui-tool
	AGUIOpenStep              bool          // R-agui-step
	AGUIBadStateDelta         bool          // R-agui-state
	LangGraphBadID            bool          // R-langgraph-event
	LangGraphNoMetadata       bool          // R-langgraph-lifecycle
	LangGraphStateMismatch    bool          // R-langgraph-message
	LangGraphBadError         bool          // R-langgraph-error
	LangGraphCancelOnContinue bool          // R-abort
	SlowFirstChunk            time.Duration // delays each stream's first answer chunk: no rule, a latency regression
}

// FaultInfo documents one fault switch.
type FaultInfo struct {
	Name  string                // the --fault value ("slow-first-chunk" takes "=DURATION").
	Rules []protocol.Rule       // the rule IDs the fault breaks (none for a pure latency fault).
	Help  string                // says in one line what the fault does.
	field func(f *Faults) *bool // the switch; nil for slow-first-chunk, which takes a value.
}

// FaultSwitches lists every fault switch in --help order.
func FaultSwitches() []FaultInfo {
	return []FaultInfo{
		{"no-reset", []protocol.Rule{protocol.RConverge}, "never send chunk_reset after an intermediate turn", func(f *Faults) *bool { return &f.NoReset }},
		{"reset-in-final", []protocol.Rule{protocol.RResetScope}, "send chunk_reset in the final turn (then re-send its text)", func(f *Faults) *bool { return &f.ResetInFinal }},
		{"leak-thinking", []protocol.Rule{protocol.RNoThinkingAnswer}, "send thinking text as answer chunks", func(f *Faults) *bool { return &f.LeakThinking }},
		{"ignore-header", []protocol.Rule{simchat.RLegacySettled}, "stream live, resettable text to legacy (no-header) clients", func(f *Faults) *bool { return &f.IgnoreHeader }},
		{"ignore-policy", []protocol.Rule{simchat.RThinkingGate, simchat.RToolGate}, "send thinking and tool frames whatever the deployment policy", func(f *Faults) *bool { return &f.IgnorePolicy }},
		{"expose-tool-args", []protocol.Rule{simchat.RToolRedaction}, "put tool arguments and results in public chat frames", func(f *Faults) *bool { return &f.ExposeToolArgs }},
		{"unbalanced-tool", []protocol.Rule{protocol.RToolLifecycle}, "drop the first tool end frame of each stream", func(f *Faults) *bool { return &f.UnbalancedTool }},
		{"double-terminal", []protocol.Rule{protocol.RTerminal}, "send two terminals (compose: stopped then done)", func(f *Faults) *bool { return &f.DoubleTerminal }},
		{"missing-done", []protocol.Rule{protocol.RTerminal}, "omit the [DONE] end marker", func(f *Faults) *bool { return &f.MissingDone }},
		{"no-cancel", []protocol.Rule{protocol.RAbort}, "ignore client disconnects: read the provider stream to the end, finish tools", func(f *Faults) *bool { return &f.NoCancel }},
		{"leak-goroutine", []protocol.Rule{protocol.RAbort}, "leave one goroutine blocked per aborted request", func(f *Faults) *bool { return &f.LeakGoroutine }},
		{"redact-live", []protocol.Rule{simcanvas.RRedactLive}, "forward live stream frames for a PII-redacted canvas block", func(f *Faults) *bool { return &f.RedactLive }},
		{"unredacted-output", []protocol.Rule{simcanvas.RRedactOutput}, "send a PII-redacted canvas block's output unredacted", func(f *Faults) *bool { return &f.UnredactedOutput }},
		{"replay-live-only", []protocol.Rule{simcanvas.RReconnectLiveOnly}, "replay live-only canvas frames (chunks, resets, thinking, tools) on a reconnect", func(f *Faults) *bool { return &f.ReplayLiveOnly }},
		{"drop-replay", []protocol.Rule{simcanvas.RReconnectReplay}, "serve a canvas reconnect without its buffered events", func(f *Faults) *bool { return &f.DropReplay }},
		{"pause-not-reported", []protocol.Rule{protocol.RPaused}, "end a paused run with a plain final (no status paused)", func(f *Faults) *bool { return &f.PauseNotReported }},
		{"preamble-in-output", []protocol.Rule{protocol.RFinalOutput}, "put the intermediate turns' preambles in the final output", func(f *Faults) *bool { return &f.PreambleInOutput }},
		{"nothink-thinking", []protocol.Rule{protocol.RThinkingCapability}, "forward thinking from models without thinking", func(f *Faults) *bool { return &f.ThinkingWithoutCapability }},
		{"timeout-as-cancel", []protocol.Rule{protocol.RCancelNotTimeout}, "report an execution timeout as a cancel", func(f *Faults) *bool { return &f.TimeoutAsCancel }},
		{"cancel-as-timeout", []protocol.Rule{protocol.RCancelNotTimeout}, "report a canvas user cancel as the execution timeout", func(f *Faults) *bool { return &f.CancelAsTimeout }},
		{"uncapped-thinking", []protocol.Rule{protocol.RThinkingCap}, "forward thinking past 524,288 UTF-16 code units per execution", func(f *Faults) *bool { return &f.UncappedThinking }},
		{"live-settled-tools", []protocol.Rule{simchat.RSettledTools}, "stream a liveTools: false deployment's public chat live (thinking, tools, resets)", func(f *Faults) *bool { return &f.LiveSettledTools }},
		{"approval-before-proposal", []protocol.Rule{compose.RPlanOrder}, "compose: send approval.requested before plan.proposed", func(f *Faults) *bool { return &f.ApprovalBeforeProposal }},
		{"plan-version-stuck", []protocol.Rule{compose.RPlanVersion}, "compose: propose every revised plan as version 1 again", func(f *Faults) *bool { return &f.PlanVersionStuck }},
		{"plan-reject-done", []protocol.Rule{compose.RPlanOutcome}, "compose: end a rejected (onReject: error) or undecided plan's run with done", func(f *Faults) *bool { return &f.PlanRejectDone }},
		{"task-before-approval", []protocol.Rule{compose.RPlanTasks}, "compose: send a task.heartbeat while the approval is pending", func(f *Faults) *bool { return &f.TaskBeforeApproval }},
		{"action-no-status", []protocol.Rule{compose.RAction}, "compose: omit the status of action events", func(f *Faults) *bool { return &f.ActionNoStatus }},
		{"conclave-version-reset", []protocol.Rule{compose.RConclaveVersion}, "compose: report every conclave write as version 1", func(f *Faults) *bool { return &f.ConclaveVersionReset }},
		{"trace-bad-source", []protocol.Rule{compose.RTraceSource}, "compose: send traces with the unlisted source \"runtime\"", func(f *Faults) *bool { return &f.TraceBadSource }},
		{"timing-out-of-order", []protocol.Rule{compose.RTimingOrder}, "compose: send the first_text_delta mark before model_start", func(f *Faults) *bool { return &f.TimingOutOfOrder }},
		{"child-no-done", []protocol.Rule{compose.RSwarmClose}, "drop the first swarm_child_done of each stream", func(f *Faults) *bool { return &f.ChildNoDone }},
		{"child-bad-chain", []protocol.Rule{compose.RSwarmChain}, "send each swarm child's runKeyChain reversed", func(f *Faults) *bool { return &f.ChildBadChain }},
		{"child-delta-after-done", []protocol.Rule{compose.RSwarmOrder}, "send a swarm_child_delta after the first child's done", func(f *Faults) *bool { return &f.ChildDeltaAfterDone }},
		{"done-before-children", []protocol.Rule{compose.RSwarmParentDone}, "send the last swarm_child_done after the parent's done", func(f *Faults) *bool { return &f.DoneBeforeChildren }},
		{"child-wrong-text", []protocol.Rule{compose.RSwarmContent}, "append a character to each swarm child's first delta", func(f *Faults) *bool { return &f.ChildWrongText }},
		{"child-not-cancelled", []protocol.Rule{protocol.RSwarmCancel}, "let swarm children play on when their run is aborted or stopped", func(f *Faults) *bool { return &f.ChildNotCancelled }},
		{"agui-no-run-started", []protocol.Rule{agui.RRun}, "ag-ui: omit RUN_STARTED", func(f *Faults) *bool { return &f.AGUINoRunStarted }},
		{"agui-open-message", []protocol.Rule{agui.RMessage}, "ag-ui: never end the first text message", func(f *Faults) *bool { return &f.AGUIOpenMessage }},
		{"agui-open-reasoning", []protocol.Rule{agui.RReasoning}, "ag-ui: never end the first reasoning message", func(f *Faults) *bool { return &f.AGUIOpenReasoning }},
		{"agui-open-tool", []protocol.Rule{agui.RTool}, "ag-ui: never end the first tool call (its result still comes)", func(f *Faults) *bool { return &f.AGUIOpenTool }},
		{"agui-open-step", []protocol.Rule{agui.RStep}, "ag-ui: never finish the first step", func(f *Faults) *bool { return &f.AGUIOpenStep }},
		{"agui-bad-state-delta", []protocol.Rule{agui.RState}, "ag-ui: a first STATE_DELTA that replaces a member the state lacks", func(f *Faults) *bool { return &f.AGUIBadStateDelta }},
		{"langgraph-bad-id", []protocol.Rule{langgraph.REvent}, "langgraph: send event ids that go backwards", func(f *Faults) *bool { return &f.LangGraphBadID }},
		{"langgraph-no-metadata", []protocol.Rule{langgraph.RLifecycle}, "langgraph: omit the metadata event", func(f *Faults) *bool { return &f.LangGraphNoMetadata }},
		{"langgraph-state-mismatch", []protocol.Rule{langgraph.RMessage}, "langgraph: states hold each AI message without its last text chunk", func(f *Faults) *bool { return &f.LangGraphStateMismatch }},
		{"langgraph-bad-error", []protocol.Rule{langgraph.RError}, "langgraph: send the error event as {\"detail\": …}", func(f *Faults) *bool { return &f.LangGraphBadError }},
		{"langgraph-cancel-on-continue", []protocol.Rule{protocol.RAbort}, "langgraph: cancel a run whose request said on_disconnect continue", func(f *Faults) *bool { return &f.LangGraphCancelOnContinue }},
		{"slow-first-chunk", nil, "=DURATION: delay each stream's first answer chunk (a latency regression)", nil},
	}
}

// ParseFaults builds Faults from --fault values such as "no-reset" or "slow-first-chunk=2s".
func ParseFaults(names []string) (Faults, error) {
	var f Faults
	switches := FaultSwitches()
	for _, raw := range names {
		name, arg, hasArg := strings.Cut(strings.TrimSpace(raw), "=")
		i := slices.IndexFunc(switches, func(s FaultInfo) bool { return s.Name == name })
		if i < 0 {
			valid := make([]string, len(switches))
			for i, s := range switches {
				valid[i] = s.Name
			}
			return Faults{}, fmt.Errorf("unknown fault %q (valid: %s)", raw, strings.Join(valid, ", "))
		}
		if s := switches[i]; s.field != nil {
			if hasArg {
				return Faults{}, fmt.Errorf("fault %q: %s takes no value", raw, name)
			}
			*s.field(&f) = true
			continue
		}
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return Faults{}, fmt.Errorf("fault %q: needs a positive duration, e.g. slow-first-chunk=500ms", raw)
		}
		f.SlowFirstChunk = d
	}
	return f, nil
}

// Names returns the --fault values that reproduce f, for logs and results.
func (f Faults) Names() []string {
	var out []string
	for _, s := range FaultSwitches() {
		switch {
		case s.field != nil && *s.field(&f):
			out = append(out, s.Name)
		case s.field == nil && f.SlowFirstChunk > 0:
			out = append(out, s.Name+"="+f.SlowFirstChunk.String())
		}
	}
	return out
}

// FaultHelp is the --fault help text: one line per switch with the rules it breaks.
func FaultHelp() string {
	var b strings.Builder
	for _, s := range FaultSwitches() {
		rules := make([]string, len(s.Rules))
		for i, r := range s.Rules {
			rules[i] = string(r)
		}
		r := "breaks " + strings.Join(rules, ", ")
		if len(rules) == 0 {
			r = "(no rule: latency)"
		}
		fmt.Fprintf(&b, "  %-24s %-37s %s\n", s.Name, r, s.Help)
	}
	return b.String()
}

// dropOnce reports whether fault drops this frame: the first time only, once per run.
func dropOnce(fault bool, dropped *bool) bool {
	if fault && !*dropped {
		*dropped = true
		return true
	}
	return false
}
