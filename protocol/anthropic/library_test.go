package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// TestLibraryRoundTrip writes every turn of every embedded scenario, for a few seeds, and
// decodes it back: thinking, text, tool ids, names and arguments, stop reason and usage must
// equal the script's ground truth, and a mid-stream fault must surface as a ProviderError.
func TestLibraryRoundTrip(t *testing.T) {
	t.Parallel()
	lib := scenarios.Embedded()
	if lib.Len() == 0 {
		t.Fatal("embedded library is empty")
	}
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		for _, seed := range []uint64{1, 7, 42} {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				t.Parallel()
				script := sc.Render(seed)
				exp := script.Expected()
				for i := range script.Turns {
					turn := &script.Turns[i]
					if turn.HTTPStatus != 0 {
						continue // answered before any stream: nothing on this wire
					}
					meta := StreamMeta{ID: fmt.Sprintf("msg_%s-%d", name, i), Model: "sim", Created: 1}
					got, err := decodeAll(t, bytes.NewReader(writeTurn(t, turn, meta)))
					want := accumulated{Thinking: exp.Turns[i].Thinking, Text: exp.Turns[i].Text}
					if turn.ErrorAfterStep >= 0 {
						var perr *protocol.ProviderError
						if !errors.As(err, &perr) || perr.Message != turn.ErrorMessage {
							t.Fatalf("turn %d: stream ended with %v, want the provider error %q", i, err, turn.ErrorMessage)
						}
						got.Calls = nil // a failed turn's partial calls are not part of the ground truth
					} else {
						if err != io.EOF {
							t.Fatalf("turn %d: stream ended with %v", i, err)
						}
						want.Stop, want.TurnEnds = protocol.StopEndTurn, 1
						if len(turn.ToolCalls) > 0 {
							want.Stop = protocol.StopToolUse
						}
						want.Usage = protocol.Usage{InputTokens: turn.InputTokens, OutputTokens: turn.OutputTokens}
						for _, c := range exp.Turns[i].ToolCalls {
							want.Calls = append(want.Calls, scenarios.ScriptToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
						}
					}
					assertAccumulated(t, got, want)
				}
			})
		}
	}
}
