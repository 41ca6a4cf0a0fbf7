package endpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/modeltokens"
)

// TestLoadTrace reads both formats, detected and named, sorted by time from the first row; a
// row that cannot be read is an error naming the file and the line.
func TestLoadTrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mooncake := write("m.jsonl", `{"timestamp": 1000, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]}

{"timestamp": 500, "input_length": 20, "output_length": 0, "hash_ids": []}
`)
	azure := write("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n")
	for _, tc := range []struct {
		path, format string
		want         []TraceRow
	}{
		// out of order in the file, an empty line skipped, an output length of 0 sent as 1
		{mooncake, "", []TraceRow{{At: 0, Input: 20, Output: 1, Blocks: []uint64{}}, {At: 500 * time.Millisecond, Input: 700, Output: 5, Blocks: []uint64{1, 2}}}},
		{mooncake, Mooncake, nil},
		// 100 ns digits, as the Azure trace writes them
		{azure, "", []TraceRow{{At: 0, Input: 374, Output: 44}, {At: 4314579 * time.Microsecond, Input: 396, Output: 109}}},
		{azure, Azure, nil},
	} {
		rows, err := LoadTrace(tc.path, tc.format)
		if err != nil {
			t.Fatalf("%s (%q): %v", tc.path, tc.format, err)
		}
		if tc.want != nil && !sameRows(rows, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.path, rows, tc.want)
		}
	}
	for i, tc := range []struct{ text, format, want string }{
		// a line that is not a Mooncake record: no timestamp, a negative length
		{"{\"timestamp\": 1, \"input_length\": 3}\n{\"input_length\": 3}\n", "", "bad0:2: "},
		{"{\"timestamp\": 1, \"input_length\": -3}\n", "", "bad1:1: "},
		// a CSV without the Azure columns, a row of bad numbers, a bad time
		{"time,in,out\n1,2,3\n", "", "bad2:1: want a header with the columns TIMESTAMP"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,1,2\n2023-11-16 18:15:47,x,2\n", "", "bad3:3: "},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\nyesterday,1,2\n", "", "bad4:2: "},
		// the header alone; a format streambench does not read
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n", "", "no request"},
		{"{}", "sharegpt", `trace format "sharegpt"`},
	} {
		if _, err := LoadTrace(write(fmt.Sprintf("bad%d", i), tc.text), tc.format); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

func sameRows(a, b []TraceRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].At != b[i].At || a[i].Input != b[i].Input || a[i].Output != b[i].Output || len(a[i].Blocks) != len(b[i].Blocks) {
			return false
		}
	}
	return true
}

// TestTraceRequests: a trace row's prompt is its input length in the tokenizer's tokens and
// its max_tokens its output length; its hash_ids blocks are the same text in every row that
// has them, and the rest is the session's own.
func TestTraceRequests(t *testing.T) {
	t.Parallel()
	// Row 0 has 1,024 tokens of blocks and 176 of its own; row 1 shares its first block.
	e := &Workload{Trace: []TraceRow{{Input: 1200, Output: 9, Blocks: []uint64{7, 8}}, {Input: 600, Output: 3, Blocks: []uint64{7, 5}}, {Input: 40}}}
	if err := e.Check(); err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 4)
	for i := range texts {
		req, _ := e.Request(uint64(i), uint64(i)+100)
		texts[i] = req.Messages[0].Text
		row := e.Trace[i%3]
		if n, err := modeltokens.Count(modeltokens.CL100K, texts[i]); err != nil || n != row.Input || req.MaxTokens != row.Output {
			t.Errorf("row %d: %d tokens, max_tokens %d, %v; want %d and %d", i, n, req.MaxTokens, err, row.Input, row.Output)
		}
	}
	block7 := strings.Join(strings.Fields(texts[0])[:TraceBlockTokens], " ")
	if !strings.HasPrefix(texts[1], block7+" ") || strings.HasPrefix(texts[2], block7) || texts[3] == texts[0] || !strings.HasPrefix(texts[3], block7) {
		t.Error("block 7 is not the shared prefix of rows 0 and 1 (and 3, row 0 again) alone")
	}
}
