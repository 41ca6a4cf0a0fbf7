package session

import (
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// TestScriptedFirst: when a script has the first chunk and token due, per kind of client,
// from the scenario's constant timings (ttft 200 ms, itl 10 ms) worked out by hand.
func TestScriptedFirst(t *testing.T) {
	t.Parallel()
	const head = "name: x\ntiming:\n  ttft: 200ms\n  itl: 10ms\nturns:\n"
	ms := time.Millisecond
	optedIn := simchat.NewClient(true, simchat.Policy{IncludeThinking: true, IncludeToolCalls: true})
	noThinking := simchat.NewClient(true, simchat.Policy{})
	legacy := simchat.NewClient(false, simchat.Policy{})
	lastStepOfTurn0 := func(s *scenarios.Script) time.Duration { st := s.Turns[0].Steps; return st[len(st)-1].At }
	for _, tc := range []struct {
		name, turns string
		client      protocol.Client
		scale       float64
		// chunk and token are the due times worked out from the timings; the script is
		// passed for what depends on the seed (how many frames a tool's arguments take).
		chunk, token func(*scenarios.Script) time.Duration
	}{
		// the first text frame comes at the ttft, and carries the first token
		{"plain", "  - text: {tokens: 4}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 200 * ms }, func(*scenarios.Script) time.Duration { return 200 * ms }},
		// the mock's time scale scales the script
		{"scaled", "  - text: {tokens: 4}\n", optedIn, 0.05,
			func(*scenarios.Script) time.Duration { return 10 * ms }, func(*scenarios.Script) time.Duration { return 10 * ms }},
		// thinking is the first token; the answer follows 5 thinking tokens at 10 ms each
		{"thinking seen", "  - thinking: {tokens: 5}\n    text: {tokens: 4}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 250 * ms }, func(*scenarios.Script) time.Duration { return 200 * ms }},
		// a client not sent thinking has its first token with the answer
		{"thinking unseen", "  - thinking: {tokens: 5}\n    text: {tokens: 4}\n", noThinking, 1,
			func(*scenarios.Script) time.Duration { return 250 * ms }, func(*scenarios.Script) time.Duration { return 250 * ms }},
		// after a tool turn: turn 0's last frame, the tool's 300 ms, then turn 1's ttft
		{"after a tool", "  - toolCalls:\n      - {name: t, duration: 300ms}\n  - text: {tokens: 4}\n", optedIn, 1,
			func(s *scenarios.Script) time.Duration { return lastStepOfTurn0(s) + 300*ms + 200*ms },
			func(s *scenarios.Script) time.Duration { return lastStepOfTurn0(s) + 300*ms + 200*ms }},
		// a legacy client is sent the settled answer: due with the last of 4 answer tokens
		{"settled", "  - text: {tokens: 4}\n", legacy, 1,
			func(*scenarios.Script) time.Duration { return 230 * ms }, func(*scenarios.Script) time.Duration { return 230 * ms }},
		// a provider that fails before any stream has nothing due
		{"provider 429", "  - text: {tokens: 4}\nfaults:\n  httpError: {turn: 0, status: 429}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 0 }, func(*scenarios.Script) time.Duration { return 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, err := scenarios.Parse("x.yaml", []byte(head+tc.turns))
			if err != nil {
				t.Fatal(err)
			}
			script := sc.Render(7)
			got := scriptedFirst(script, tc.client, tc.scale)
			if want := (scriptedLatency{chunk: tc.chunk(script), token: tc.token(script)}); got != want {
				t.Errorf("scriptedFirst = chunk %v token %v, want chunk %v token %v", got.chunk, got.token, want.chunk, want.token)
			}
		})
	}
}
