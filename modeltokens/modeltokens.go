// Package modeltokens counts a text's tokens as OpenAI's BPE encodings do (tiktoken's
// cl100k_base and o200k_base), for the sessions whose server sent no usage report: their output
// tokens are then counted by a model's tokenizer, not estimated from words.
//
// The vocabularies are embedded (github.com/pkoukk/tiktoken-go-loader), so counting needs no
// network. Loading one takes 0.13 to 0.57 s (cl100k_base; 0.30 to 1.3 s for o200k_base, idle
// to busy machine) and keeps 11 MiB of heap (22 MiB), so it happens on the first Count of that
// encoding, once per process, never at start-up: a run whose sessions all report usage never
// pays it. A count costs about 1 µs a token (BenchmarkCount).
package modeltokens

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktokenloader "github.com/pkoukk/tiktoken-go-loader"
)

// The encodings Count knows, by tiktoken's names.
const (
	// CL100K is GPT-4's and GPT-3.5's encoding, and the default: Llama 3's vocabulary extends
	// it, so it is the nearest offline count for most open models.
	CL100K = "cl100k_base"
	// O200K is the encoding of gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the o-series.
	O200K = "o200k_base"
)

// Method names how an encoding's counts were made, for the results ("tiktoken cl100k_base").
func Method(encoding string) string { return "tiktoken " + encoding }

// ForModel is the encoding for a model name: O200K for OpenAI's gpt-4o, gpt-4.1, gpt-4.5 and
// gpt-5 families and its o-series (o1, o3, o4 and their variants), after any provider prefix
// ("openai/gpt-4o"); CL100K for every other name, an open model's included.
func ForModel(model string) string {
	m := strings.ToLower(model[strings.LastIndex(model, "/")+1:])
	for _, family := range []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4"} {
		if m == family || strings.HasPrefix(m, family+"-") || (strings.HasPrefix(family, "gpt-") && strings.HasPrefix(m, family)) {
			return O200K
		}
	}
	return CL100K
}

// Count is the number of tokens of text in encoding (CL100K or O200K), special tokens counted
// as the plain text they are in a model's answer. The first call for an encoding loads it
// (up to 1.3 s); later calls reuse it. Safe for concurrent use: at most GOMAXPROCS counts run
// at once, the others wait, so the encoder's working memory (tens of bytes per byte of text)
// stays bounded however many sessions end together.
func Count(encoding, text string) (int, error) {
	counting <- struct{}{}
	defer func() { <-counting }()
	enc, err := encoder(encoding)
	if err != nil {
		return 0, err
	}
	return len(enc.EncodeOrdinary(text)), nil
}

// encoder is encoding's tokenizer, loaded on first use.
func encoder(encoding string) (*tiktoken.Tiktoken, error) {
	load, ok := encodings[encoding]
	if !ok {
		return nil, fmt.Errorf("modeltokens: unknown encoding %q: want %s or %s", encoding, CL100K, O200K)
	}
	enc, err := load()
	if err != nil {
		return nil, fmt.Errorf("modeltokens: loading %s: %w", encoding, err)
	}
	return enc, nil
}

// Words are encoding's one-token words, sorted: lowercase ASCII words w that are one token
// alone and one as " w", so w1 followed by n-1 words " wi" is n tokens (tiktoken splits a text
// at word boundaries before it merges, and a piece that is a token is that token). Built from
// the vocabulary once per process, on first use; the caller must not change the slice.
func Words(encoding string) ([]string, error) {
	if _, err := encoder(encoding); err != nil {
		return nil, err
	}
	return wordLists[encoding]()
}

var wordLists = map[string]func() ([]string, error){
	CL100K: sync.OnceValues(func() ([]string, error) { return words(CL100K) }),
	O200K:  sync.OnceValues(func() ([]string, error) { return words(O200K) }),
}

func words(encoding string) ([]string, error) {
	enc, err := encoder(encoding)
	if err != nil {
		return nil, err
	}
	tokens := map[string]bool{}
	for id := range 1 << 18 { // beyond both vocabularies; an unknown id decodes to ""
		tokens[enc.Decode([]int{id})] = true
	}
	var out []string
	for t := range tokens {
		if w, ok := strings.CutPrefix(t, " "); ok && w != "" && tokens[w] && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out, nil
}

// encodings load each encoding once, on first use: read-only after init, each value loaded
// under its own sync.Once, so this is a cache, not state a caller can change.
// counting bounds the counts that run at once.
var counting = make(chan struct{}, runtime.GOMAXPROCS(0))

var encodings = map[string]func() (*tiktoken.Tiktoken, error){
	CL100K: sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return getEncoding(CL100K) }),
	O200K:  sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return getEncoding(O200K) }),
}

// setLoader points tiktoken at the embedded vocabularies instead of its default loader, which
// downloads them; tiktoken keeps the loader in a package variable, so it is set once.
var setLoader = sync.OnceFunc(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })

func getEncoding(name string) (*tiktoken.Tiktoken, error) {
	setLoader()
	return tiktoken.GetEncoding(name)
}
