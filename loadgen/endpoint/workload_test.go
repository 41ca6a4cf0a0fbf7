package endpoint

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/modeltokens"
)

func TestParseTokenDist(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, tt := range []struct {
		spec     string
		lo, hi   int
		wantKind string
	}{{"512", 512, 512, "fixed"}, {"512±64", 200, 800, "normal"}, {"512+-64", 200, 800, "normal"}, {"uniform:256-768", 256, 768, "uniform"}} {
		d, err := ParseTokenDist(tt.spec)
		if err != nil || d.Kind != tt.wantKind {
			t.Fatalf("%q: %+v, %v", tt.spec, d, err)
		}
		for range 200 {
			if n := d.Sample(r); n < tt.lo || n > tt.hi {
				t.Fatalf("%q: sampled %d outside [%d, %d]", tt.spec, n, tt.lo, tt.hi)
			}
		}
	}
	for _, bad := range []string{"0", "-3", "x", "uniform:9-3", "uniform:5", "512±x"} {
		if _, err := ParseTokenDist(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestLoadPrompts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "p.jsonl")
	os.WriteFile(jsonl, []byte(`"plain string"
{"prompt":"a prompt"}
{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"parts"}]}]}
{"conversations":[{"from":"human","value":"hi there"},{"from":"gpt","value":"one two three"}]}
`), 0o600)
	ps, err := LoadPrompts(jsonl)
	if err != nil || len(ps) != 4 {
		t.Fatalf("%d prompts, %v", len(ps), err)
	}
	if ps[2].Messages[0].Role != "system" || ps[2].Messages[1].Text != "parts" || ps[3].ReplyTokens != 3 || ps[3].Messages[0].Text != "hi there" {
		t.Errorf("prompts %+v", ps)
	}
	share := filepath.Join(dir, "sharegpt.json")
	os.WriteFile(share, []byte(`[{"id":"a","conversations":[{"from":"gpt","value":"no human"}]},{"id":"b","conversations":[{"from":"human","value":"q"},{"from":"gpt","value":"a b"}]}]`), 0o600)
	if ps, err := LoadPrompts(share); err != nil || len(ps) != 1 || ps[0].ReplyTokens != 2 {
		t.Errorf("ShareGPT: %+v, %v", ps, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"prompt\":\"ok\"}\nnot json\n"), 0o600)
	if _, err := LoadPrompts(bad); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("bad line: %v", err)
	}
	// The endpoint request samples a prompt with the seed and takes the reply's length as
	// max_tokens when no --output-tokens is given.
	e := &Workload{Prompts: ps[3:]}
	if req, _ := e.Request(0, 7); req.MaxTokens != 3 || req.Messages[0].Text != "hi there" {
		t.Errorf("request %+v", req)
	}
}

// TestExactTokensAndPrefixes: a synthetic prompt has exactly its length in the tokenizer's
// tokens (after a prefix of --prefix-tokens), and sessions of the same pool prefix begin with
// the same words.
func TestExactTokensAndPrefixes(t *testing.T) {
	t.Parallel()
	input, _ := ParseTokenDist("uniform:1-300")
	for _, enc := range []string{modeltokens.CL100K, modeltokens.O200K} {
		e := &Workload{Input: input, Tokenizer: enc, PrefixTokens: 100, PrefixPool: 3}
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		prefixes := map[string]int{}
		for seed := range uint64(30) {
			text := userMessage(e, seed)
			n, err := modeltokens.Count(enc, text)
			want := 100 + input.Sample(seedRand(seed))
			if err != nil || n != want {
				t.Fatalf("%s seed %d: %d tokens, %v; want %d", enc, seed, n, err, want)
			}
			prefixes[strings.Join(strings.Fields(text)[:100], " ")]++
		}
		if len(prefixes) != 3 {
			t.Errorf("%s: %d distinct 100-token prefixes over 30 sessions of a pool of 3", enc, len(prefixes))
		}
	}
}

func seedRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x656e64706f696e74)) }

func userMessage(e *Workload, seed uint64) string {
	req, _ := e.Request(seed, seed)
	return req.Messages[0].Text
}
