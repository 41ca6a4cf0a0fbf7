package endpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConversations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "c.jsonl")
	os.WriteFile(good, []byte(`{"turns":["one","two","three"]}

{"conversations":[{"from":"system","value":"be brief"},{"from":"human","value":"q1"},{"from":"gpt","value":"a b c"},{"from":"human","value":"q2"}]}
`), 0o600)
	cs, err := LoadConversations(good)
	if err != nil || len(cs) != 2 {
		t.Fatalf("%d conversations, %v", len(cs), err)
	}
	if got := cs[0].Turns; len(got) != 3 || got[2] != "three" {
		t.Errorf("turns %q", got)
	}
	// ShareGPT: only the human turns are sent; the gpt reply's length is the turn's max_tokens.
	if c := cs[1]; c.System != "be brief" || len(c.Turns) != 2 || c.Turns[1] != "q2" || c.ReplyTokens[0] != 3 || c.ReplyTokens[1] != 0 {
		t.Errorf("ShareGPT conversation %+v", c)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		// not JSON, on the third line
		{"notjson", "{\"turns\":[\"a\"]}\n\nnot json\n", "bad.jsonl:3: not a JSON value: want {\"turns\""},
		// an empty turn
		{"emptyturn", `{"turns":["a",""]}`, `bad.jsonl:1: turns[1] is "\"\"": want a non-empty string`},
		// a turn that is not a string
		{"number", `{"turns":[1]}`, "bad.jsonl:1: turns[0] is \"1\": want a non-empty string"},
		// neither shape
		{"prompt", `{"prompt":"x"}`, `bad.jsonl:1: want {"turns":[`},
		// a ShareGPT speaker that is neither
		{"from", `{"conversations":[{"from":"robot","value":"x"}]}`, `bad.jsonl:1: conversations[0].from "robot": want human`},
		// no human turn
		{"nohuman", `{"conversations":[{"from":"gpt","value":"x"}]}`, "bad.jsonl:1: a ShareGPT record without a human turn"},
		// nothing at all
		{"empty", "\n\n", "bad.jsonl: no conversation"},
	} {
		path := filepath.Join(t.TempDir(), "bad.jsonl")
		os.WriteFile(path, []byte(tc.body), 0o600)
		if _, err := LoadConversations(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
