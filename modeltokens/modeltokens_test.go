package modeltokens

import (
	"strings"
	"sync"
	"testing"
)

// TestCountKnownStrings pins counts published by OpenAI's own tiktoken (Python), so the
// embedded vocabularies are the real ones: cl100k_base encodes the Dodgers sentence as
// [791 9853 12167 56567 2834 279 4435 11378 304 220 2366 15 13] (13 tokens, 10 words), and
// o200k_base (gpt-4o) the tutorial's sentence as [851 382 261 1746 4994 11 24000 18582 1136]
// (9 tokens, 6 words).
func TestCountKnownStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		encoding, text string
		want           int
	}{
		// tiktoken's cookbook example, gpt-4
		{CL100K, "The Los Angeles Dodgers won the World Series in 2020.", 13},
		// cl100k_base's classic: two words, two tokens
		{CL100K, "hello world", 2},
		// encoding_for_model("gpt-4o")
		{O200K, "this is a test example, tutorialexample.com", 9},
		// nothing to count
		{CL100K, "", 0},
	} {
		n, err := Count(tc.encoding, tc.text)
		if err != nil || n != tc.want {
			t.Errorf("Count(%s, %q) = %d, %v; want %d", tc.encoding, tc.text, n, err, tc.want)
		}
	}
	// A special token in a model's answer is plain text: several tokens, not one (nor a panic).
	if n, err := Count(CL100K, "<|endoftext|>"); err != nil || n < 2 {
		t.Errorf("<|endoftext|> counted %d, %v: want it counted as text, several tokens", n, err)
	}
	if _, err := Count("p50k_base", "x"); err == nil || !strings.Contains(err.Error(), `unknown encoding "p50k_base"`) {
		t.Errorf("an encoding not embedded: %v", err)
	}
}

// TestCountConcurrently: the first calls from many goroutines at once load the encoding once
// and all count alike (run with -race).
func TestCountConcurrently(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	counts := make([]int, 8)
	for i := range counts {
		wg.Go(func() {
			n, err := Count(CL100K, "The Los Angeles Dodgers won the World Series in 2020.")
			if err != nil {
				t.Error(err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	for i, n := range counts {
		if n != 13 {
			t.Errorf("goroutine %d counted %d, want 13", i, n)
		}
	}
}

func TestForModel(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]string{
		"gpt-4o": O200K, "gpt-4o-mini": O200K, "openai/gpt-4o-2024-05-13": O200K, "gpt-4.1-nano": O200K,
		"gpt-5": O200K, "o1": O200K, "o3-mini": O200K, "o4-mini": O200K, "chatgpt-4o-latest": O200K,
		"gpt-4": CL100K, "gpt-3.5-turbo": CL100K, "meta-llama/Llama-3.1-8B-Instruct": CL100K,
		"olmo-2": CL100K, "o10": CL100K, "": CL100K, "streambench-mock": CL100K,
	} {
		if got := ForModel(model); got != want {
			t.Errorf("ForModel(%q) = %s, want %s", model, got, want)
		}
	}
}

// BenchmarkCount is the cost of one usage-less session's count at its end: a 200-word,
// 261-token answer, reported per token too.
func BenchmarkCount(b *testing.B) {
	text := strings.Repeat("The Los Angeles Dodgers won the World Series in 2020. ", 20)
	n, err := Count(CL100K, text) // loaded before the timer
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Count(CL100K, text); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
}

// TestWords: n words of an encoding's list, space-separated, encode to exactly n tokens.
func TestWords(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{CL100K, O200K} {
		words, err := Words(enc)
		if err != nil || len(words) < 5000 {
			t.Fatalf("%s: %d words, %v", enc, len(words), err)
		}
		for _, n := range []int{1, 2, 17, 512} {
			text := strings.Join(words[len(words)-n:], " ")
			if got, err := Count(enc, text); err != nil || got != n {
				t.Errorf("%s: %d words counted %d tokens, %v", enc, n, got, err)
			}
		}
	}
	if _, err := Words("p50k_base"); err == nil {
		t.Error("an encoding not embedded: no error")
	}
}
