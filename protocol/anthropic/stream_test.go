package anthropic

import (
	"bytes"
	"testing"

	"github.com/streambench/streambench/scenarios"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

// testMeta is the fixed response identity of the golden files.
var testMeta = StreamMeta{ID: "msg_test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}

// smallTurn is wiretest.SmallTurn with this wire's tool call ids.
func smallTurn() *scenarios.ScriptTurn { return wiretest.SmallTurn("toolu_") }

// writeTurn plays turn through a StreamWriter the way the mock does.
func writeTurn(t testing.TB, turn *scenarios.ScriptTurn, meta StreamMeta) []byte {
	t.Helper()
	var buf bytes.Buffer
	wiretest.WriteTurn(t, NewStreamWriter(&buf, meta, true), turn)
	return buf.Bytes()
}
