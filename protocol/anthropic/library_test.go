package anthropic

import (
	"testing"

	"github.com/streambench/streambench/protocol/internal/wiretest"
	"github.com/streambench/streambench/scenarios"
)

// TestLibraryRoundTrip writes every turn of every embedded scenario, for a few seeds, and
// decodes it back against the script's ground truth (see wiretest.LibraryRoundTrip).
func TestLibraryRoundTrip(t *testing.T) {
	t.Parallel()
	wiretest.LibraryRoundTrip(t, func(t testing.TB, turn *scenarios.ScriptTurn, id string) []byte {
		return writeTurn(t, turn, StreamMeta{ID: "msg_" + id, Model: "sim", Created: 1})
	}, decodeAll)
}
