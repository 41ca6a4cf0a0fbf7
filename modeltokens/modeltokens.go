// Package modeltokens counts a text's tokens as OpenAI's BPE encodings do (tiktoken's
// cl100k_base and o200k_base), for the sessions whose server sent no usage report. The
// vocabularies are embedded, so counting needs no network; loading one costs up to a second
// and tens of MiB (docs/ENDPOINTS.md), so it happens on the first Count of that encoding,
// never at start-up.
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
	// CL100K is GPT-4's encoding, and the default: Llama 3's vocabulary extends it, so it is
	// the nearest offline count for most open models.
	CL100K = "cl100k_base"
	O200K  = "o200k_base" // gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the o-series
)

// Method names how an encoding's counts were made, for the results ("tiktoken cl100k_base").
func Method(encoding string) string { return "tiktoken " + encoding }

// ForModel is the encoding for a model name, after any provider prefix ("openai/gpt-4o"):
// O200K for OpenAI's families that use it, CL100K for every other name.
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
// as plain text. The first call for an encoding loads it. Safe for concurrent use: at most
// GOMAXPROCS counts run at once, so the encoder's working memory (tens of bytes per byte of
// text) stays bounded however many sessions end together.
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

// counting bounds the counts that run at once; encodings load each encoding once (a cache,
// read-only after init).
var counting = make(chan struct{}, runtime.GOMAXPROCS(0))

var encodings = map[string]func() (*tiktoken.Tiktoken, error){
	CL100K: sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return getEncoding(CL100K) }),
	O200K:  sync.OnceValues(func() (*tiktoken.Tiktoken, error) { return getEncoding(O200K) }),
}

// setLoader points tiktoken (once: a package variable) at the embedded vocabularies instead of
// its default loader, which downloads them.
var setLoader = sync.OnceFunc(func() { tiktoken.SetBpeLoader(tiktokenloader.NewOfflineLoader()) })

func getEncoding(name string) (*tiktoken.Tiktoken, error) {
	setLoader()
	return tiktoken.GetEncoding(name)
}
