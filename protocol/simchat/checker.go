package simchat

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// frame is every field a sim-chat frame may carry; one struct decodes all shapes.
type frame struct {
	BlockID *string         `json:"blockId"`
	Event   *string         `json:"event"`
	Chunk   *string         `json:"chunk"`
	Data    json.RawMessage `json:"data"`
	Phase   string          `json:"phase"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Status  string          `json:"status"`
	Error   *string         `json:"error"`
}

type finalData struct {
	Success *bool           `json:"success"`
	Status  string          `json:"status"`
	Output  json.RawMessage `json:"output"`
	Error   string          `json:"error"`
}

// toolFrameKeys are the only keys a public tool frame may carry (R-tool-redaction).
var toolFrameKeys = [...]string{"blockId", "event", "phase", "id", "name", "status"}

// redactedKeys are the tool keys public chat never exposes.
var redactedKeys = [...]string{"arguments", "input", "result", "output"}

// Checker judges one sim-chat stream (every sim-chat rule). Not safe for concurrent use.
type Checker struct {
	s               *protocol.Session
	optedIn         bool
	policy          Policy
	v               protocol.Violations
	tracker         *Tracker
	thinkingAllowed bool
	toolsAllowed    bool
	// settled: an opted-in client of a provider running its tools settled gets what a legacy
	// client does, every live frame R-settled-tools'.
	settled        bool
	thinking       jsonwire.Text // the thinking frames' text against every turn's thinking
	thinkingFrames int
	thinkingUnits  int // thinking text seen in UTF-16 code units, for R-thinking-cap
	terminals      int
	failed         bool // the terminal was a failure (error, or final with success false)
	unscripted     bool // the first terminal was an unscripted failure: judged partial
	noTruth        bool // Session.NoGroundTruth: structure only
	end            protocol.DoneMarker
	generalOnly    bool // tests turn the fast paths off to compare them with the general path
	tokens         scenarios.TokenCounter
	toolPrefix     string // put before every scripted tool name by the target (R-tool-gate)
}

// NewChecker returns a checker for one stream of s, opted in or not, under policy.
func NewChecker(s *protocol.Session, optedIn bool, policy Policy) *Checker {
	settled := optedIn && policy.SettledTools
	c := &Checker{
		s:               s,
		optedIn:         optedIn,
		policy:          policy,
		thinkingAllowed: optedIn && policy.IncludeThinking && !policy.NoModelThinking && !settled,
		toolsAllowed:    optedIn && policy.IncludeToolCalls && !settled,
		settled:         settled,
		noTruth:         s.NoGroundTruth,
		end:             protocol.DoneMarker{Quoted: true},
	}
	exp := &s.Expected
	if c.noTruth {
		exp = nil
	} else {
		c.thinking = jsonwire.NewText(CapThinking(jsonwire.TurnParts(exp, true), ThinkingCapUnits)...)
	}
	c.tracker = NewTracker(exp, optedIn && !settled, &c.v)
	if settled {
		c.tracker.SettledTools()
	}
	return c
}

// Observe classifies one event and judges it against the rules that can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	if c.end.After(&c.v, ev.Data, 80) {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	data := protocol.DataOnly(&c.v, ev)
	if c.end.Is(&c.v, data) {
		return c.onDone()
	}
	if blockID, chunk, ok := plainChunk(data); ok && !c.generalOnly {
		if !c.afterTerminal("an answer chunk") {
			c.tracker.ChunkBytes(blockID, chunk)
		}
		return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(chunk), Tokens: c.tokens.TextBytes(chunk)}
	}
	if text, ok := plainThinking(data); ok && !c.generalOnly && c.terminals == 0 && c.thinkingAllowed && c.fastThinking(text) {
		c.thinkingFrames++
		c.thinkingUnits += UTF16Len(text)
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(text), Tokens: c.tokens.ThinkingBytes(text)}
	}
	var f frame
	if err := json.Unmarshal(data, &f); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object frame, saw %s", protocol.Quote(string(ev.Data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if f.Event == nil {
		return c.onChunk(&f, data)
	}
	if f.Chunk != nil {
		c.v.Add(protocol.RFraming, "expected %q frames without a chunk key, saw %s", *f.Event, protocol.Quote(string(data), 80))
	}
	blockID := jsonwire.Deref(f.BlockID)
	switch *f.Event {
	case "chunk_reset":
		if !c.afterTerminal("chunk_reset") {
			c.tracker.Reset(blockID)
		}
		c.tokens.Break()
		return protocol.Observation{Kind: protocol.FrameReset}
	case "thinking":
		return c.onThinking(&f, data)
	case "tool":
		return c.onTool(&f, data)
	case "final":
		return c.onFinal(&f, data)
	case "error":
		if f.Error == nil {
			c.v.Add(protocol.RFraming, "expected an error terminal with an \"error\" message, saw %s", protocol.Quote(string(data), 80))
		}
		c.onTerminal("error", true, jsonwire.Deref(f.Error))
		c.judgeErrorSeeds(jsonwire.Deref(f.Error))
		return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(jsonwire.Deref(f.Error))}
	case "stream_error":
		c.afterTerminal("stream_error")
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	c.v.Add(protocol.RFraming, "unknown event %q in frame %s", *f.Event, protocol.Quote(string(data), 80))
	return protocol.Observation{Kind: protocol.FrameOther}
}

// fastThinking reports whether a thinking piece needs no judging beyond counting it: within
// the cap without ground truth, with it continuing the capped script.
func (c *Checker) fastThinking(text []byte) bool {
	if c.noTruth {
		return c.thinkingUnits+UTF16Len(text) <= ThinkingCapUnits
	}
	return !c.thinking.Off && jsonwire.Advance(&c.thinking.Cursor, text)
}

func (c *Checker) onChunk(f *frame, data []byte) protocol.Observation {
	if f.Chunk == nil {
		c.v.Add(protocol.RFraming, "expected a chunk or an event, saw %s", protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if *f.Chunk == "" {
		c.v.Add(protocol.RFraming, "expected a non-empty chunk, saw %s", protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if !c.afterTerminal("an answer chunk") {
		c.tracker.Chunk(jsonwire.Deref(f.BlockID), *f.Chunk)
	}
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(*f.Chunk), Tokens: c.tokens.Text(*f.Chunk)}
}

func (c *Checker) onThinking(f *frame, data []byte) protocol.Observation {
	var text string
	if err := json.Unmarshal(f.Data, &text); err != nil {
		c.v.Add(protocol.RFraming, "expected thinking text as a JSON string in \"data\", saw %s", protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if c.afterTerminal("a thinking frame") {
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(text), Tokens: c.tokens.Thinking(text)}
	}
	c.thinkingFrames++
	if c.thinkingSeeds(text) {
		// R-thinking-capability or R-thinking-cap: judged there alone.
	} else if c.settled {
		c.v.Add(RSettledTools, "expected no thinking frames: the deployment's provider runs its tools settled (liveTools false), saw %s", protocol.Quote(text, 60))
	} else if !c.thinkingAllowed {
		c.v.Add(RThinkingGate, "expected no thinking frames (opted in: %t, includeThinking: %t), saw %s",
			c.optedIn, c.policy.IncludeThinking, protocol.Quote(text, 60))
	} else if !c.noTruth {
		jsonwire.Follow(&c.thinking, &c.v, RThinkingGate, "thinking", text, 40)
	}
	return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(text), Tokens: c.tokens.Thinking(text)}
}

func (c *Checker) onTool(f *frame, data []byte) protocol.Observation {
	c.checkToolKeys(data)
	if f.ID == "" || f.Name == "" {
		c.v.Add(protocol.RFraming, "expected a tool frame with id and name, saw %s", protocol.Quote(string(data), 80))
	}
	after := c.afterTerminal("a tool frame")
	c.tokens.Break()
	switch {
	case after:
	case c.settled:
		c.v.Add(RSettledTools, "expected no tool frames: the deployment's provider runs its tools settled (liveTools false), saw %s %s %s", f.Phase, f.Name, f.ID)
	case !c.toolsAllowed:
		c.v.Add(RToolGate, "expected no tool frames (opted in: %t, includeToolCalls: %t), saw %s %s %s",
			c.optedIn, c.policy.IncludeToolCalls, f.Phase, f.Name, f.ID)
	}
	if kind := c.tracker.Tool(f.Phase, f.ID, f.Name, f.Status, !after); kind != protocol.FrameOther {
		return protocol.Observation{Kind: kind}
	}
	c.v.Add(protocol.RFraming, "expected tool phase start or end, saw %q", f.Phase)
	return protocol.Observation{Kind: protocol.FrameOther}
}

// checkToolKeys enforces a tool frame's public keys (a rare frame, decoded again into a map).
func (c *Checker) checkToolKeys(data []byte) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return
	}
	for k := range m {
		if !slices.Contains(toolFrameKeys[:], k) {
			c.v.Add(RToolRedaction, "expected tool frames with only blockId, event, phase, id, name, status; saw key %q in %s", k, protocol.Quote(string(data), 120))
			return
		}
	}
}

func (c *Checker) onFinal(f *frame, data []byte) protocol.Observation {
	var d finalData
	if err := json.Unmarshal(f.Data, &d); err != nil || d.Success == nil {
		c.v.Add(protocol.RFraming, "expected a final envelope {\"success\":bool,...} in data, saw %s", protocol.Quote(string(data), 80))
		c.onTerminal("final", false, "")
		return protocol.Observation{Kind: protocol.FrameTerminal}
	}
	if path := findRedacted(f.Data); path != "" {
		c.v.Add(RToolRedaction, "expected the final envelope's tool entries reduced to name and status, saw %s in %s", path, protocol.Quote(string(f.Data), 120))
	}
	c.judgeFinalSeeds(&d)
	c.onTerminal("final", !*d.Success, d.Error)
	if !*d.Success {
		return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(d.Error)}
	}
	return protocol.Observation{Kind: protocol.FrameTerminal}
}

// findRedacted walks a final envelope and returns the path of the first arguments, input,
// result or output key inside a tool entry (any value under a key naming tools), or "".
func findRedacted(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return walkRedacted(v, "data", false)
}

func walkRedacted(v any, path string, inTool bool) string {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if inTool && slices.ContainsFunc(redactedKeys[:], func(r string) bool { return strings.EqualFold(k, r) }) {
				return path + "." + k
			}
			if p := walkRedacted(child, path+"."+k, inTool || strings.Contains(strings.ToLower(k), "tool")); p != "" {
				return p
			}
		}
	case []any:
		for _, child := range v {
			if p := walkRedacted(child, path+"[]", inTool); p != "" {
				return p
			}
		}
	}
	return ""
}

// afterTerminal reports whether a frame came after the terminal: R-terminal's finding alone.
func (c *Checker) afterTerminal(what string) bool {
	if c.terminals > 0 {
		c.v.Add(protocol.RTerminal, "expected only \"[DONE]\" after the terminal, saw %s", what)
		return true
	}
	return false
}

// onTerminal judges a terminal: exactly one, the error terminal where the script fails (an
// unscripted one is the session's outcome: judged partial).
func (c *Checker) onTerminal(kind string, failed bool, msg string) {
	c.terminals++
	switch {
	case c.terminals > 1 && c.failed && !failed:
		c.v.Add(protocol.RTerminal, "expected exactly one terminal, saw final after error")
	case c.terminals > 1:
		c.v.Add(protocol.RTerminal, "expected exactly one terminal, saw a second (%s)", kind)
	case c.s.ScriptedError() && !failed:
		c.v.Add(protocol.RTerminal, "expected an error terminal (the provider fails with %s), saw a successful %s", protocol.Quote(c.s.Expected.ProviderError, 60), kind)
	case !c.s.ScriptedError() && failed:
		c.unscripted = true
	}
	c.failed = c.failed || failed
}

func (c *Checker) onDone() protocol.Observation {
	if c.terminals == 0 {
		c.v.Add(protocol.RTerminal, "expected a final or error terminal before \"[DONE]\", saw none")
	}
	c.end.Done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	mode := EndComplete
	switch {
	case c.s.Aborted || streamErr != nil || c.unscripted:
		mode = EndPartial
	case c.s.ScriptedError():
		mode = EndFailed
	}
	if mode != EndPartial {
		if c.terminals == 0 {
			c.v.Add(protocol.RTerminal, "expected a final or error terminal then \"[DONE]\", the stream ended without a terminal")
		} else if !c.end.Done {
			c.v.Add(protocol.RTerminal, "expected \"[DONE]\" after the terminal, the stream ended without it")
		}
	}
	c.tracker.Finish(mode)
	c.finishThinking(mode)
	c.finishTools(mode)
	return c.v.List()
}

func (c *Checker) finishThinking(mode EndMode) {
	if c.noTruth || !c.thinkingAllowed || c.thinking.Off || mode != EndComplete || c.thinking.Done() {
		return
	}
	if c.thinkingFrames == 0 {
		c.v.Add(RThinkingGate, "expected thinking frames (opted in, includeThinking) carrying %s, saw none", protocol.Quote(c.thinking.Next(60), 60))
		return
	}
	c.v.Add(RThinkingGate, "expected thinking %s next, saw only the first %d of %d bytes", protocol.Quote(c.thinking.Next(60), 60), c.thinking.Matched(), c.thinking.Total())
}

// finishTools checks the tool frames the policy lets through against the script: one start per
// scripted call with its id and name, the scripted outcome as the end status.
func (c *Checker) finishTools(mode EndMode) {
	if !c.toolsAllowed || c.noTruth {
		return // without ground truth the gate is judged frame by frame (onTool) alone
	}
	seen := c.tracker.Tools()
	scripted := protocol.ScriptedCalls(&c.s.Expected)
	for _, tool := range seen {
		i := scripted.Index(tool.ID)
		switch {
		case i < 0:
			c.v.Add(RToolGate, "tool %s (%s): not a scripted call", tool.ID, tool.Name)
		case c.toolPrefix+scripted[i].Name != tool.Name:
			c.v.Add(RToolGate, "tool %s: expected name %q, saw %q", tool.ID, c.toolPrefix+scripted[i].Name, tool.Name)
		case tool.Ended && tool.Status != string(scripted[i].Outcome) && !(mode == EndPartial && tool.Status == string(scenarios.OutcomeCancelled)):
			c.v.Add(RToolGate, "tool %s (%s): expected status %q, saw %q", tool.ID, tool.Name, scripted[i].Outcome, tool.Status)
		}
	}
	if mode == EndPartial {
		return
	}
	for _, call := range scripted {
		if !slices.ContainsFunc(seen, func(tool ToolSeen) bool { return tool.ID == call.ID }) {
			c.v.Add(RToolGate, "expected tool frames for scripted call %s (%s), saw none", call.ID, c.toolPrefix+call.Name)
		}
	}
}

// plainChunk recognizes the answer frame exactly as the Writer encodes it, with plain strings,
// without decoding JSON: nearly every frame, and the checker's per-event cost is the load
// generator's. Anything else takes the general path.
func plainChunk(data []byte) (blockID, chunk []byte, ok bool) {
	blockID, rest, ok := jsonwire.CutPlainAfter(data, `{"blockId":"`)
	if ok {
		chunk, rest, ok = jsonwire.CutPlainAfter(rest, `","chunk":"`)
	}
	return blockID, chunk, ok && len(chunk) > 0 && string(rest) == `"}`
}

// plainThinking recognizes the Writer's thinking frame with a plain string (plainChunk).
func plainThinking(data []byte) (text []byte, ok bool) {
	_, rest, ok := jsonwire.CutPlainAfter(data, `{"blockId":"`)
	if ok {
		text, rest, ok = jsonwire.CutPlainAfter(rest, `","event":"thinking","data":"`)
	}
	return text, ok && string(rest) == `"}`
}
