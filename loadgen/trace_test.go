package loadgen

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockrecords"
)

// TestTraceReplay (issue 42's acceptance): a 1,000-row Mooncake trace made from a seed, each
// row one of 4 shared 2-block prefixes and 1 or 2 blocks of its own, replays at 2x against the
// mock: every request is sent at its row's time (start lag p99 <= 5 ms; each arrives at the mock
// within 50 ms of its row's time), with its row's prompt (the mock's digests of each record are
// those of a row's text, every row once), and the rows of a prefix share the leading digests
// of their records. Not parallel: the start lag is a timing figure, so it runs alone.
func TestTraceReplay(t *testing.T) {
	const rows, speed = 1000, 2.0
	r := rand.New(rand.NewPCG(42, 42))
	var b strings.Builder
	ms, prefixOf := 0, make([]int, rows)
	for i := range rows {
		ms += int(r.ExpFloat64() * 6) // 6 ms apart on average: 3 ms at 2x, ~330 requests/s
		prefixOf[i] = r.IntN(4)
		ids := []int{10 * prefixOf[i], 10*prefixOf[i] + 1}
		for j := range 1 + r.IntN(2) { // the row's own blocks, the last cut short: no two rows alike
			ids = append(ids, 1000+3*i+j)
		}
		line, _ := json.Marshal(map[string]any{"timestamp": ms, "input_length": 512*len(ids) - r.IntN(200), "output_length": 1 + r.IntN(4), "hash_ids": ids})
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "mooncake.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	trace, err := endpoint.LoadTrace(path, "")
	if err != nil || len(trace) != rows {
		t.Fatalf("%d rows, %v", len(trace), err)
	}
	played := slices.Clone(trace)
	for i := range played {
		played[i].At = time.Duration(float64(played[i].At) / speed)
	}
	mock, err := mockprovider.New(mockprovider.Options{Library: fastEndpointLibrary(t), TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mock)
	t.Cleanup(ts.Close)
	mix, err := EndpointMix("openai-chat", "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := withDialects(Config{
		Target: ts.URL, Mix: mix, MixName: "endpoint", RunID: "trace", Sessions: rows,
		Endpoint: &endpoint.Workload{Trace: played}, NoLeakCheck: true, RuntimeMetricsURL: "-",
	})
	// The machine's own timer lag, before the run: a start lag cannot be below it.
	probe := startLagProbe(lagInterval)
	time.Sleep(500 * time.Millisecond)
	idleLag := probe.stop().ValueAtQuantile(99)
	run, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	if s.Counters.SessionsStarted != rows || s.Counters.SessionsOK != rows || s.Config.Arrival != "trace" {
		t.Fatalf("started %d, ok %d, arrival %q: want %d replayed", s.Counters.SessionsStarted, s.Counters.SessionsOK, s.Config.Arrival, rows)
	}
	// Each record is one row's request, by its prompt's digests.
	rowOf := map[string]int{}
	for i := range rows {
		req, _ := cfg.Endpoint.Request(uint64(i), mix.Pick(mix.Seed, uint64(i)).Seed)
		rowOf[strings.Join(mockrecords.PromptDigests(req.Messages[0].Text), ",")] = i
	}
	recs, err := mockrecords.Client{HTTP: ts.Client(), URL: ts.URL}.Sessions(context.Background())
	if err != nil || len(recs) != rows {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	seen, first := map[int]bool{}, map[int][]string{}
	var start time.Time
	for _, rec := range recs {
		i, ok := rowOf[strings.Join(rec.PromptDigests, ",")]
		if !ok || seen[i] {
			t.Fatalf("record %+v: its digests are no row's, or a row's seen twice", rec)
		}
		seen[i] = true
		if i == 0 {
			start = rec.Start
		}
		// A 2-block prefix is 1,024 words of at least 2 bytes: its first 2 KiB are the prefix's.
		if f, ok := first[prefixOf[i]]; !ok {
			first[prefixOf[i]] = rec.PromptDigests[:2]
		} else if !slices.Equal(f, rec.PromptDigests[:2]) {
			t.Errorf("row %d of prefix %d: digests %v, the prefix's %v", i, prefixOf[i], rec.PromptDigests[:2], f)
		}
	}
	distinct := map[string]bool{}
	for _, f := range first {
		distinct[f[0]] = true
	}
	if len(distinct) != 4 {
		t.Errorf("the 4 prefixes' leading digests %v: want 4 different", first)
	}

	var lags []measure.MetricSummary
	for _, m := range s.Metrics {
		if m.Metric == measure.StartLag {
			lags = append(lags, m)
		}
	}
	if len(lags) != 1 || lags[0].Count != rows {
		t.Fatalf("start lags %+v, want one key of %d", lags, rows)
	}

	// The timing, unless other processes held the cores: a start cannot be on time within 5 ms
	// when the machine could not wake the process's own timer within 5 ms, before the run or
	// during it (its generator lag).
	if lag, _ := s.Metric(generatorLagKey); idleLag > 5000 || lag.P99 > 5000 {
		t.Skipf("the machine is overloaded (timer lag p99 %d µs before the run, %d µs during it): start lag p99 %d µs not judged", idleLag, lag.P99, lags[0].P99)
	}
	if m := lags[0]; m.P99 > 5000 {
		t.Errorf("start lag p99 %d µs (p50 %d, max %d) over %d starts, want <= 5 ms", m.P99, m.P50, m.Max, m.Count)
	}
	for _, rec := range recs {
		i := rowOf[strings.Join(rec.PromptDigests, ",")]
		if off := rec.Start.Sub(start); off < played[i].At-50*time.Millisecond || off > played[i].At+50*time.Millisecond {
			t.Errorf("row %d arrived at the mock %v after row 0, its time is %v", i, off, played[i].At)
		}
	}
}
