package openai

import (
	"bytes"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// textTurn is a 256-frame answer of one short word per frame, the common shape at load.
func textTurn() *scenarios.ScriptTurn {
	words := []string{"stream ", "bench ", "token ", "the ", "quick ", "fox\n", "\"quoted\" ", "é "}
	turn := &scenarios.ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1, InputTokens: 10, OutputTokens: 256}
	for i := range 256 {
		turn.Steps = append(turn.Steps, scenarios.Step{Kind: scenarios.StepText, Text: words[i%len(words)], Tokens: 1})
	}
	return turn
}

// BenchmarkStreamWriterStep measures writing one text frame (one op = one Step).
func BenchmarkStreamWriterStep(b *testing.B) {
	turn := textTurn()
	w := NewStreamWriter(io.Discard, testMeta, true)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.Step(turn, &turn.Steps[i%len(turn.Steps)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkStreamWriterToolStep measures writing one tool-arguments frame.
func BenchmarkStreamWriterToolStep(b *testing.B) {
	turn := smallTurn()
	step := &turn.Steps[5]
	w := NewStreamWriter(io.Discard, testMeta, true)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Step(turn, step); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTextTurn decodes a whole 256-frame text turn per op and reports ns/frame.
func BenchmarkDecodeTextTurn(b *testing.B) {
	turn := textTurn()
	frames := writeTurn(b, turn, testMeta, true)
	nframes := bytes.Count(frames, []byte("\n\n"))
	r := bytes.NewReader(frames)
	var ev protocol.ModelEvent
	b.SetBytes(int64(len(frames)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frames)
		st := Wire{}.NewStream(r)
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
