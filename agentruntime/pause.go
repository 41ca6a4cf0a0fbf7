package agentruntime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// The Sim seeds' run endings (docs/PROTOCOLS.md): a pause for human input, an execution
// timeout, a user cancel of a canvas execution, and the final output's text.

// errExecutionTimeout is the cause of a run whose execution timeout fired (R-cancel-not-timeout).
var errExecutionTimeout = errors.New(scenarios.ExecutionTimeoutResult)

// cancelledMessage is what the timeout-as-cancel fault reports an execution timeout as.
const cancelledMessage = "Execution cancelled"

type runSeeds struct {
	thinking  simchat.ThinkingBudget // the execution's thinking budget (R-thinking-cap).
	preambles strings.Builder        // the intermediate turns' texts (for the preamble-in-output fault).
}

// finalOutputText is the final output's content: the final turn's text (R-final-output).
func (rn *run) finalOutputText(final string) string {
	if rn.faults.has("preamble-in-output") {
		return rn.seeds.preambles.String() + final
	}
	return final
}

// toolContext is the run's context for a turn's tools, which a timesOut tool expires.
func (rn *run) toolContext(calls []*toolRun) (context.Context, context.CancelCauseFunc) {
	ctx, expire := context.WithCancelCause(rn.ctx)
	for _, c := range calls {
		c.expire = expire
	}
	return ctx, expire
}

// endByTools ends the run after a turn's tools when the execution timeout fired or a
// human-input tool settled; nil means the loop goes on.
func (rn *run) endByTools(toolCtx context.Context, calls, tools []*toolRun) *runResult {
	if rn.ctx.Err() != nil {
		return nil
	}
	if errors.Is(context.Cause(toolCtx), errExecutionTimeout) {
		return &runResult{outcome: outcomeFailed, err: errExecutionTimeout, tools: tools}
	}
	for _, c := range calls {
		if c.Pause {
			return &runResult{outcome: outcomePaused, finalText: rn.finalOutputText(""), tools: tools}
		}
	}
	return nil
}

// runUntilTimeout plays a timesOut tool: after its duration the execution timeout cuts the turn.
func (s *Server) runUntilTimeout(ctx context.Context, t *toolRun, d scenarios.SimDirective) {
	if sleep(ctx, s.toolTime(d.DurationMs)) && t.expire != nil {
		t.expire(errExecutionTimeout)
	}
	s.settleCut(ctx, t)
}

// settleCut settles a tool its context ended: error for the execution timeout, else cancelled.
func (s *Server) settleCut(ctx context.Context, t *toolRun) {
	if errors.Is(context.Cause(ctx), errExecutionTimeout) {
		t.Status, t.Result = scenarios.OutcomeError, scenarios.ExecutionTimeoutResult
		return
	}
	t.Status, t.Result = scenarios.OutcomeCancelled, "cancelled"
}

// failureMessage is the error terminal's message, with the timeout-as-cancel fault applied.
func (rn *run) failureMessage(err error) string {
	if rn.faults.has("timeout-as-cancel") && errors.Is(err, errExecutionTimeout) {
		return cancelledMessage
	}
	return errorMessage(err)
}

func (e *simCanvasEmitter) output(res *runResult) canvasOutput {
	out := canvasOutput{Content: res.finalText, Model: e.rn.dep.Model, Tokens: map[string]int{
		"prompt": res.usage.InputTokens, "completion": res.usage.OutputTokens, "total": res.usage.InputTokens + res.usage.OutputTokens,
	}}
	for _, t := range res.tools {
		out.ToolCalls = append(out.ToolCalls, canvasToolCall{t.ID, t.Name, t.Args, string(t.Status), t.Result})
	}
	return out
}

const canvasExecIDPrefix = "exec_"

// handleSimCanvasCancel is the user cancel of a canvas execution: it ends at once, cancelled.
func (s *Server) handleSimCanvasCancel(w http.ResponseWriter, r *http.Request) {
	workflowID, execID := r.PathValue("id"), r.PathValue("executionId")
	if !strings.HasPrefix(execID, canvasExecIDPrefix) || !validRunID(runIDPrefix+execID[len(canvasExecIDPrefix):]) {
		s.writeError(w, http.StatusBadRequest, "execution id "+strconv.Quote(execID)+" is not an execution id of this runtime (want "+canvasExecIDPrefix+" and 20 characters A-Z2-7, as in the X-Execution-Id header)")
		return
	}
	e, ok := s.runs.get(execID)
	if !ok || e.agentID != workflowID {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no open execution %q of workflow %q (it may have finished already)", execID, workflowID))
		return
	}
	s.stopRun(w, e, `{"success":true}`)
}
