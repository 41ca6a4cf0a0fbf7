package scenarios

import (
	"testing"
)

// TestTokenCounterMatchesScript pins the counter to the ground truth: fed every library
// scenario's thinking and text steps, in any chunking, it counts exactly the tokens the script
// gave those steps.
func TestTokenCounterMatchesScript(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		for seed := uint64(1); seed <= 20; seed++ {
			script := sc.Render(seed)
			var want, asSteps, asBytes int
			var steps, bytewise TokenCounter
			for _, turn := range script.Turns {
				for _, st := range turn.Steps {
					switch st.Kind {
					case StepThinking:
						want += st.Tokens
						asSteps += steps.Thinking(st.Text)
						for i := range len(st.Text) {
							asBytes += bytewise.ThinkingBytes([]byte(st.Text[i : i+1]))
						}
					case StepText:
						want += st.Tokens
						asSteps += steps.Text(st.Text)
						for i := range len(st.Text) {
							asBytes += bytewise.TextBytes([]byte(st.Text[i : i+1]))
						}
					}
				}
				// A turn ends in tool calls (or the script ends): checkers break there.
				steps.Break()
				bytewise.Break()
			}
			if asSteps != want || asBytes != want {
				t.Fatalf("%s seed %d: counted %d tokens by step, %d byte by byte; the script has %d", name, seed, asSteps, asBytes, want)
			}
		}
	}
}

func TestTokenCounter(t *testing.T) {
	t.Parallel()
	type feed struct {
		thinking bool
		piece    string
	}
	for _, tc := range []struct {
		name  string
		feeds []feed
		want  []int
	}{
		// One word per chunk, the way the mock sends one token per frame.
		{"one per chunk", []feed{{false, "Hello"}, {false, " world"}, {false, "."}}, []int{1, 1, 0}},
		// A coalesced chunk carries several tokens.
		{"coalesced", []feed{{false, "Hello world, how are"}, {false, " you?"}}, []int{4, 1}},
		// A word split over chunks counts once, where it begins.
		{"split word", []feed{{false, "Hel"}, {false, "lo wo"}, {false, "rld"}}, []int{1, 1, 0}},
		// Multi-byte words and a non-ASCII space (U+3000) between them.
		{"unicode", []feed{{false, "日本\u3000東京 café"}}, []int{3}},
		// Thinking then text: the answer's first word is a token even with no space before it.
		{"thinking then text", []feed{{true, "let me think"}, {false, "Answer"}}, []int{3, 1}},
		// Text then thinking (a later turn): the thinking's first word is a new token.
		{"text then thinking", []feed{{false, "Preamble"}, {true, "again"}}, []int{1, 1}},
		// Whitespace alone carries no token.
		{"whitespace", []feed{{false, "  \n"}}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c TokenCounter
			for i, f := range tc.feeds {
				var got int
				if f.thinking {
					got = c.Thinking(f.piece)
				} else {
					got = c.Text(f.piece)
				}
				if got != tc.want[i] {
					t.Errorf("piece %d %q: %d tokens, want %d", i, f.piece, got, tc.want[i])
				}
			}
		})
	}
}

func BenchmarkTokenCounter(b *testing.B) {
	piece := []byte(" lorem ipsum, café dolor")
	var c TokenCounter
	b.ReportAllocs()
	for b.Loop() {
		c.TextBytes(piece)
	}
}
