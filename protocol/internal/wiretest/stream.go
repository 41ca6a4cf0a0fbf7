package wiretest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// RoundTrip is a scripted turn a wire writes and reads back, and the stop it must end with.
type RoundTrip struct {
	Name     string
	Turn     *scenarios.ScriptTurn
	WantStop protocol.StopReason
}

// RoundTrips writes every case's turn with frames and decodes it whole and one byte at a time
// with w: the turn's text, thinking and calls come back, the stop and usage (input tokens
// inputTokens) with one turn end.
func RoundTrips(t *testing.T, w protocol.ProviderWire, frames func(testing.TB, *scenarios.ScriptTurn) []byte, inputTokens int, cases []RoundTrip) {
	for _, tt := range cases {
		for _, reads := range []string{"whole", "one byte"} {
			t.Run(tt.Name+"/"+reads, func(t *testing.T) {
				t.Parallel()
				var r io.Reader = bytes.NewReader(frames(t, tt.Turn))
				if reads == "one byte" {
					r = iotest.OneByteReader(r)
				}
				got, err := DecodeAll(t, w.NewStream(r))
				if err != io.EOF {
					t.Fatalf("stream ended with %v, want io.EOF", err)
				}
				want := WantFromTurn(tt.Turn, len(tt.Turn.Steps))
				want.Stop, want.TurnEnds = tt.WantStop, 1
				want.Usage = protocol.Usage{InputTokens: inputTokens, OutputTokens: tt.Turn.OutputTokens}
				AssertAccumulated(t, got, want)
			})
		}
	}
}

// MidStreamError reads frames of turn, which fails after its step errAfter, with w: the
// stream ends in a 200 ProviderError of errType and the turn's message, after what came before.
func MidStreamError(t *testing.T, w protocol.ProviderWire, frames []byte, turn *scenarios.ScriptTurn, errType string) {
	t.Helper()
	got, err := DecodeAll(t, w.NewStream(bytes.NewReader(frames)))
	var perr *protocol.ProviderError
	if !errors.As(err, &perr) {
		t.Fatalf("stream ended with %v, want *protocol.ProviderError", err)
	}
	want := protocol.ProviderError{Status: http.StatusOK, Type: errType, Message: turn.ErrorMessage}
	if *perr != want {
		t.Errorf("error = %+v, want %+v", *perr, want)
	}
	AssertAccumulated(t, got, WantFromTurn(turn, turn.ErrorAfterStep))
}

// Tolerated is a hand-written stream that is odd but valid, and what it decodes to.
type Tolerated struct {
	Name, Stream string
	Want         Accumulated
}

// Tolerates decodes every case's stream with w: it ends cleanly with the wanted content.
func Tolerates(t *testing.T, w protocol.ProviderWire, cases []Tolerated) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeAll(t, w.NewStream(strings.NewReader(tt.Stream)))
			if err != io.EOF {
				t.Fatalf("stream ended with %v, want io.EOF", err)
			}
			AssertAccumulated(t, got, tt.Want)
		})
	}
}

// FuzzStream decodes data with w: at most one event a byte, and the error that ends the
// stream is returned again (the same value, or with sameText the same text).
func FuzzStream(t *testing.T, w protocol.ProviderWire, data []byte, sameText bool) {
	st := w.NewStream(bytes.NewReader(data))
	var ev protocol.ModelEvent
	for i := 0; ; i++ {
		err := st.Next(&ev)
		if err != nil {
			if err2 := st.Next(&ev); err2 != err && (!sameText || err2.Error() != err.Error()) {
				t.Fatalf("error changed from %v to %v", err, err2)
			}
			return
		}
		if i > len(data) {
			t.Fatalf("%d events from %d bytes", i, len(data))
		}
	}
}

// TransportError cuts frames in half with a read error (a reset connection, a cancelled
// request): w's stream returns it wrapped, never a clean end.
func TransportError(t *testing.T, w protocol.ProviderWire, frames []byte) {
	t.Helper()
	boom := errors.New("connection reset by peer")
	r := io.MultiReader(bytes.NewReader(frames[:len(frames)/2]), iotest.ErrReader(boom))
	if _, err := DecodeAll(t, w.NewStream(r)); !errors.Is(err, boom) {
		t.Fatalf("stream ended with %v, want it to wrap %v", err, boom)
	}
}
