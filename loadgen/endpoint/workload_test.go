package endpoint

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if req, _ := e.Request(7); req.MaxTokens != 3 || req.Messages[0].Text != "hi there" {
		t.Errorf("request %+v", req)
	}
}
