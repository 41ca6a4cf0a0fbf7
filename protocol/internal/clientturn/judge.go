package clientturn

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// Rules are a wire's names for the judgements every provider-wire checker makes alike.
type Rules struct {
	Error, Content, Stop protocol.Rule // the provider-error rule, the ground-truth rule, the stop reason's
	ErrorFrame           string        // the mid-stream error frame in details ("error event")
	Thinking             string        // the thinking text in details ("reasoning")
	// StopField names the stop reason in details; EndTurn and ToolUse are its values for a turn
	// ending in text and in tool calls.
	StopField, EndTurn, ToolUse string
}

// Judge is the part of a provider-wire checker the same on every wire, which embeds it: the
// session, what its turn must produce, the script's text followed piece by piece, the token
// counts, the text kept (protocol.AnswerKeeper, OutputKeeper). Not safe for concurrent use.
type Judge struct {
	S   *protocol.Session
	Exp Expectation // S's current turn's

	rules       *Rules
	unscripted  bool // an error frame the script does not call for came
	after       bool // a frame after the stream's end was reported
	text, think jsonwire.Text
	tokens      scenarios.TokenCounter
	keep        bool // a conversation turn: answer is kept for the next turn's history
	answer      []byte
	keepOutput  bool // without ground truth: output keeps the text for a token count
	output      []byte
	outputTotal int64 // bytes of output text seen
}

// NewJudge returns the judge of s's current turn under the wire's rules (kept, not modified).
func NewJudge(s *protocol.Session, rules *Rules) Judge {
	j := Judge{S: s, Exp: Expect(s), rules: rules}
	j.keep = s.Endpoint != nil && s.Endpoint.Conversation
	j.keepOutput = s.NoGroundTruth
	if t := j.Exp.Turn; t != nil {
		j.text, j.think = jsonwire.NewText(t.Text), jsonwire.NewText(t.Thinking)
	}
	return j
}

// Thinking judges a piece of thinking against the script (FrameOther when empty).
func (j *Judge) Thinking(v *protocol.Violations, p []byte) protocol.Observation {
	if len(p) == 0 {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if j.Exp.Turn != nil {
		jsonwire.Follow(&j.think, v, j.rules.Content, j.rules.Thinking, p, 40)
	}
	j.keepOutputText(p) // p is the frame's buffer: copied
	return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(p), Tokens: j.tokens.ThinkingBytes(p)}
}

// Text judges a piece of answer text against the script (FrameOther when empty).
func (j *Judge) Text(v *protocol.Violations, p []byte) protocol.Observation {
	if len(p) == 0 {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if j.Exp.Turn != nil {
		jsonwire.Follow(&j.text, v, j.rules.Content, "text", p, 40)
	}
	if j.keep {
		j.answer = appendBounded(j.answer, p, protocol.MaxAnswerText) // p is the frame's buffer: copied
	}
	j.keepOutputText(p)
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(p), Tokens: j.tokens.TextBytes(p)}
}

// AfterEnd reports, once, a frame that came after the stream's end.
func (j *Judge) AfterEnd(v *protocol.Violations, rule protocol.Rule, format string, args ...any) {
	if !j.after {
		j.after = true
		v.Add(rule, format, args...)
	}
}

// Answer is the answer text so far of a conversation turn (protocol.AnswerKeeper).
func (j *Judge) Answer() string { return string(j.answer) }

// OutputText is the thinking and answer text kept without ground truth, and its total (OutputKeeper).
func (j *Judge) OutputText() ([]byte, int64) { return j.output, j.outputTotal }

// keepOutputText keeps p as output text when the session has no ground truth.
func (j *Judge) keepOutputText(p []byte) {
	if j.keepOutput {
		j.output = appendBounded(j.output, p, protocol.MaxOutputText)
		j.outputTotal += int64(len(p))
	}
}

// appendBounded appends p to b up to limit bytes in all.
func appendBounded(b, p []byte, limit int) []byte {
	if room := limit - len(b); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(b, p...)
}

// ProviderError judges a mid-stream error frame against the script and returns its
// Observation. An error the script does not call for is the session's in_band_error outcome
// (the stream is then judged partial, Ended); one at another turn than the script's breaks the
// error rule.
func (j *Judge) ProviderError(v *protocol.Violations, message []byte) protocol.Observation {
	switch {
	case !j.S.ScriptedError():
		j.unscripted = true
	case j.Exp.HTTPError:
		v.Add(j.rules.Error, "turn %d: expected the scripted HTTP error, the server streamed instead (%s %s)", j.S.Turn, j.rules.ErrorFrame, protocol.Quote(string(message), 80))
	case !j.Exp.StreamError:
		v.Add(j.rules.Error, "turn %d: expected no provider error (the script fails at turn %d), saw %s", j.S.Turn, j.S.Expected.FailedTurn, protocol.Quote(string(message), 80))
	}
	return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(string(message))}
}

// Ended judges what every wire's Finish judges first and reports whether the stream ran to its
// end: a cut, aborted or unscripted-error stream is judged no further; against the script, a
// stream where an HTTP error was due, or that ended without its error frame (errored: one
// came), breaks the error rule.
func (j *Judge) Ended(v *protocol.Violations, streamErr error, errored bool) bool {
	if j.S.Aborted || streamErr != nil || j.unscripted {
		return false // only what was seen before the cut was judged
	}
	switch {
	case j.Exp.HTTPError:
		v.Add(j.rules.Error, "turn %d: expected the scripted HTTP error, the server streamed instead", j.S.Turn)
	case j.Exp.StreamError && !errored:
		v.Add(j.rules.Error, "turn %d: expected the scripted %s (%s), the stream ended without one",
			j.S.Turn, j.rules.ErrorFrame, protocol.Quote(j.S.Expected.ProviderError, 60))
	}
	return true
}

// FinishScript checks that the whole of the script's text and thinking came and, unless
// callsLost (a failed turn streams none, or a call could not be placed), that the assembled
// calls are the script's and a stop reason seen ("": none) the turn's; it returns the scripted
// turn for the wire's own end checks (nil without ground truth or when callsLost).
func (j *Judge) FinishScript(v *protocol.Violations, got []Tool, callsLost bool, stop string) *scenarios.ExpectedTurn {
	t := j.Exp.Turn
	if t == nil {
		return nil
	}
	j.text.Short(v, j.rules.Content, "expected text %s next, saw only the first %d of %d bytes", 40)
	j.think.Short(v, j.rules.Content, "expected "+j.rules.Thinking+" %s next, saw only the first %d of %d bytes", 40)
	if callsLost {
		return nil
	}
	if detail, ok := CompareTools(got, t.ToolCalls); !ok {
		v.Add(j.rules.Content, "%s", detail)
	}
	want := j.rules.EndTurn
	if len(t.ToolCalls) > 0 {
		want = j.rules.ToolUse
	}
	if stop != "" && stop != want {
		v.Add(j.rules.Stop, "expected %s %q (the script's turn %d), saw %q", j.rules.StopField, want, j.S.Turn, stop)
	}
	return t
}
