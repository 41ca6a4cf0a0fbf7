package measure_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// seededRun builds a deterministic run: histograms from a seeded generator, fixed times.
func seededRun(t testing.TB) *measure.Run {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	h := measure.NewHistograms()
	for _, k := range []measure.Key{
		{Metric: measure.FirstChunk, Scenario: "plain-answer", Dialect: "sim-chat"},
		{Metric: measure.ChunkGap, Scenario: "plain-answer", Dialect: "sim-chat"},
		{Metric: measure.FirstChunk, Scenario: "tool-loop", Dialect: "compose"},
	} {
		for range 500 {
			d := 50*time.Millisecond + time.Duration(rng.ExpFloat64()*float64(20*time.Millisecond))
			if err := h.Record(k, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &measure.Run{
		Summary: measure.Summary{
			RunID:   "run-1",
			Started: start,
			Ended:   start.Add(30 * time.Second),
			Config: measure.Config{Target: "http://127.0.0.1:8080", Dialects: []string{"sim-chat", "compose"},
				Clients: 100, Duration: 30 * time.Second, Warmup: 2 * time.Second, Seed: 7,
				Thresholds: []string{"ttfc.p99<300ms"}},
			Environment: measure.Environment{GoVersion: "go1.26", OS: "linux", Arch: "amd64", CPUs: 2},
			Metrics:     measure.Summarize(h),
			Overall:     measure.SummarizeOverall(h),
			Counters: measure.Counters{SessionsStarted: 1000, SessionsOK: 990, SessionsFailed: 10,
				HTTPErrors: map[int]int64{503: 4}, Outcomes: map[measure.Outcome]int64{measure.OutcomeHTTPError: 4, measure.OutcomeTransportError: 6}, Frames: 50000, Bytes: 1 << 20},
			Violations: map[protocol.Rule]int64{protocol.RConverge: 2},
			Leaks:      []measure.Leak{{Source: "runtime", Name: "go_goroutines", Before: 10, After: 12, Delta: 2, Tolerance: 5, OK: true}},
			Verdict:    measure.Verdict{Pass: false, Reasons: []string{"2 violations"}},
		},
		Histograms: h,
		Timeline:   []measure.TimelinePoint{{Second: 0, Active: 10, Started: 10}, {Second: 1, Active: 8, Completed: 2, Frames: 300, Errors: 1}},
		Samples: []measure.ViolationSample{{Session: "s1", Scenario: "plain-answer", Dialect: "sim-chat", Seed: 9,
			Rule: protocol.RConverge, Detail: "text differs", Frames: []string{`data: {"chunk":"<b>"}`, `data: "[DONE]"`}}},
	}
}

// writeRead writes r into dir and reads it back.
func writeRead(t testing.TB, dir string, r *measure.Run) *measure.Run {
	t.Helper()
	if err := measure.WriteRun(dir, r); err != nil {
		t.Fatal(err)
	}
	got, err := measure.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWriteReadRunRoundTrip(t *testing.T) {
	t.Parallel()
	want := seededRun(t)
	dir := t.TempDir()
	got := writeRead(t, dir, want)
	if !measure.EqualHistograms(got.Histograms, want.Histograms) {
		t.Errorf("histograms differ after round trip: keys %v vs %v", got.Histograms.Keys(), want.Histograms.Keys())
	}
	want.Summary.Schema = measure.SchemaVersion
	gh, wh := got.Histograms, want.Histograms
	got.Histograms, want.Histograms = nil, nil
	defer func() { want.Histograms = wh }()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("run differs after round trip:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(measure.Summarize(gh), want.Summary.Metrics) {
		t.Error("summaries recomputed from read histograms differ from the written ones")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestEmptyRunRoundTrip(t *testing.T) {
	t.Parallel()
	// A zero start time (before the Unix epoch) must still give a readable log.
	got := writeRead(t, t.TempDir(), &measure.Run{Summary: measure.Summary{RunID: "empty"}})
	if got.Summary.RunID != "empty" || got.Histograms.Len() != 0 || len(got.Timeline) != 0 || len(got.Samples) != 0 {
		t.Errorf("empty run read back as %+v", got)
	}
}

func TestRecordRange(t *testing.T) {
	t.Parallel()
	h := measure.NewHistograms()
	k := measure.Key{Metric: measure.FirstChunk, Scenario: "s", Dialect: "d"}
	for _, tc := range []struct {
		d       time.Duration
		wantErr bool
	}{
		{0, false},                      // zero records as 0 µs
		{500 * time.Nanosecond, false},  // sub-microsecond rounds down
		{time.Hour, false},              // the top of the range
		{-time.Millisecond, true},       // negative: clock went backwards
		{time.Hour + time.Second, true}, // over the top
	} {
		err := h.Record(k, tc.d)
		if (err != nil) != tc.wantErr {
			t.Errorf("Record(%v) error = %v, want error %v", tc.d, err, tc.wantErr)
		}
		if err != nil && !errors.Is(err, measure.ErrOutOfRange) {
			t.Errorf("Record(%v) error %v does not wrap ErrOutOfRange", tc.d, err)
		}
	}
	if got := h.Get(k).TotalCount(); got != 3 {
		t.Errorf("TotalCount = %d, want 3", got)
	}
}

func TestMergeDoesNotAlias(t *testing.T) {
	t.Parallel()
	k := measure.Key{Metric: measure.ChunkGap, Scenario: "s", Dialect: "d"}
	a, b := measure.NewHistograms(), measure.NewHistograms()
	_ = b.Record(k, time.Millisecond)
	if dropped := a.Merge(b); dropped != 0 {
		t.Fatalf("dropped %d", dropped)
	}
	_ = a.Record(k, time.Second)
	if b.Get(k).TotalCount() != 1 || a.Get(k).TotalCount() != 2 {
		t.Errorf("counts a=%d b=%d, want 2 and 1", a.Get(k).TotalCount(), b.Get(k).TotalCount())
	}
	if a.Get(measure.Key{Metric: "none"}) != nil {
		t.Error("Get of an absent key is not nil")
	}
}

func TestKeysSortedInReportOrder(t *testing.T) {
	t.Parallel()
	h := measure.NewHistograms()
	for _, k := range []measure.Key{
		{Metric: measure.StreamDuration, Scenario: "a", Dialect: "x"},
		{Metric: measure.FirstChunk, Scenario: "b", Dialect: "x"},
		{Metric: measure.FirstChunk, Scenario: "a", Dialect: "y"},
		{Metric: measure.Connect, Scenario: "z", Dialect: "x"},
	} {
		_ = h.Record(k, time.Millisecond)
	}
	var got []string
	for _, k := range h.Keys() {
		got = append(got, k.String())
	}
	want := []string{"connect/z/x", "ttfc/a/y", "ttfc/b/x", "duration/a/x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
}

func TestWriteLogEscapesNames(t *testing.T) {
	t.Parallel()
	h := measure.NewHistograms()
	// Names the hlog format cannot carry as they are: spaces, commas, slashes, percent signs.
	odd := measure.Key{Metric: measure.FirstChunk, Scenario: "has space, comma/slash 50%", Dialect: "d\tx"}
	plain := measure.Key{Metric: measure.FirstChunk, Scenario: "plain", Dialect: "sim-chat"}
	_ = h.Record(odd, time.Millisecond)
	_ = h.Record(plain, 2*time.Millisecond)
	var buf bytes.Buffer
	if err := h.WriteLog(&buf, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Tag=ttfc/plain/sim-chat,") || !strings.Contains(buf.String(), "has%20space%2C%20comma%2Fslash%2050%25") {
		t.Errorf("unexpected tags:\n%s", buf.String())
	}
	got, err := measure.ReadLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !measure.EqualHistograms(got, h) {
		t.Errorf("keys after the round trip: %v, want %v", got.Keys(), h.Keys())
	}
}

func TestReadRunErrors(t *testing.T) {
	t.Parallel()
	good := func(t *testing.T) string {
		dir := t.TempDir()
		if err := measure.WriteRun(dir, seededRun(t)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// goodWith is good with name's content replaced.
	goodWith := func(name, content string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := good(t)
			write(t, dir, name, content)
			return dir
		}
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T) string
		wantErr string
	}{
		// the directory does not exist
		{"missing dir", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, "run directory"},
		// the directory has no summary.json
		{"no summary", func(t *testing.T) string { return t.TempDir() }, "summary.json"},
		// a summary from a future schema
		{"schema", goodWith(measure.SummaryFile, `{"schema": 1}`), "schema version 1, this streambench reads version 2"},
		// broken JSON names the line
		{"bad json", goodWith(measure.SummaryFile, "{\n\"schema\": 1,\n oops}"), "summary.json:3"},
		// a wrongly typed field is named
		{"bad field", goodWith(measure.SummaryFile, "{\"schema\": 1, \"run_id\": 5}"), "field run_id"},
		// timeline with a non-number names line and column
		{"bad timeline", goodWith(measure.TimelineFile,
			"second,active,started,completed,frames,errors,violations\n0,1,2,3,4,5,6\n1,x,2,3,4,5,6\n"), "line 3: column active"},
		// a broken sample line is named
		{"bad sample", goodWith(measure.SamplesFile, "{}\n{nope\n"), "violations.jsonl: line 2"},
		// an untagged hlog interval cannot be attributed
		{"bad hlog tag", func(t *testing.T) string {
			dir := good(t)
			h := measure.NewHistogram()
			_ = h.RecordValue(5)
			var buf bytes.Buffer
			hs := measure.NewHistograms()
			hs.Set(measure.Key{Metric: "ttfc", Scenario: "a", Dialect: "b"}, h)
			_ = hs.WriteLog(&buf, time.Unix(0, 0))
			write(t, dir, measure.HistogramsFile, strings.Replace(buf.String(), "Tag=ttfc/a/b,", "Tag=ttfc,", 1))
			return dir
		}, "want metric/scenario/dialect"},
		// an hlog cut at a line boundary lacks whole histograms the summary has figures for
		{"hlog cut at a line", func(t *testing.T) string {
			dir := good(t)
			data, err := os.ReadFile(filepath.Join(dir, measure.HistogramsFile))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			write(t, dir, measure.HistogramsFile, strings.Join(lines[:len(lines)-2], ""))
			return dir
		}, "histograms.hlog: 1 of the 3 histograms summary.json has figures for are missing: chunk_gap/plain-answer/sim-chat"},
		// an hlog that is not one at all (random bytes) is not read as an empty log
		{"hlog random bytes", func(t *testing.T) string {
			dir := good(t)
			rng := rand.New(rand.NewPCG(3, 4))
			junk := make([]byte, 5000)
			for i := range junk {
				junk[i] = byte(rng.Uint32())
			}
			write(t, dir, measure.HistogramsFile, string(junk))
			return dir
		}, "histograms.hlog: line 1 is not an hlog interval or comment"},
		// an empty hlog beside a summary with figures
		{"hlog empty", goodWith(measure.HistogramsFile, ""), "3 of the 3 histograms summary.json has figures for are missing"},
		// an hlog whose histogram holds other values than the summary counted
		{"hlog count differs", func(t *testing.T) string {
			run := seededRun(t)
			k := measure.Key{Metric: measure.ChunkGap, Scenario: "plain-answer", Dialect: "sim-chat"}
			if err := run.Histograms.Record(k, time.Millisecond); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := measure.WriteRun(dir, run); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "chunk_gap/plain-answer/sim-chat (501 values, summary.json says 500)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := measure.ReadRun(tc.setup(t))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ReadRun error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzReadLog(f *testing.F) {
	// A small seed keeps the fuzzer fast: every exec decodes and merges full-size histograms.
	small := measure.NewHistograms()
	_ = small.Record(measure.Key{Metric: measure.FirstChunk, Scenario: "a", Dialect: "b"}, 5*time.Millisecond)
	var buf bytes.Buffer
	if err := small.WriteLog(&buf, time.Unix(1, 0)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("Tag=a/b/c,0.0,1.0,2.0,HISTFAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := measure.ReadLog(bytes.NewReader(data))
		if err == nil {
			_ = measure.Summarize(h)
		}
	})
}

func BenchmarkRecord(b *testing.B) {
	h := measure.NewHistograms()
	k := measure.Key{Metric: measure.ChunkGap, Scenario: "plain-answer", Dialect: "sim-chat"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = h.Record(k, time.Duration(i%100000)*time.Microsecond)
	}
}

// BenchmarkMerge is the per-interval cost of folding one worker's histograms into the total.
func BenchmarkMerge(b *testing.B) {
	worker := seededRun(b).Histograms
	b.ReportAllocs()
	total := measure.NewHistograms()
	for b.Loop() {
		total.Merge(worker)
	}
}

// BenchmarkWriteReadRun is saving and loading a run directory.
func BenchmarkWriteReadRun(b *testing.B) {
	run := seededRun(b)
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		if err := measure.WriteRun(dir, run); err != nil {
			b.Fatal(err)
		}
		if _, err := measure.ReadRun(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzReadRun feeds arbitrary bytes as each file of a run directory: ReadRun returns a run or
// an error naming the file, never panics.
func FuzzReadRun(f *testing.F) {
	f.Add(uint8(0), []byte(`{"schema":2,"run_id":"x","config":{"duration":"30s"}}`))
	f.Add(uint8(0), []byte(`{"schema":2,"config":{"duration":"thirty"}}`))
	f.Add(uint8(1), []byte("second,active,started,completed,frames,errors,violations\n0,1,2,3,4,5,6\n"))
	f.Add(uint8(1), []byte("second,active\n\"0"))
	f.Add(uint8(2), []byte(`{"session":"s","rule":"R-terminal","frames":["data: x"]}`+"\n"))
	f.Add(uint8(3), []byte("Tag=ttfc/a/b,0.0,1.0,2.0,HISTFAAAACZ42pJpmSzMwMDAzAABMJoRRFybvITB/gNE4LAxEyAAAP//YYwFgg==\n"))
	files := []string{measure.SummaryFile, measure.TimelineFile, measure.SamplesFile, measure.HistogramsFile}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		dir := t.TempDir()
		name := files[int(which)%len(files)]
		if name != measure.SummaryFile {
			if err := os.WriteFile(filepath.Join(dir, measure.SummaryFile), []byte(`{"schema":2}`), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := measure.ReadRun(dir); err != nil && !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name %s", err, name)
		}
	})
}

// reference records the same values into a plain dense histogram.
func reference(values []time.Duration) *hdrhistogram.Histogram {
	h := measure.NewHistogram()
	for _, v := range values {
		_ = h.RecordValue(v.Microseconds())
	}
	return h
}

func spread(n int, seed uint64) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, 9))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(20*time.Millisecond) * math.Exp(0.8*rng.NormFloat64()))
	}
	return out
}

// TestSparseAndDenseAgree: a key's histogram is sparse while small and dense once busy; every
// statistic, merge and the log must not see the difference.
func TestSparseAndDenseAgree(t *testing.T) {
	t.Parallel()
	k := measure.Key{Metric: measure.FirstChunk, Scenario: "s", Dialect: "d"}
	for _, tc := range []struct {
		name string
		a, b int // values recorded in two sets that are then merged
	}{
		{"both sparse", 10, 20},                    // stays sparse
		{"sparse into sparse, crossing", 900, 900}, // the merge crosses the switch
		{"dense into sparse", 5000, 3},             // a busy worker merged into a quiet total
		{"sparse into dense", 3, 5000},             // the other way round
		{"both dense", 3000, 3000},                 // dense all along
		{"empty merge", 0, 7},                      // one side never recorded
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			va, vb := spread(tc.a, 1), spread(tc.b, 2)
			a, b := measure.NewHistograms(), measure.NewHistograms()
			for _, v := range va {
				_ = a.Record(k, v)
			}
			for _, v := range vb {
				_ = b.Record(k, v)
			}
			if tc.a > 0 && !a.Get(k).Equals(reference(va)) {
				t.Fatal("a differs from a dense histogram of the same values")
			}
			if dropped := b.Merge(a); dropped != 0 {
				t.Fatalf("merge dropped %d", dropped)
			}
			want := reference(append(slices.Clone(va), vb...))
			got := b.Get(k)
			if !got.Equals(want) || b.Count(k) != want.TotalCount() {
				t.Fatalf("merged: count %d, want %d; histograms differ", b.Count(k), want.TotalCount())
			}
			if !reflect.DeepEqual(measure.SummarizeOne(k, got), measure.SummarizeOne(k, want)) {
				t.Errorf("summary %+v, want %+v", measure.SummarizeOne(k, got), measure.SummarizeOne(k, want))
			}
			var buf bytes.Buffer
			if err := b.WriteLog(&buf, time.Unix(100, 0)); err != nil {
				t.Fatal(err)
			}
			back, err := measure.ReadLog(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if !measure.EqualHistograms(back, b) {
				t.Error("log round trip changed the histogram")
			}
		})
	}
}

// BenchmarkManyQuietKeys is the memory of a worker's set after a run with hundreds of keys of
// which few are busy (the default mix: ~420 keys per set).
func BenchmarkManyQuietKeys(b *testing.B) {
	values := spread(4096, 3)
	b.ReportAllocs()
	for b.Loop() {
		h := measure.NewHistograms()
		for i := range 400 {
			k := measure.Key{Metric: measure.FirstChunk, Scenario: strconv.Itoa(i), Dialect: "d"}
			n := 50 // a quiet key
			if i%10 == 0 {
				n = 4096 // a busy one (chunk gaps)
			}
			for _, v := range values[:n] {
				_ = h.Record(k, v)
			}
		}
	}
}

// TestAllowedCounts: violations and failed sessions without those of allowed rules; a session
// that broke an allowed and another rule still counts.
func TestAllowedCounts(t *testing.T) {
	t.Parallel()
	s := measure.Summary{
		Violations: map[protocol.Rule]int64{protocol.RAbort: 12, protocol.RTerminal: 1},
		Counters:   measure.Counters{SessionsFailed: 15, FailedByRules: map[string]int64{"R-abort": 12, "R-abort,R-terminal": 1}},
	}
	for _, tc := range []struct {
		allowed                  []protocol.Rule
		wantViolations, wantFail int64
	}{
		{nil, 13, 15},                            // nothing allowed
		{[]protocol.Rule{protocol.RAbort}, 1, 3}, // R-abort alone: 12 sessions out; the mixed one stays
		{[]protocol.Rule{protocol.RAbort, protocol.RTerminal}, 0, 2}, // both: the 2 failed otherwise (errors) stay
	} {
		if v, f := s.ViolationsExcept(tc.allowed), s.Counters.FailedExcept(tc.allowed); v != tc.wantViolations || f != tc.wantFail {
			t.Errorf("allowed %v: violations %d failed %d, want %d and %d", tc.allowed, v, f, tc.wantViolations, tc.wantFail)
		}
	}
}

// TestMergedMergesWhatKeepAccepts merges one metric over scenarios and dialects, a sparse key
// and a dense one among them, and leaves other metrics out.
func TestMergedMergesWhatKeepAccepts(t *testing.T) {
	t.Parallel()
	h := measure.NewHistograms()
	record := func(k measure.Key, n int, d time.Duration) {
		for range n {
			if err := h.Record(k, d); err != nil {
				t.Fatal(err)
			}
		}
	}
	record(measure.Key{Metric: measure.FirstChunk, Scenario: "a", Dialect: "x"}, 3, time.Millisecond)      // sparse
	record(measure.Key{Metric: measure.FirstChunk, Scenario: "b", Dialect: "y"}, 2000, 2*time.Millisecond) // dense (past the sparse form's 1,024)
	record(measure.Key{Metric: measure.ChunkGap, Scenario: "a", Dialect: "x"}, 5, time.Second)             // another metric
	for _, tc := range []struct {
		name      string
		keep      func(measure.Key) bool
		wantN     int
		wantCount int64
		wantMax   int64 // µs, at the histogram's resolution
	}{
		// One metric over every scenario × dialect.
		{"ttfc", func(k measure.Key) bool { return k.Metric == measure.FirstChunk }, 2, 2003, 2000},
		// Nil keeps everything.
		{"all", nil, 3, 2008, 1_000_447},
		// Nothing matches: an empty histogram, not nil.
		{"none", func(k measure.Key) bool { return k.Metric == measure.StopLatency }, 0, 0, 0},
	} {
		got, n := h.Merged(tc.keep)
		if got == nil || n != tc.wantN || got.TotalCount() != tc.wantCount || got.Max() != tc.wantMax {
			t.Errorf("%s: %d histograms, count %d, max %d; want %d, %d, %d", tc.name, n, got.TotalCount(), got.Max(), tc.wantN, tc.wantCount, tc.wantMax)
		}
	}
	var none *measure.Histograms
	if got, n := none.Merged(nil); got == nil || n != 0 || got.TotalCount() != 0 {
		t.Errorf("nil set: %v, %d; want an empty histogram", got, n)
	}
}

// TestClip: a string over the limit is cut at a rune boundary and says how much was cut.
func TestClip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		// fits: unchanged
		{"abc", 3, "abc"},
		// cut, with the count
		{"abcdef", 4, "abcd…[clipped: 2 of 6 bytes cut]"},
		// never inside a rune: é is two bytes
		{"aéb", 2, "a…[clipped: 3 of 4 bytes cut]"},
	} {
		if got := measure.Clip(tc.in, tc.limit); got != tc.want {
			t.Errorf("measure.Clip(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

// TestSummarizeOverall: a metric's overall figures are its keys' histograms merged, one entry
// per metric in report order, and a run written without them reads back with them.
func TestSummarizeOverall(t *testing.T) {
	t.Parallel()
	run := seededRun(t)
	got := measure.SummarizeOverall(run.Histograms)
	var metrics []measure.Metric
	for _, o := range got {
		metrics = append(metrics, o.Metric)
		if o.Scenario != "" || o.Dialect != "" {
			t.Errorf("overall %s is scoped to %s/%s", o.Metric, o.Scenario, o.Dialect)
		}
		var count int64
		for _, m := range run.Summary.Metrics {
			if m.Metric == o.Metric {
				count += m.Count
			}
		}
		if o.Count != count {
			t.Errorf("overall %s counts %d, its keys %d", o.Metric, o.Count, count)
		}
	}
	if want := []measure.Metric{measure.FirstChunk, measure.ChunkGap}; !reflect.DeepEqual(metrics, want) {
		t.Errorf("overall metrics %v, want %v", metrics, want)
	}
	run.Summary.Overall = nil
	if read := writeRead(t, t.TempDir(), run); !reflect.DeepEqual(read.Summary.Overall, got) {
		t.Errorf("overall read back %+v, want %+v", read.Summary.Overall, got)
	}
}

// TestReadRunRejectsImpossibleSummary: a summary.json whose figures cannot have been written
// by a run (a hand edit, a corrupted file) is an error naming the field, so judging it can
// never turn a FAIL into a PASS.
func TestReadRunRejectsImpossibleSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		edit    func(s *measure.Summary)
		wantErr string
	}{
		{"negative violations", func(s *measure.Summary) {
			s.Violations = map[protocol.Rule]int64{protocol.RConverge: 12, protocol.RTerminal: -12}
		}, "violations.R-terminal is -12"},
		{"negative outcome", func(s *measure.Summary) {
			s.Counters.Outcomes[measure.OutcomeTruncated] = 3
			s.Counters.Outcomes[measure.OutcomeHTTPError] = -3
		}, "counters.outcomes.http_error is -3"},
		{"unknown outcome", func(s *measure.Summary) {
			s.Counters.Outcomes["trunkated"] = 4
		}, "counters.outcomes.trunkated: not an outcome"},
		{"negative count", func(s *measure.Summary) { s.Counters.DroppedStarts = -1 }, "counters.dropped_starts is -1"},
		{"more warm-up requests than completed", func(s *measure.Summary) { s.Counters.WarmupRequests = s.Counters.CompletedRequests() + 1 }, "counters.warmup_requests is"},
		{"null violations with failed sessions", func(s *measure.Summary) {
			s.Counters.SessionsFailed += 12
			s.Counters.SessionsOK -= 12
			s.Counters.FailedByRules = map[string]int64{"R-converge": 12}
			s.Violations = nil
		}, "counters.sessions_failed is 22: 10 sessions with an error outcome, and 0 violations"},
		{"failed by a rule not violated", func(s *measure.Summary) {
			s.Counters.SessionsFailed += 2
			s.Counters.SessionsOK -= 2
			s.Counters.FailedByRules = map[string]int64{"R-terminal": 2}
		}, "2 sessions failed by R-terminal, but violations.R-terminal is 0"},
		{"failed by rules more than failed", func(s *measure.Summary) {
			s.Counters.FailedByRules = map[string]int64{"R-converge": 11}
			s.Violations[protocol.RConverge] = 11
		}, "counters.sessions_failed_by_rules counts 11 sessions, more than sessions_failed (10)"},
		{"fewer failed than errors", func(s *measure.Summary) {
			s.Counters.SessionsFailed = 0
			s.Counters.SessionsOK = 1000
		}, "counters.sessions_failed is 0, fewer than the 10 sessions with an error outcome"},
		{"ok and failed over started", func(s *measure.Summary) { s.Counters.SessionsOK = 1000 }, "sessions_ok 1000 + sessions_failed 10 is more than sessions_started 1000"},
		{"leak ok over its tolerance", func(s *measure.Summary) {
			s.Leaks = []measure.Leak{{Source: "runtime", Name: "go_goroutines", Before: 10, After: 510, Delta: 500, Tolerance: 5, OK: true}}
		}, "leaks[0] (runtime go_goroutines): ok is true with a delta of 500 and a tolerance of 5"},
		{"leak delta not after − before", func(s *measure.Summary) {
			s.Leaks = []measure.Leak{{Source: "runtime", Name: "go_goroutines", Before: 10, After: 510, Delta: 2, Tolerance: 5, OK: true}}
		}, "delta 2, but after − before is 500"},
		{"negative latency", func(s *measure.Summary) { s.Metrics[0].P99 = -5 }, "metrics[0] (ttfc/plain-answer/sim-chat): p99_us is -5"},
		{"negative overall mean", func(s *measure.Summary) { s.Overall[0].Mean = -1 }, "overall[0] (ttfc//): mean_us is -1"},
		{"negative goodput", func(s *measure.Summary) {
			s.Tokens = &measure.TokenSummary{Goodput: measure.Goodput{Sessions: 5, Judged: 3}}
		}, "tokens.goodput: 5 sessions of 3 judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			run := seededRun(t)
			if err := measure.WriteRun(dir, run); err != nil {
				t.Fatal(err)
			}
			if _, err := measure.ReadRun(dir); err != nil {
				t.Fatalf("the unedited run: %v", err)
			}
			s, err := measure.ReadSummary(filepath.Join(dir, measure.SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(s)
			data, err := measure.MarshalSummary(s)
			if err != nil {
				t.Fatal(err)
			}
			write(t, dir, measure.SummaryFile, string(data))
			_, err = measure.ReadRun(dir)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), measure.SummaryFile) {
				t.Errorf("ReadRun error = %v, want one naming %s and containing %q", err, measure.SummaryFile, tc.wantErr)
			}
		})
	}
}

// TestReadRunBoundsEachFile: a run file that never ends (here /dev/zero) is read up to a limit
// and refused, naming the file and the limit, instead of being read into memory whole.
func TestReadRunBoundsEachFile(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, tc := range []struct{ name, wantErr string }{
		{measure.SummaryFile, "larger than 64 MiB"},
		{measure.HistogramsFile, "line 1 is longer than 16 MiB"},
		{measure.SamplesFile, "line 1 is longer than 16 MiB"},
		{measure.TimelineFile, "line 1 is longer than 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := measure.WriteRun(dir, seededRun(t)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.name)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
			_, err := measure.ReadRun(dir)
			var le *measure.LimitError
			if err == nil || !strings.Contains(err.Error(), path+": "+tc.wantErr) || !errors.As(err, &le) {
				t.Errorf("ReadRun error = %v, want a LimitError naming %s: %s", err, path, tc.wantErr)
			}
		})
	}
}
