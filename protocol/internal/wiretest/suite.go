package wiretest

import (
	"bytes"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// The bodies of the table tests and benchmarks every provider wire runs over its own rows.

// TextTurn is an answer of n short words, one per frame: the common shape at load.
func TextTurn(n int) *scenarios.ScriptTurn {
	words := []string{"stream ", "bench ", "token ", "the ", "quick ", "fox\n", "\"quoted\" ", "é "}
	turn := &scenarios.ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1, InputTokens: 10, OutputTokens: n}
	for i := range n {
		turn.Steps = append(turn.Steps, scenarios.Step{Kind: scenarios.StepText, Text: words[i%len(words)], Tokens: 1})
	}
	return turn
}

// BenchWrite measures w writing one step per op, going round steps; after (if set) runs after each.
func BenchWrite(b *testing.B, w TurnWriter, turn *scenarios.ScriptTurn, steps []scenarios.Step, after func()) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.Step(turn, &steps[i%len(steps)]); err != nil {
			b.Fatal(err)
		}
		if after != nil {
			after()
		}
		i++
	}
}

// BenchDecode decodes frames, a whole turn, per op, and reports ns/frame.
func BenchDecode(b *testing.B, frames []byte, newStream func(io.Reader) protocol.ModelStream) {
	nframes := bytes.Count(frames, []byte("\n\n"))
	r := bytes.NewReader(frames)
	var ev protocol.ModelEvent
	b.SetBytes(int64(len(frames)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frames)
		st := newStream(r)
		for {
			err := st.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nframes), "ns/frame")
}
