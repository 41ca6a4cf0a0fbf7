package scenarios

import (
	"fmt"
	"strings"
)

// ToolCallCount is the number of scripted tool calls across all turns.
func (s *Scenario) ToolCallCount() int {
	n := 0
	for _, t := range s.Turns {
		n += len(t.ToolCalls)
	}
	return n
}

// String summarises the faults for tables, e.g. "http 429 @turn0, stall 2s @turn0+50".
func (f Faults) String() string {
	var parts []string
	if e := f.HTTPError; e != nil {
		parts = append(parts, fmt.Sprintf("http %d @turn%d", e.Status, e.Turn))
	}
	if e := f.MidStreamError; e != nil {
		parts = append(parts, fmt.Sprintf("mid-stream error @turn%d+%d", e.Turn, e.AfterTokens))
	}
	if e := f.Stall; e != nil {
		parts = append(parts, fmt.Sprintf("stall %v @turn%d+%d", e.Duration, e.Turn, e.AfterTokens))
	}
	return strings.Join(parts, ", ")
}

// String summarises the client behaviour, e.g. "abort after 30 chunks"; "" for none.
func (c Client) String() string {
	switch {
	case c.Abort != nil:
		return "abort " + c.Abort.String()
	case c.Stop != nil:
		return "stop " + c.Stop.String()
	case c.Reconnect != nil:
		return c.Reconnect.String()
	}
	return ""
}

// String says when the trigger fires, e.g. "after 30 chunks", "during tool".
func (t Trigger) String() string {
	switch {
	case t.AfterChunks != 0:
		return fmt.Sprintf("after %d chunks", t.AfterChunks)
	case t.DuringThinking:
		return "during thinking"
	case t.DuringTool:
		return "during tool"
	case t.After != 0:
		return fmt.Sprintf("after %v", t.After)
	case t.BeforeHeaders:
		return "before headers"
	}
	return "never"
}
