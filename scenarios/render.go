package scenarios

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Defaults for messages the provider sends when a scenario does not script them.
const (
	defaultMidStreamMessage = "scripted mid-stream provider error"
	inputTokensBase         = 20
	inputTokensPerTurn      = 10
)

func httpErrorMessage(status int) string {
	switch status {
	case 429:
		return "rate limit exceeded (scripted HTTP 429)"
	case 503:
		return "service overloaded (scripted HTTP 503)"
	default:
		return fmt.Sprintf("internal server error (scripted HTTP %d)", status)
	}
}

// rng returns the random stream for one (seed, purpose, indexes) tuple.
func rng(seed uint64, purpose string, indexes ...int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	for _, i := range indexes {
		h.Write([]byte{'/'})
		h.Write(strconv.AppendInt(nil, int64(i), 10))
	}
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// toolCallID is the stable provider id of tool call index of turn.
func toolCallID(seed uint64, ns string, turn, index int) string {
	r := rng(seed, ns+"tool-id", turn, index)
	return fmt.Sprintf("call_%016x%08x", r.Uint64(), r.Uint32())
}

// segment is a run of tokens of one kind (and tool) in one string; steps slice it, so a turn
// costs a few allocations, not a few per token.
type segment struct {
	kind StepKind
	tool int
	text string
	cuts []int // end offset of each token
}

// Render resolves the scenario for seed into a Script, never panicking (docs/SCENARIOS.md, "How
// a scenario renders").
func (s *Scenario) Render(seed uint64) *Script {
	return s.RenderReusing(seed, nil)
}

// RenderReusing is Render into the step arrays of prev, a Script the caller no longer uses (nil:
// allocate), so a caller that keeps only Expected leaves no step per token as garbage. The
// result may be prev itself, overwritten: the caller must not hold prev's Turns or Steps slices
// (strings taken from them stay valid).
func (s *Scenario) RenderReusing(seed uint64, prev *Script) *Script {
	script := cmp.Or(prev, new(Script))
	var spare [][]Step
	for i := range script.Turns {
		if steps := script.Turns[i].Steps; cap(steps) > 0 {
			clear(steps[:cap(steps)]) // drop the old texts, so they can be collected
			spare = append(spare, steps[:0])
		}
	}
	*script = Script{Scenario: s.Name, Seed: seed, Client: s.Client, Turns: script.Turns[:0]}
	for ti, turn := range s.Turns {
		if f := s.Faults.HTTPError; f != nil && f.Turn == ti {
			script.Turns = append(script.Turns, ScriptTurn{
				HTTPStatus:     f.Status,
				ErrorAfterStep: -1,
				ErrorMessage:   httpErrorMessage(f.Status),
				StallAfterStep: -1,
				InputTokens:    inputTokensBase + inputTokensPerTurn*ti,
			})
			break
		}
		var reuse []Step
		if len(spare) > 0 {
			reuse, spare = spare[0], spare[1:]
		}
		st := s.renderTurnIn(seed, "", strconv.Itoa(ti), ti, turn, reuse)
		script.Turns = append(script.Turns, st)
		if st.ErrorAfterStep >= 0 {
			break
		}
	}
	script.Plan = s.scriptPlan(seed, script)
	return script
}

// renderTurnIn renders a turn of the root conversation (ns "") or of a swarm child (see
// renderChild), into reuse when it is large enough; path prefixes its children's paths.
func (s *Scenario) renderTurnIn(seed uint64, ns, path string, ti int, turn Turn, reuse []Step) ScriptTurn {
	st := ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1, InputTokens: inputTokensBase + inputTokensPerTurn*ti}

	segments := make([]segment, 0, 2+len(turn.ToolCalls))
	text, cuts := textCuts(turn.Thinking, rng(seed, ns+"thinking", ti))
	segments = append(segments, segment{kind: StepThinking, text: text, cuts: cuts})
	text, cuts = textCuts(turn.Text, rng(seed, ns+"text", ti))
	segments = append(segments, segment{kind: StepText, text: text, cuts: cuts})
	for ci, tc := range turn.ToolCalls {
		st.ToolCalls = append(st.ToolCalls, renderToolCall(seed, ns, ti, ci, tc))
	}
	if len(turn.Swarm) > 0 {
		st.Swarm = s.renderSwarm(seed, path, turn.Swarm)
		st.ToolCalls = append(st.ToolCalls, delegateCall(seed, ns, ti, len(st.ToolCalls), st.Swarm))
	}
	for ci, call := range st.ToolCalls {
		segments = append(segments, segment{kind: StepToolArgs, tool: ci, text: call.Arguments, cuts: pieceCuts(rng(seed, ns+"tool-split", ti, ci), call.Arguments)})
	}
	perFrame := max(s.Timing.TokensPerFrame, 1)
	total := 0
	for _, seg := range segments {
		total += (len(seg.cuts) + perFrame - 1) / perFrame
	}

	if cap(reuse) >= total {
		st.Steps = reuse[:0]
	} else {
		st.Steps = make([]Step, 0, total)
	}
	timing := rng(seed, ns+"timing", ti)
	var at time.Duration
	for _, seg := range segments {
		start := 0
		for i := 0; i < len(seg.cuts); {
			step := Step{Kind: seg.kind, Tool: seg.tool}
			for ; i < len(seg.cuts) && step.Tokens < perFrame; i++ {
				if len(st.Steps) == 0 && step.Tokens == 0 { // the turn's first token
					at = s.Timing.TimeToFirstToken.Sample(timing)
				} else {
					at += s.Timing.InterToken.Sample(timing)
				}
				step.Tokens++
			}
			end := seg.cuts[i-1]
			step.Text = seg.text[start:end]
			start = end
			step.At = at
			st.Steps = append(st.Steps, step)
		}
	}

	if f := s.Faults.Stall; f != nil && f.Turn == ti && len(st.Steps) > 0 {
		st.StallAfterStep = stepWithToken(st.Steps, f.AfterTokens)
		st.StallFor = f.Duration
		for i := st.StallAfterStep + 1; i < len(st.Steps); i++ {
			st.Steps[i].At += f.Duration
		}
	}
	if f := s.Faults.MidStreamError; f != nil && f.Turn == ti {
		st.ErrorMessage = cmp.Or(f.Message, defaultMidStreamMessage)
		if len(st.Steps) == 0 {
			st.ErrorAfterStep = 0 // len(Steps): the error is the whole stream
		} else {
			st.ErrorAfterStep = stepWithToken(st.Steps, f.AfterTokens)
			st.Steps = st.Steps[:st.ErrorAfterStep+1]
		}
		if st.StallAfterStep >= len(st.Steps) {
			st.StallAfterStep, st.StallFor = -1, 0
		}
		// Keep only the tool calls whose arguments started streaming before the error.
		used := 0
		for _, step := range st.Steps {
			if step.Kind == StepToolArgs {
				used = max(used, step.Tool+1)
			}
		}
		st.ToolCalls = st.ToolCalls[:used]
	}
	for _, step := range st.Steps {
		st.OutputTokens += step.Tokens
	}
	return st
}

// stepWithToken returns the index of the step that carries the n-th token (else the last).
func stepWithToken(steps []Step, n int) int {
	seen := 0
	for i, s := range steps {
		seen += s.Tokens
		if seen >= n {
			return i
		}
	}
	return len(steps) - 1
}

func renderToolCall(seed uint64, ns string, ti, ci int, tc ToolCall) ScriptToolCall {
	call := ScriptToolCall{
		ID:       toolCallID(seed, ns, ti, ci),
		Name:     tc.Name,
		Duration: tc.Duration.Sample(rng(seed, ns+"tool-duration", ti, ci)),
		Outcome:  cmp.Or(tc.Outcome, OutcomeSuccess),
		Result:   tc.Result,
	}
	if call.Result == "" {
		r := rng(seed, ns+"tool-result", ti, ci)
		if call.Outcome == OutcomeError {
			call.Result = "error: " + generatePhrase(r, 4+r.IntN(4))
		} else {
			call.Result = generatePhrase(r, 8+r.IntN(16))
		}
	}
	args := make(map[string]any, len(tc.Arguments)+1)
	maps.Copy(args, tc.Arguments)
	if len(tc.Arguments) == 0 {
		r := rng(seed, ns+"tool-args", ti, ci)
		args["query"] = generatePhrase(r, 2+r.IntN(5))
	}
	call.Pause, call.TimesOut = tc.Pause, tc.TimesOut
	if tc.TimesOut {
		call.Outcome, call.Result = OutcomeError, ExecutionTimeoutResult
	}
	addComposeDirective(seed, ti, ci, tc, &call, args)
	args["_sim"] = SimDirective{DurationMs: call.Duration.Milliseconds(), Outcome: call.Outcome, Result: call.Result, Pause: tc.Pause, TimesOut: tc.TimesOut}
	call.Arguments = encodeArguments(args)
	return call
}

// encodeArguments is compact JSON with sorted keys and without HTML escaping; a value JSON
// cannot represent (Validate rejects those) becomes an "_error" member instead of a panic.
func encodeArguments(args map[string]any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprintf(`{"_error":%q}`, err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Expected derives the ground truth from the script: per turn the thinking and text streamed
// and the tool calls completed. A turn failed by an HTTP error contributes nothing; one failed
// mid-stream what was streamed before the error, without tool calls, not Final.
func (s *Script) Expected() Expected {
	e := Expected{Scenario: s.Scenario, Seed: s.Seed, FailedTurn: -1, Client: s.Client}
	for i, st := range s.Turns {
		if st.HTTPStatus != 0 {
			e.ProviderError = st.ErrorMessage
			e.ProviderStatus = st.HTTPStatus
			e.FailedTurn = i
			break
		}
		et := ExpectedTurn{Thinking: stepsText(st.Steps, StepThinking), Text: stepsText(st.Steps, StepText)}
		if st.ErrorAfterStep >= 0 {
			e.Turns = append(e.Turns, et)
			e.ProviderError = st.ErrorMessage
			e.FailedTurn = i
			break
		}
		if len(st.ToolCalls) > 0 {
			et.ToolCalls = append([]ScriptToolCall(nil), st.ToolCalls...)
		}
		et.Final = i == len(s.Turns)-1 && len(st.ToolCalls) == 0
		e.Turns = append(e.Turns, et)
		e.Children = appendExpectedChildren(e.Children, st.Swarm, nil)
		if e.endsByTool(st.ToolCalls) {
			break
		}
	}
	if p := s.Plan; p != nil && e.ProviderError == "" {
		e.Plan = p
		if p.EndsInError() && p.Turn < len(e.Turns) { // a plan that ends the run in error cuts the ground truth
			e.Turns = e.Turns[:p.Turn+1]
			e.Turns[p.Turn].Final = false
		}
	}
	return e
}

// stepsText concatenates the text of the steps of kind, sized first: an open stream holds its
// expected text until the session ends, and a builder grown by appending keeps up to a quarter
// more than the text.
func stepsText(steps []Step, kind StepKind) string {
	n := 0
	for _, step := range steps {
		if step.Kind == kind {
			n += len(step.Text)
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, step := range steps {
		if step.Kind == kind {
			b.WriteString(step.Text)
		}
	}
	return b.String()
}

// EstimatedDuration is the scripted wall time of the conversation, without overheads.
func (s *Script) EstimatedDuration() time.Duration {
	var total time.Duration
	for i := range s.Turns {
		total += s.Turns[i].Length()
	}
	return total
}

// Length is how long the turn keeps the conversation busy: its last step, then its longest tool.
func (t *ScriptTurn) Length() time.Duration {
	var d, longest time.Duration
	if n := len(t.Steps); n > 0 {
		d = t.Steps[n-1].At
	}
	for _, c := range t.ToolCalls {
		longest = max(longest, c.Duration)
	}
	return d + longest
}
