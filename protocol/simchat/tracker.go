package simchat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// EndMode says how much of the ground truth a finished stream must show.
type EndMode uint8

// End modes, decided once in Finish.
const (
	EndComplete EndMode = iota // a clean end of a run that succeeds: everything scripted is owed
	EndFailed                  // a clean end of a run failing at the provider: the script up to it
	EndPartial                 // an abort or a cut: what was seen is a prefix of the script
)

// Tracker is the agent-events answer model sim-chat and sim-canvas share (the canvas forwards
// the same event sink): per block, answer chunks appended and cleared by chunk_reset, thinking
// leaked into chunks, and the tool lifecycle by call id, judged as they arrive against the
// script's one agent block. It keeps lengths and match flags, not the text, so a checker's
// memory does not grow with the answer. Without ground truth (a nil exp) only the rules'
// structural parts are judged. Not safe for concurrent use.
type Tracker struct {
	Violations *protocol.Violations // receives everything the tracker finds
	optedIn    bool
	exp        *scenarios.Expected // nil: no ground truth
	// segments are the text-bearing turns' texts in order: each intermediate preamble (each
	// followed by a chunk_reset) and the final (or failed) turn's.
	segments     []string
	intermediate int             // segments ending in tool calls: the resets due
	toolCalls    int             // scripted tool calls in all turns
	leak         jsonwire.Cursor // thinking leaked into answer chunks, against every turn's
	blocks       []blockState
	tools        []ToolSeen
	toolsEnded   int
	legacyChunks int // a legacy client's answer chunks: one settled chunk is allowed
	// pendingLegacy is the R-legacy-settled detail of a chunk that is part of a turn's text,
	// decided at Finish (no violation of a stream judged partial).
	pendingLegacy string
	// settledRule and settledWho name the settled-text model's findings (R-legacy-settled, or
	// R-settled-tools after SettledTools).
	settledRule protocol.Rule
	settledWho  string
}

type blockState struct {
	id      string
	resets  int  // in-scope resets: the index of the segment streaming now
	n       int  // bytes of text since the last reset
	ok      bool // text since the last reset is a prefix of the segment's expected text
	badAt   int  // where it diverged, when !ok
	badSeen string
	leaked  int // leaked thinking chunks since the last reset
}

// NewTracker returns a tracker judging against exp (nil: structure only), live if optedIn.
func NewTracker(exp *scenarios.Expected, optedIn bool, v *protocol.Violations) *Tracker {
	t := &Tracker{Violations: v, optedIn: optedIn, exp: exp, settledRule: RLegacySettled, settledWho: "legacy client"}
	if exp == nil {
		return t
	}
	t.leak = jsonwire.NewCursor(jsonwire.TurnParts(exp, true))
	for _, turn := range exp.Turns {
		t.toolCalls += len(turn.ToolCalls)
		if turn.Text == "" {
			continue
		}
		t.segments = append(t.segments, turn.Text)
		if len(turn.ToolCalls) > 0 {
			t.intermediate++
		}
	}
	return t
}

// SettledTools judges a provider running its tools settled: the settled-text model applies to
// every client (make the tracker not opted in) and its findings are R-settled-tools'.
func (t *Tracker) SettledTools() {
	t.settledRule, t.settledWho = RSettledTools, "settled-tools deployment"
}

// segment is the expected text of segment i ("" past the script).
func (t *Tracker) segment(i int) string {
	if i < len(t.segments) {
		return t.segments[i]
	}
	return ""
}

func (t *Tracker) block(id string) *blockState {
	if i := slices.IndexFunc(t.blocks, func(b blockState) bool { return b.id == id }); i >= 0 {
		return &t.blocks[i]
	}
	t.blocks = append(t.blocks, blockState{id: id, ok: true})
	return &t.blocks[len(t.blocks)-1]
}

// leaked reports whether an answer chunk off the expected answer is thinking text, judged
// then under R-no-thinking-in-answer alone: one that continues the thinking leaked so far or
// starts a turn's (matching anywhere inside would flag common words).
func (t *Tracker) leaked(chunk string) bool {
	if t.leak.Total() == 0 {
		return false
	}
	if jsonwire.Advance(&t.leak, chunk) {
		return true
	}
	for i, thinking := range t.leak.Parts() {
		if thinking != "" && len(chunk) <= len(thinking) && thinking[:len(chunk)] == chunk {
			t.leak.RestartAt(i)
			return jsonwire.Advance(&t.leak, chunk)
		}
	}
	return false
}

// Chunk follows one answer chunk of a block.
func (t *Tracker) Chunk(blockID, chunk string) {
	if !t.optedIn {
		t.legacyChunk(chunk)
		return
	}
	b := t.block(blockID)
	if t.exp == nil {
		b.n += len(chunk)
		return
	}
	want := t.segment(b.resets)
	continues := b.ok && strings.HasPrefix(want[b.n:], chunk)
	if !continues && t.leaked(chunk) {
		t.Violations.Add(protocol.RNoThinkingAnswer, "block %s: answer chunk %s is scripted thinking text", blockID, protocol.Quote(chunk, 80))
		b.leaked++
		return
	}
	if b.ok && !continues {
		b.ok, b.badAt, b.badSeen = false, b.n, protocol.Shorten(chunk, 60)
	}
	b.n += len(chunk)
}

// ChunkBytes is Chunk for a chunk in the decoder's buffer (no allocation on the script).
func (t *Tracker) ChunkBytes(blockID, chunk []byte) {
	if t.optedIn {
		for i := range t.blocks {
			b := &t.blocks[i]
			if b.id != string(blockID) || !b.ok {
				continue
			}
			if t.exp == nil {
				b.n += len(chunk)
				return
			}
			if want := t.segment(b.resets); len(want)-b.n >= len(chunk) && want[b.n:b.n+len(chunk)] == string(chunk) {
				b.n += len(chunk)
				return
			}
			break
		}
	}
	t.Chunk(string(blockID), string(chunk))
}

func (t *Tracker) legacyChunk(chunk string) {
	if t.exp == nil { // only the structure: one settled chunk
		if t.legacyChunks++; t.legacyChunks > 1 {
			t.Violations.Add(t.settledRule, "%s: expected the final text in one chunk, saw a second chunk %s", t.settledWho, protocol.Quote(chunk, 60))
		}
		return
	}
	final := t.exp.FinalText()
	settled := chunk == final
	if failed := t.exp.FailedTurn; !settled && t.exp.ProviderError != "" && failed >= 0 && failed < len(t.exp.Turns) {
		// A runtime may settle what a turn failed mid-stream streamed (never an earlier preamble).
		settled = strings.HasPrefix(t.exp.Turns[failed].Text, chunk)
	}
	if !settled && t.leaked(chunk) {
		t.Violations.Add(protocol.RNoThinkingAnswer, "answer chunk %s is scripted thinking text", protocol.Quote(chunk, 80))
		return
	}
	t.legacyChunks++
	switch {
	case t.legacyChunks > 1:
		t.Violations.Add(t.settledRule, "%s: expected the final text %s in one chunk, saw a second chunk %s", t.settledWho, protocol.Quote(final, 60), protocol.Quote(chunk, 60))
	case !settled && t.turnPrefix(chunk):
		// What a turn streamed before it failed: wrong unless the stream fails unscripted,
		// which only Finish knows.
		t.pendingLegacy = fmt.Sprintf("%s: expected only the settled final text %s, saw chunk %s", t.settledWho, protocol.Quote(final, 60), protocol.Quote(chunk, 60))
	case !settled:
		t.Violations.Add(t.settledRule, "%s: expected only the settled final text %s, saw chunk %s", t.settledWho, protocol.Quote(final, 60), protocol.Quote(chunk, 60))
	}
}

// turnPrefix reports whether chunk begins some turn's scripted text.
func (t *Tracker) turnPrefix(chunk string) bool {
	return chunk != "" && slices.ContainsFunc(t.exp.Turns, func(turn scenarios.ExpectedTurn) bool {
		return strings.HasPrefix(turn.Text, chunk)
	})
}

// Reset follows a chunk_reset of a block.
func (t *Tracker) Reset(blockID string) {
	if !t.optedIn {
		t.Violations.Add(t.settledRule, "%s: expected no chunk_reset, saw one for block %s", t.settledWho, blockID)
		return
	}
	b := t.block(blockID)
	switch {
	case b.n == 0 && b.leaked > 0: // it retracts leaked thinking: R-no-thinking-in-answer's alone
		b.leaked = 0
		return
	case b.n == 0:
		t.Violations.Add(protocol.RResetScope, "block %s: chunk_reset with no text streamed since the last reset", blockID)
		return
	case t.exp == nil: // which turn is the final one is the script's
		b.resets++
	case b.resets >= t.intermediate:
		// Out of scope, but a client honours it: the final text must stream again from its
		// start to converge.
		t.Violations.Add(protocol.RResetScope, "block %s: chunk_reset #%d in the final turn (the script has %d intermediate turns with text) after %d bytes of final text",
			blockID, b.resets+1, t.intermediate, b.n)
	default:
		if t.toolCalls > 0 && t.toolsEnded >= t.toolCalls { // late but due: still the segment boundary
			t.Violations.Add(protocol.RResetScope, "block %s: chunk_reset after every scripted tool call settled (in the final turn, not the intermediate one)", blockID)
		}
		if want := t.segment(b.resets); !b.ok || b.n != len(want) {
			t.Violations.Add(protocol.RConverge, "block %s: intermediate turn %d: expected preamble %s before chunk_reset, %s",
				blockID, b.resets, protocol.Quote(want, 60), b.describe(want))
		}
		b.resets++
	}
	b.n, b.ok, b.leaked = 0, true, 0
}

// describe says what a block streamed compared with want.
func (b *blockState) describe(want string) string {
	if !b.ok {
		return fmt.Sprintf("saw text diverge at byte %d with chunk %q (expected %s there)", b.badAt, b.badSeen, protocol.Quote(want[min(b.badAt, len(want)):], 40))
	}
	return fmt.Sprintf("saw only its first %d of %d bytes", b.n, len(want))
}

// Tool follows a tool frame of phase start or end (follow false: classifies it only) and returns
// its kind; FrameOther for another phase, which the caller reports.
func (t *Tracker) Tool(phase, id, name, status string, follow bool) protocol.FrameKind {
	switch phase {
	case "start": // a status on start is not judged (docs/PROTOCOLS.md, "Variants real runtimes send")
		if follow && slices.ContainsFunc(t.tools, func(tool ToolSeen) bool { return tool.ID == id }) {
			t.Violations.Add(protocol.RToolLifecycle, "tool %s (%s): expected one start, saw a second", id, name)
		} else if follow {
			t.tools = append(t.tools, ToolSeen{ID: id, Name: name})
		}
		return protocol.FrameToolStart
	case "end":
		if follow {
			t.toolEnd(id, name, status)
		}
		return protocol.FrameToolEnd
	}
	return protocol.FrameOther
}

func (t *Tracker) toolEnd(id, name, status string) {
	switch scenarios.Outcome(status) {
	case scenarios.OutcomeSuccess, scenarios.OutcomeError, scenarios.OutcomeCancelled:
	default:
		t.Violations.Add(protocol.RToolLifecycle, "tool %s (%s): expected status success, error or cancelled, saw %q", id, name, status)
	}
	i := slices.IndexFunc(t.tools, func(tool ToolSeen) bool { return tool.ID == id })
	switch {
	case i < 0:
		t.Violations.Add(protocol.RToolLifecycle, "tool %s (%s): end without an earlier start", id, name)
	case t.tools[i].Ended:
		t.Violations.Add(protocol.RToolLifecycle, "tool %s (%s): expected exactly one end, saw a second", id, name)
	default:
		if t.tools[i].Name != name {
			t.Violations.Add(protocol.RToolLifecycle, "tool %s: end names %q, start named %q", id, name, t.tools[i].Name)
		}
		t.tools[i].Ended, t.tools[i].Status = true, status
		t.toolsEnded++
	}
}

// Tools returns the tool calls seen (not to be modified), for dialect-specific checks
// (sim-chat's R-tool-gate).
func (t *Tracker) Tools() []ToolSeen { return t.tools }

// ToolSeen is one tool call as a stream showed it.
type ToolSeen struct {
	ID, Name, Status string
	Ended            bool
}

// Finish judges the end state: convergence of every block and settled tools.
func (t *Tracker) Finish(mode EndMode) {
	if mode != EndPartial {
		for _, tool := range t.tools {
			if !tool.Ended {
				t.Violations.Add(protocol.RToolLifecycle, "tool %s (%s): started but never ended before the stream ended", tool.ID, tool.Name)
			}
		}
	}
	if t.exp == nil {
		return // convergence is the script's
	}
	if !t.optedIn {
		if t.pendingLegacy != "" && mode != EndPartial {
			t.Violations.Add(t.settledRule, "%s", t.pendingLegacy)
		}
		if mode == EndComplete && t.legacyChunks == 0 && t.exp.FinalText() != "" {
			t.Violations.Add(t.settledRule, "%s: expected the final text %s in one chunk, saw no answer chunk", t.settledWho, protocol.Quote(t.exp.FinalText(), 80))
		}
		return
	}
	for i := range t.blocks {
		b := &t.blocks[i]
		want := t.segment(b.resets)
		switch {
		case !b.ok:
			t.Violations.Add(protocol.RConverge, "block %s after %d resets: expected %s, %s", b.id, b.resets, protocol.Quote(want, 60), b.describe(want))
		case mode == EndComplete && b.resets < t.intermediate:
			t.Violations.Add(protocol.RConverge, "block %s: expected %d chunk_resets (one per intermediate turn with text), saw %d; client ends with the preamble %s",
				b.id, t.intermediate, b.resets, protocol.Quote(want, 60))
		case mode == EndComplete && b.n != len(want):
			t.Violations.Add(protocol.RConverge, "block %s: expected final text %s, %s", b.id, protocol.Quote(want, 60), b.describe(want))
		}
	}
	if mode == EndComplete && len(t.blocks) == 0 && t.exp.FinalText() != "" {
		t.Violations.Add(protocol.RConverge, "expected final text %s, saw no answer chunk", protocol.Quote(t.exp.FinalText(), 80))
	}
}
