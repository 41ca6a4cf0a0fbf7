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

// Faults are the runtime's fault switches (FaultSwitches), each breaking the rules named beside it
// on purpose, so the load generator's checkers can be shown to catch it. The zero value is a
// correct runtime.
type Faults struct {
	on             uint64        // a bit per switch, in FaultSwitches order (faultBits)
	SlowFirstChunk time.Duration // delays each stream's first answer chunk: no rule, a latency regression
}

// FaultInfo documents one fault switch.
type FaultInfo struct {
	Name  string          // the --fault value ("slow-first-chunk" takes "=DURATION").
	Rules []protocol.Rule // the rule IDs the fault breaks (none for a pure latency fault).
	Help  string          // says in one line what the fault does.
}

// slowFirstChunk is the one switch that takes a value (Faults.SlowFirstChunk), not a bit.
const slowFirstChunk = "slow-first-chunk"

// FaultSwitches lists every fault switch in --help order.
func FaultSwitches() []FaultInfo { return slices.Clone(faultSwitches) }

var faultSwitches = []FaultInfo{
	{"no-reset", []protocol.Rule{protocol.RConverge}, "never send chunk_reset after an intermediate turn"},
	{"reset-in-final", []protocol.Rule{protocol.RResetScope}, "send chunk_reset in the final turn (then re-send its text)"},
	{"leak-thinking", []protocol.Rule{protocol.RNoThinkingAnswer}, "send thinking text as answer chunks"},
	{"ignore-header", []protocol.Rule{simchat.RLegacySettled}, "stream live, resettable text to legacy (no-header) clients"},
	{"ignore-policy", []protocol.Rule{simchat.RThinkingGate, simchat.RToolGate}, "send thinking and tool frames whatever the deployment policy"},
	{"expose-tool-args", []protocol.Rule{simchat.RToolRedaction}, "put tool arguments and results in public chat frames"},
	{"unbalanced-tool", []protocol.Rule{protocol.RToolLifecycle}, "drop the first tool end frame of each stream"},
	{"double-terminal", []protocol.Rule{protocol.RTerminal}, "send two terminals (compose: stopped then done)"},
	{"missing-done", []protocol.Rule{protocol.RTerminal}, "omit the [DONE] end marker"},
	{"no-cancel", []protocol.Rule{protocol.RAbort}, "ignore client disconnects: read the provider stream to the end, finish tools"},
	{"leak-goroutine", []protocol.Rule{protocol.RAbort}, "leave one goroutine blocked per aborted request"},
	{"redact-live", []protocol.Rule{simcanvas.RRedactLive}, "forward live stream frames for a PII-redacted canvas block"},
	{"unredacted-output", []protocol.Rule{simcanvas.RRedactOutput}, "send a PII-redacted canvas block's output unredacted"},
	{"replay-live-only", []protocol.Rule{simcanvas.RReconnectLiveOnly}, "replay live-only canvas frames (chunks, resets, thinking, tools) on a reconnect"},
	{"drop-replay", []protocol.Rule{simcanvas.RReconnectReplay}, "serve a canvas reconnect without its buffered events"},
	{"pause-not-reported", []protocol.Rule{protocol.RPaused}, "end a paused run with a plain final (no status paused)"},
	{"preamble-in-output", []protocol.Rule{protocol.RFinalOutput}, "put the intermediate turns' preambles in the final output"},
	{"nothink-thinking", []protocol.Rule{protocol.RThinkingCapability}, "forward thinking from models without thinking"},
	{"timeout-as-cancel", []protocol.Rule{protocol.RCancelNotTimeout}, "report an execution timeout as a cancel"},
	{"cancel-as-timeout", []protocol.Rule{protocol.RCancelNotTimeout}, "report a canvas user cancel as the execution timeout"},
	{"uncapped-thinking", []protocol.Rule{protocol.RThinkingCap}, "forward thinking past 524,288 UTF-16 code units per execution"},
	{"live-settled-tools", []protocol.Rule{simchat.RSettledTools}, "stream a liveTools: false deployment's public chat live (thinking, tools, resets)"},
	{"approval-before-proposal", []protocol.Rule{compose.RPlanOrder}, "compose: send approval.requested before plan.proposed"},
	{"plan-version-stuck", []protocol.Rule{compose.RPlanVersion}, "compose: propose every revised plan as version 1 again"},
	{"plan-reject-done", []protocol.Rule{compose.RPlanOutcome}, "compose: end a rejected (onReject: error) or undecided plan's run with done"},
	{"task-before-approval", []protocol.Rule{compose.RPlanTasks}, "compose: send a task.heartbeat while the approval is pending"},
	{"action-no-status", []protocol.Rule{compose.RAction}, "compose: omit the status of action events"},
	{"conclave-version-reset", []protocol.Rule{compose.RConclaveVersion}, "compose: report every conclave write as version 1"},
	{"trace-bad-source", []protocol.Rule{compose.RTraceSource}, "compose: send traces with the unlisted source \"runtime\""},
	{"timing-out-of-order", []protocol.Rule{compose.RTimingOrder}, "compose: send the first_text_delta mark before model_start"},
	{"child-no-done", []protocol.Rule{compose.RSwarmClose}, "drop the first swarm_child_done of each stream"},
	{"child-bad-chain", []protocol.Rule{compose.RSwarmChain}, "send each swarm child's runKeyChain reversed"},
	{"child-delta-after-done", []protocol.Rule{compose.RSwarmOrder}, "send a swarm_child_delta after the first child's done"},
	{"done-before-children", []protocol.Rule{compose.RSwarmParentDone}, "send the last swarm_child_done after the parent's done"},
	{"child-wrong-text", []protocol.Rule{compose.RSwarmContent}, "append a character to each swarm child's first delta"},
	{"child-not-cancelled", []protocol.Rule{protocol.RSwarmCancel}, "let swarm children play on when their run is aborted or stopped"},
	{"agui-no-run-started", []protocol.Rule{agui.RRun}, "ag-ui: omit RUN_STARTED"},
	{"agui-open-message", []protocol.Rule{agui.RMessage}, "ag-ui: never end the first text message"},
	{"agui-open-reasoning", []protocol.Rule{agui.RReasoning}, "ag-ui: never end the first reasoning message"},
	{"agui-open-tool", []protocol.Rule{agui.RTool}, "ag-ui: never end the first tool call (its result still comes)"},
	{"agui-open-step", []protocol.Rule{agui.RStep}, "ag-ui: never finish the first step"},
	{"agui-bad-state-delta", []protocol.Rule{agui.RState}, "ag-ui: a first STATE_DELTA that replaces a member the state lacks"},
	{"langgraph-bad-id", []protocol.Rule{langgraph.REvent}, "langgraph: send event ids that go backwards"},
	{"langgraph-no-metadata", []protocol.Rule{langgraph.RLifecycle}, "langgraph: omit the metadata event"},
	{"langgraph-state-mismatch", []protocol.Rule{langgraph.RMessage}, "langgraph: states hold each AI message without its last text chunk"},
	{"langgraph-bad-error", []protocol.Rule{langgraph.RError}, "langgraph: send the error event as {\"detail\": …}"},
	{"langgraph-cancel-on-continue", []protocol.Rule{protocol.RAbort}, "langgraph: cancel a run whose request said on_disconnect continue"},
	{slowFirstChunk, nil, "=DURATION: delay each stream's first answer chunk (a latency regression)"},
}

// faultBits maps each switch but slow-first-chunk to its bit in Faults.
var faultBits = func() map[string]uint64 {
	if len(faultSwitches) > 64 {
		panic("agentruntime: more fault switches than Faults has bits")
	}
	bits := make(map[string]uint64, len(faultSwitches))
	for i, s := range faultSwitches {
		if s.Name != slowFirstChunk {
			bits[s.Name] = 1 << i
		}
	}
	return bits
}()

// has reports whether the switch named name is on; a name not in FaultSwitches is a bug (panic).
func (f Faults) has(name string) bool {
	bit, ok := faultBits[name]
	if !ok {
		panic("agentruntime: no fault switch " + name)
	}
	return f.on&bit != 0
}

// ParseFaults builds Faults from --fault values such as "no-reset" or "slow-first-chunk=2s".
func ParseFaults(names []string) (Faults, error) {
	var f Faults
	for _, raw := range names {
		name, arg, hasArg := strings.Cut(strings.TrimSpace(raw), "=")
		bit, isBit := faultBits[name]
		switch {
		case isBit && hasArg:
			return Faults{}, fmt.Errorf("fault %q: %s takes no value", raw, name)
		case isBit:
			f.on |= bit
		case name != slowFirstChunk:
			valid := make([]string, len(faultSwitches))
			for i, s := range faultSwitches {
				valid[i] = s.Name
			}
			return Faults{}, fmt.Errorf("unknown fault %q (valid: %s)", raw, strings.Join(valid, ", "))
		default:
			d, err := time.ParseDuration(arg)
			if err != nil || d <= 0 {
				return Faults{}, fmt.Errorf("fault %q: needs a positive duration, e.g. slow-first-chunk=500ms", raw)
			}
			f.SlowFirstChunk = d
		}
	}
	return f, nil
}

// Names returns the --fault values that reproduce f, for logs and results.
func (f Faults) Names() []string {
	var out []string
	for _, s := range faultSwitches {
		switch {
		case s.Name == slowFirstChunk && f.SlowFirstChunk > 0:
			out = append(out, s.Name+"="+f.SlowFirstChunk.String())
		case s.Name != slowFirstChunk && f.has(s.Name):
			out = append(out, s.Name)
		}
	}
	return out
}

// FaultHelp is the --fault help text: one line per switch with the rules it breaks.
func FaultHelp() string {
	var b strings.Builder
	for _, s := range faultSwitches {
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

// once reports whether the switch named name is on and fires for the first time in rn's run
// (a fault that breaks one frame of each stream).
func (rn *run) once(name string) bool {
	if !rn.faults.has(name) || rn.fired&faultBits[name] != 0 {
		return false
	}
	rn.fired |= faultBits[name]
	return true
}
