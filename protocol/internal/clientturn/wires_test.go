package clientturn_test

import (
	"io"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// wire is a provider-wire client dialect as the kit drives it: its rules, the mock's stream
// writer for its wire, and its checker.
type wire struct {
	name       string
	rules      []protocol.RuleSpec
	newWriter  func(io.Writer) TurnWriter
	newChecker func(*protocol.Session) protocol.Checker
}

// wires are the provider-wire client dialects the suites below run over.
var wires = []wire{
	{anthropicmessages.Name, anthropicmessages.New().Rules(), amNewWriter, amNewChecker},
	{openaichat.Name, openaichat.New().Rules(), ocNewWriter, ocNewChecker},
	{openairesponses.Name, openairesponses.New().Rules(), orNewWriter, orNewChecker},
}

func amNewWriter(w io.Writer) TurnWriter {
	return anthropic.NewStreamWriter(w, anthropic.StreamMeta{ID: "bench-1", Model: "m", Created: 1}, true)
}

func ocNewWriter(w io.Writer) TurnWriter {
	return openai.NewStreamWriter(w, openai.StreamMeta{ID: "bench-1", Model: "m", Created: 1}, true)
}

func orNewWriter(w io.Writer) TurnWriter {
	return openairesponses.NewStreamWriter(w, openairesponses.StreamMeta{ID: "resp_bench", Model: "m", Created: 1})
}

// TestNoGroundTruthOtherText: on every wire, a valid turn of other text, reasoning and tool
// calls than the script, written by the wire's own encoder, breaks no rule without ground truth
// (every content rule is off), and only content rules with it.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			OtherText(t, w.rules, w.newWriter, w.newChecker)
		})
	}
}

// TestLibraryClean plays every embedded scenario, every turn, against the mock on every wire: a
// correct provider breaks no rule, with ground truth and without, and the frames are classified
// and counted as the load generator's token metrics need. The mock ends every stream with data:
// [DONE], so openai-responses' strict mode (requireDone) passes it too.
func TestLibraryClean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		truth, noTruth Dialect
	}{
		{anthropicmessages.Name, anthropicmessages.New(), Configured(t, anthropicmessages.New(), NoTruth)},
		{openaichat.Name, openaichat.New(), Configured(t, openaichat.New(), NoTruth)},
		{openairesponses.Name, openairesponses.New(), Configured(t, openairesponses.New(), NoTruth)},
		{openairesponses.Name + " requireDone", Configured(t, openairesponses.New(), protocol.Options{"requireDone": true}),
			Configured(t, openairesponses.New(), protocol.Options{"requireDone": true, "noGroundTruth": true})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			LibraryClean(t, mocktest.Start(t, mockprovider.FaultNone), tc.truth, tc.noTruth)
		})
	}
}

// BenchmarkObserve judges a whole 256-frame answer against its ground truth per op (a fresh
// checker each time, as the load generator makes one per stream) and reports the cost and
// allocations per frame (on anthropic-messages and openai-chat the checker's setup is the only
// allocation, none per frame).
func BenchmarkObserve(b *testing.B) {
	for _, w := range wires {
		b.Run(w.name, func(b *testing.B) { BenchObserve(b, w.newWriter, w.newChecker) })
	}
}

// BenchmarkObserveFrame judges one text frame per op on a warm checker without ground truth
// (a cursor would run out of script): 0 allocs/op on anthropic-messages and openai-chat.
func BenchmarkObserveFrame(b *testing.B) {
	for _, w := range wires {
		b.Run(w.name, func(b *testing.B) { BenchObserveFrame(b, w.newWriter, w.newChecker) })
	}
}
