package measure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRecordsWriter: records added before Open are written once it names the directory, one
// JSON object a line, in order; past the bound they are counted, not written; a writer never
// opened, or whose queue the disk could not keep up with, says so.
func TestRecordsWriter(t *testing.T) {
	t.Parallel()
	rec := func(i int) *Record {
		return &Record{Session: "r-" + strconv.Itoa(i), Scenario: "plain-answer", Dialect: "sim-chat",
			Start: time.Unix(1_700_000_000, 0).UTC(), TTFTMs: Millis(1500 * time.Microsecond), OutputTokens: 7, Outcome: OutcomeCompleted}
	}
	dir := t.TempDir()
	w := NewRecordsWriter()
	w.Record(rec(0))
	w.Open(dir)
	w.Open(t.TempDir()) // a second Open changes nothing
	for i := 1; i < 5; i++ {
		w.Record(rec(i))
	}
	if info := w.Close(); info != (RecordsInfo{Written: 5}) {
		t.Errorf("info %+v, want 5 written", info)
	}
	b, err := os.ReadFile(filepath.Join(dir, RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for line := range bytes.Lines(b) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil || r.Session != "r-"+strconv.Itoa(i) || r.TTFTMs != 1.5 || r.OutputTokens != 7 {
			t.Errorf("line %d: %+v, %v: %s", i, r, err, line)
		}
		i++
	}
	if i != 5 {
		t.Errorf("%d lines, want 5", i)
	}

	bounded := NewRecordsWriter()
	bounded.max = int64(3 * len(mustJSON(t, rec(0))))
	bounded.Open(t.TempDir())
	for i := range 5 {
		bounded.Record(rec(i))
	}
	if info := bounded.Close(); info.Written != 3 || info.LeftOut != 2 || !strings.Contains(info.Why, "reached its bound") {
		t.Errorf("bounded: %+v, want 3 written and 2 left out at the bound", info)
	}

	// Never opened: the queue fills, then the rest are left out as they come.
	unopened := NewRecordsWriter()
	for i := range recordsQueue + 10 {
		unopened.Record(rec(i))
	}
	info := unopened.Close()
	if info.Written != 0 || info.LeftOut != recordsQueue+10 || !strings.Contains(info.Why, "no results directory") || !strings.Contains(info.Why, "the disk fell behind") {
		t.Errorf("never opened: %+v", info)
	}
	var none *RecordsWriter
	if info := none.Close(); info != (RecordsInfo{}) {
		t.Errorf("nil writer: %+v", info)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestRecordsStream: --out -'s writer hands each record to its stream as it comes (a reader of
// the pipe sees a record before the run ends), one JSON object a line, and needs no Open.
func TestRecordsStream(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	w := NewRecordsStream(pw)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for i := range 3 {
		w.Record(&Record{Session: "s-" + strconv.Itoa(i), Outcome: OutcomeCompleted})
		select {
		case l := <-lines: // before Close: flushed as it came
			var r Record
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.Session != "s-"+strconv.Itoa(i) {
				t.Fatalf("line %q: %v, want session s-%d", l, err, i)
			}
		case <-time.After(time.Minute):
			t.Fatalf("record %d not seen on the stream before the writer closed", i)
		}
	}
	if info := w.Close(); info != (RecordsInfo{Written: 3}) {
		t.Errorf("info %+v, want 3 written", info)
	}
	pw.Close()
	if l, ok := <-lines; ok {
		t.Errorf("an extra line %q", l)
	}
}
