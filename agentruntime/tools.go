package agentruntime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// toolRun is one tool call of a turn, from the model's first piece until the tool settles.
type toolRun struct {
	Index int
	ID    string
	Name  string
	Args  string         // the JSON arguments text as the model streamed it.
	Input map[string]any // Args parsed (nil when Args is not a JSON object).

	Status scenarios.Outcome
	Result string
	Pause  bool                    // a human-input tool settled: the run pauses after this turn.
	expire context.CancelCauseFunc // fires the run's execution timeout (pause.go).
}

// input is t's arguments as JSON: as streamed, or as a JSON string when they are not JSON.
func (t *toolRun) input() json.RawMessage {
	if json.Valid([]byte(t.Args)) {
		return json.RawMessage(t.Args)
	}
	b, _ := json.Marshal(t.Args)
	return b
}

// simDirectiveOf reads the "_sim" member that tells a simulated tool how to behave.
func simDirectiveOf(input map[string]any) (scenarios.SimDirective, error) {
	d, err := decodeMember[scenarios.SimDirective](input, "_sim")
	if err != nil {
		return d, fmt.Errorf("tool arguments: _sim: %w", err)
	}
	d.Outcome = cmp.Or(d.Outcome, scenarios.OutcomeSuccess)
	if d.Outcome != scenarios.OutcomeSuccess && d.Outcome != scenarios.OutcomeError {
		return d, fmt.Errorf("tool arguments: _sim.outcome %q is not success or error", d.Outcome)
	}
	if d.DurationMs < 0 {
		return d, fmt.Errorf("tool arguments: _sim.ms %d is negative", d.DurationMs)
	}
	return d, nil
}

// decodeMember decodes input[key], a JSON object's member decoded as any, into a T (zero: none).
func decodeMember[T any](input map[string]any, key string) (v T, err error) {
	raw, ok := input[key]
	if !ok {
		return v, nil
	}
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	return v, err
}

// runTool simulates t: it sleeps for its duration, then settles t as scripted, or as cut.
func (s *Server) runTool(ctx context.Context, dep *Deployment, t *toolRun) {
	s.metrics.toolsRunning.Inc()
	defer s.metrics.toolsRunning.Dec()
	defer func() {
		s.metrics.toolsSettled.WithLabelValues(string(t.Status)).Inc()
		if t.Status == scenarios.OutcomeCancelled {
			s.metrics.toolsCancelled.Inc()
		}
	}()
	if !dep.allowsTool(t.Name) {
		t.Status, t.Result = scenarios.OutcomeError, fmt.Sprintf("tool %q is not enabled for deployment %q", t.Name, dep.Slug)
		return
	}
	if t.Input == nil {
		if err := json.Unmarshal([]byte(t.Args), &t.Input); err != nil {
			t.Status, t.Result = scenarios.OutcomeError, fmt.Sprintf("tool %q: arguments are not a JSON object: %v", t.Name, err)
			return
		}
	}
	d, err := simDirectiveOf(t.Input)
	if err != nil {
		t.Status, t.Result = scenarios.OutcomeError, fmt.Sprintf("tool %q: %v", t.Name, err)
		return
	}
	if d.TimesOut {
		s.runUntilTimeout(ctx, t, d)
		return
	}
	if !sleep(ctx, s.toolTime(d.DurationMs)) {
		s.settleCut(ctx, t)
		return
	}
	t.Status, t.Result, t.Pause = d.Outcome, cmp.Or(d.Result, fmt.Sprintf("%s finished with %s", t.Name, d.Outcome)), d.Pause
}

func (s *Server) toolTime(ms int64) time.Duration {
	return time.Duration(float64(time.Duration(ms)*time.Millisecond) * s.opts.ToolTimeScale)
}

// sleep waits d unless ctx ends first, and reports whether it did not.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// turnCalls collects a model turn's tool calls from its stream, by index.
type turnCalls struct {
	calls []*toolRun
	args  []strings.Builder
}

func (tc *turnCalls) start(ev *protocol.ModelEvent) {
	for len(tc.calls) <= ev.ToolIndex {
		tc.calls = append(tc.calls, nil)
		tc.args = append(tc.args, strings.Builder{})
	}
	tc.calls[ev.ToolIndex] = &toolRun{Index: ev.ToolIndex, ID: ev.ToolID, Name: ev.ToolName}
}

func (tc *turnCalls) arg(ev *protocol.ModelEvent) (*toolRun, error) {
	if ev.ToolIndex >= len(tc.calls) || tc.calls[ev.ToolIndex] == nil {
		return nil, fmt.Errorf("provider stream: arguments for tool index %d before its start", ev.ToolIndex)
	}
	tc.args[ev.ToolIndex].WriteString(ev.Text)
	return tc.calls[ev.ToolIndex], nil
}

// done returns the calls in index order with their arguments; an index never started is an error.
func (tc *turnCalls) done() ([]*toolRun, error) {
	for i, c := range tc.calls {
		if c == nil {
			return nil, fmt.Errorf("provider stream: tool index %d never started", i)
		}
		c.Args = tc.args[i].String()
	}
	return tc.calls, nil
}
