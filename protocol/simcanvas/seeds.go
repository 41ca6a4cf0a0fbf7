package simcanvas

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

// The canvas side of the Sim seed rules (docs/PROTOCOLS.md), and the cancel request.

var (
	_ protocol.Stopper      = (*Client)(nil)
	_ protocol.StopObserver = (*Checker)(nil)
)

// ExecutionIDHeader is the execute response's header naming the execution (streambench's).
const ExecutionIDHeader = "X-Execution-Id"

// DefaultCancelPath is the cancel request's path template ({execution}: ExecutionIDHeader's).
const DefaultCancelPath = "/api/workflows/{workflow}/executions/{execution}/cancel"

// NewStopRequest builds the user cancel of resp's execution: POST {cancelPath} with body {}.
func (c *Client) NewStopRequest(ctx context.Context, baseURL string, s *protocol.Session, resp *http.Response) (*http.Request, error) {
	return protocol.NewRunPost(ctx, "sim-canvas: cancel", s, resp, ExecutionIDHeader, baseURL, c.cancelPath, []byte("{}"), "workflow", "execution")
}

// StopSent records the cancel: the execution must end cancelled (or completed), never timed out.
func (c *Checker) StopSent() { c.stopSent = true }

// thinkingSeeds applies R-thinking-capability and R-thinking-cap to a stream:thinking text.
func (c *Checker) thinkingSeeds(text string) {
	c.thinkingUnits += simchat.UTF16Len(text)
	switch {
	case c.noModelThinking:
		c.v.Add(protocol.RThinkingCapability, "expected no stream:thinking: the workflow's model has no thinking capability, saw %s", protocol.Quote(text, 60))
	case c.thinkingUnits > simchat.ThinkingCapUnits:
		c.v.Add(protocol.RThinkingCap, "expected at most %d UTF-16 code units of thinking per execution, saw %d", simchat.ThinkingCapUnits, c.thinkingUnits)
	}
}

// completedSeeds applies R-paused and R-final-output to a completed execution (or block).
func (c *Checker) completedSeeds(p *payload, terminal bool) {
	if c.s.NoGroundTruth {
		// The target's run is not the script's: whether it pauses is its own, but a run that
		// says it paused has settled every tool.
		if terminal && p.Success != nil && *p.Success && p.Status == simchat.StatusPaused {
			c.tracker.OpenAtPause()
		}
		return
	}
	exp := &c.s.Expected
	success := p.Success != nil && *p.Success
	if terminal {
		switch {
		case exp.Paused && !c.stopSent && (!success || p.Status != simchat.StatusPaused):
			c.v.Add(protocol.RPaused, "expected the execution to pause for human input: execution:completed with success true and status %q, saw success %t, status %q", simchat.StatusPaused, success, p.Status)
		case !exp.Paused && p.Status == simchat.StatusPaused:
			c.v.Add(protocol.RPaused, "expected a completed execution, saw status %q though the script never pauses", p.Status)
		}
		if exp.Paused {
			c.tracker.OpenAtPause()
		}
	}
	// A PII-redacting workflow's output is R-redact-output's.
	if (success || !terminal) && exp.ProviderError == "" && !c.redacted {
		where := TypeBlockCompleted
		if terminal {
			where = TypeExecutionCompleted
		}
		simchat.JudgeFinalOutput(&c.v, where, p.Output, exp.FinalText())
	}
}

// terminalSeeds judges R-cancel-not-timeout, reporting whether it decided the terminal.
func (c *Checker) terminalSeeds(typ, msg string) bool {
	exp := c.s.Expected
	if c.s.NoGroundTruth {
		exp.ExecutionTimeout = false // only the client's own cancel is known
	}
	switch {
	case typ == TypeExecutionError && c.stopSent && simchat.SaysTimedOut(msg):
		c.v.Add(protocol.RCancelNotTimeout, "the client cancelled the execution: expected execution:cancelled, saw execution:error %s", protocol.Quote(msg, 80))
		return true
	case exp.ExecutionTimeout && !c.stopSent && typ == TypeExecutionCancelled:
		c.v.Add(protocol.RCancelNotTimeout, "expected the execution timeout to fail the run with execution:error, saw execution:cancelled (no cancel was sent)")
		c.timeoutAsCancel = true
		return true
	case exp.ExecutionTimeout && !c.stopSent && typ == TypeExecutionError && !simchat.SaysTimedOut(msg):
		c.v.Add(protocol.RCancelNotTimeout, "expected the execution timeout's execution:error (a message saying it timed out), saw %s", protocol.Quote(msg, 80))
		return true
	}
	return false
}

// ExecutionPaused writes execution:completed of a run paused for human input (R-paused).
func (w *Writer) ExecutionPaused(output any, duration time.Duration) error {
	out, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("simcanvas: encode paused output: %w", err)
	}
	b := w.begin(TypeExecutionCompleted)
	b = append(b, `{"success":true,"status":"paused","output":`...)
	b = append(b, out...)
	b = appendDuration(b, duration)
	return w.end(b)
}
