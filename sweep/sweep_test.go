package sweep_test

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/sweep"
	"github.com/streambench/streambench/verdict"
)

func TestStepsFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		clients []int
		rates   []float64
		want    string // steps joined, or the error's text
	}{
		{[]int{1000, 250, 500}, nil, "250 clients|500 clients|1000 clients"}, // sorted ascending
		{nil, []float64{20, 5.5}, "5.5/s|20/s"},                              // rates
		{nil, nil, "either --clients"},                                       // no steps
		{[]int{1}, []float64{1}, "not both"},                                 // both kinds
		{[]int{250, 0}, nil, "--clients 0"},                                  // non-positive
		{nil, []float64{-1}, "--rate -1"},                                    // negative rate
		{[]int{250, 250}, nil, "given twice"},                                // duplicate
	} {
		steps, err := sweep.StepsFrom(tc.clients, tc.rates)
		got := ""
		if err != nil {
			got = err.Error()
		}
		var names []string
		for _, s := range steps {
			names = append(names, s.String())
		}
		got += strings.Join(names, "|")
		if !strings.Contains(got, tc.want) {
			t.Errorf("StepsFrom(%v, %v) = %q, want %q", tc.clients, tc.rates, got, tc.want)
		}
	}
}

// step builds a judged step: pass or fail per SLO, with measured values for ranking.
func step(clients int, checks ...verdict.Check) sweep.StepResult {
	s := sweep.StepResult{Step: sweep.Step{Clients: clients}, Checks: checks, Pass: true}
	for _, c := range checks {
		s.Pass = s.Pass && c.Pass
	}
	return s
}

func TestAnalyze(t *testing.T) {
	t.Parallel()
	slos := mustThresholds(t, "ttfc.p99<500ms", "errors<1%")
	ok := func(v float64) verdict.Check { return verdict.Check{Name: "ttfc.p99<500ms", Pass: true, Measured: v} }
	slow := func(v float64) verdict.Check { return verdict.Check{Name: "ttfc.p99<500ms", Measured: v} }
	fine := verdict.Check{Name: "errors<1%", Pass: true, Measured: 0}
	erring := func(v float64) verdict.Check { return verdict.Check{Name: "errors<1%", Measured: v} }
	for _, tc := range []struct {
		name        string
		steps       []sweep.StepResult
		knee        int
		brokenAt    int
		broken      []string
		passedAgain []int
		headline    string
	}{
		// the classic knee: pass, pass, fail on latency
		{"knee", []sweep.StepResult{step(250, ok(100e3), fine), step(500, ok(300e3), fine), step(1000, slow(900e3), fine)},
			1, 2, []string{"ttfc.p99<500ms"}, nil, "knee: 500 clients, the highest load meeting every SLO; at 1000 clients ttfc.p99<500ms broke first"},
		// every step passes: the knee is above the last step
		{"all pass", []sweep.StepResult{step(250, ok(1), fine), step(500, ok(2), fine)},
			1, -1, nil, nil, "the knee is above 500 clients"},
		// the first step fails: no knee
		{"first fails", []sweep.StepResult{step(250, slow(600e3), fine), step(500, slow(800e3), fine)},
			-1, 0, []string{"ttfc.p99<500ms"}, nil, "no knee: the lowest step, 250 clients, already misses"},
		// both SLOs break at once: the one further over its limit is named first (errors 5% vs 1% limit = 4×; ttfc 600 vs 500 = 0.2×)
		{"both break", []sweep.StepResult{step(250, ok(1), fine), step(500, slow(600e3), erring(0.05))},
			0, 1, []string{"errors<1%", "ttfc.p99<500ms"}, nil, "at 500 clients errors<1% broke first (also missed there: ttfc.p99<500ms)"},
		// a step above the first failure passes again: the knee stays below the first failure, with a warning
		{"noisy", []sweep.StepResult{step(250, ok(1), fine), step(500, slow(510e3), fine), step(1000, ok(490e3), fine), step(2000, slow(2e6), fine)},
			0, 1, []string{"ttfc.p99<500ms"}, []int{2}, "1000 clients met every SLO again"},
		// a check without data ranks as broken outright
		{"no data", []sweep.StepResult{step(250, verdict.Check{Name: "ttfc.p99<500ms", Measured: math.NaN()}, erring(0.02))},
			-1, 0, []string{"ttfc.p99<500ms", "errors<1%"}, nil, "no knee"},
		// nothing ran
		{"empty", nil, -1, -1, nil, nil, "no step ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sweep.Analyze(tc.steps, slos)
			if r.Knee != tc.knee || r.BrokenAt != tc.brokenAt || !reflect.DeepEqual(r.Broken, tc.broken) || !reflect.DeepEqual(r.PassedAgain, tc.passedAgain) {
				t.Errorf("Analyze = knee %d, broken at %d %v, passed again %v; want %d, %d %v, %v",
					r.Knee, r.BrokenAt, r.Broken, r.PassedAgain, tc.knee, tc.brokenAt, tc.broken, tc.passedAgain)
			}
			if h := r.Headline(); !strings.Contains(h, tc.headline) {
				t.Errorf("Headline = %q, want it to contain %q", h, tc.headline)
			}
		})
	}
}

// capacityRun is a run whose latency and errors grow past a capacity of 600 clients, the shape
// the mock's capacity model produces.
func capacityRun(t testing.TB, s sweep.Step) *measure.Run {
	over := max(0, float64(s.Clients)/600-1)
	// The target slows down: what it adds shows in ttfc and in its overhead alike.
	r := fixture.Run(t, fixture.Options{Seed: uint64(s.Clients), OverheadShift: time.Duration(over * float64(800*time.Millisecond)),
		HTTPErrors: int64(over * 100)})
	r.Summary.RunID = "sweep-" + s.ID()
	r.Summary.Config.Thresholds = nil
	return r
}

func TestSweepFindsTheKnee(t *testing.T) {
	t.Parallel()
	var ran []string
	dir := t.TempDir()
	res := sweepSaved(t, dir, []int{250, 500, 1000, 2000}, func(s sweep.Step) *measure.Run {
		ran = append(ran, s.ID())
		return capacityRun(t, s)
	}, mustThresholds(t, "ttfc.p99<500ms", "errors<0.1%"))
	if strings.Join(ran, ",") != "c250,c500,c1000,c2000" {
		t.Errorf("ran steps %v", ran)
	}
	if res.Knee != 1 || res.BrokenAt != 2 {
		t.Fatalf("knee %d broken at %d, want 1 (500 clients) and 2; %s", res.Knee, res.BrokenAt, res.Headline())
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, sweep.MarkdownFile))
	if err != nil || !strings.Contains(string(md), "Knee: 500 clients") || !strings.Contains(string(md), "| 500 clients | sweep-c500 |") {
		t.Errorf("sweep.md: %v\n%s", err, md)
	}
	html, err := os.ReadFile(filepath.Join(dir, sweep.HTMLFile))
	if err != nil || !strings.Contains(string(html), "data:image/png;base64,") {
		t.Errorf("sweep.html: %v", err)
	}
	checkPlot(t, dir, sweep.Plot)
	if _, err := os.Stat(filepath.Join(dir, sweep.JSONFile)); err != nil {
		t.Error(err)
	}

	// Re-judging the saved steps with their own SLOs finds the same knee; with looser latency
	// and error SLOs the knee moves up to 1000 clients; with the latency SLO alone the default
	// errors==0 holds it at 500 (a step with errors is no capacity).
	again, err := sweep.Rejudge(dir, nil)
	if err != nil || again.Knee != 1 || strings.Join(again.SLOs, ",") != "ttfc.p99<500ms,errors<0.1%" {
		t.Fatalf("Rejudge with the saved SLOs: %v, knee %d, SLOs %v", err, again.Knee, again.SLOs)
	}
	looser, err := sweep.Rejudge(dir, mustThresholds(t, "ttfc.p99<1s", "errors<5%"))
	if err != nil || looser.Knee != 2 {
		t.Errorf("Rejudge with ttfc.p99<1s, errors<5%%: %v, knee %v, want 2 (1000 clients): %s", err, looser.Knee, looser.Headline())
	}
	strict, err := sweep.Rejudge(dir, mustThresholds(t, "ttfc.p99<1s"))
	if err != nil || strict.Knee != 1 || !strings.Contains(strict.Headline(), "errors==0") {
		t.Errorf("Rejudge with ttfc.p99<1s alone: %v, knee %v, want 1 (500 clients) broken by errors==0: %s", err, strict.Knee, strict.Headline())
	}
	if _, err := sweep.Rejudge(t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "sweep.json") {
		t.Errorf("Rejudge of a directory without a sweep: %v", err)
	}
}

func TestSweepStopsAtRunError(t *testing.T) {
	t.Parallel()
	steps, _ := sweep.StepsFrom([]int{1, 2, 3}, nil)
	boom := errors.New("runtime did not start")
	res, err := sweep.Run(steps, func(s sweep.Step) (*measure.Run, error) {
		if s.Clients == 2 {
			return nil, boom
		}
		return capacityRun(t, s), nil
	}, mustThresholds(t, "errors<1%"))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "step 2 clients") {
		t.Errorf("Sweep error = %v, want the step's error naming the step", err)
	}
	if res == nil || len(res.Steps) != 1 {
		t.Errorf("want the one finished step kept, got %+v", res)
	}
}

// TestIsSweepDir tells a sweep directory (sweep.json, no summary.json) from a run's and from
// an empty one.
func TestIsSweepDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []string
		want  bool
	}{
		{"sweep", []string{sweep.JSONFile}, true},                      // what sweep writes
		{"run", []string{measure.SummaryFile}, false},                  // one run
		{"both", []string{sweep.JSONFile, measure.SummaryFile}, false}, // a run wins
		{"empty", nil, false},                                          // neither
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := sweep.IsDir(dir); got != tc.want {
			t.Errorf("%s: IsDir = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// sweepSaved sweeps the clients' steps, each run saved in dir as a sweep's step is.
func sweepSaved(t *testing.T, dir string, clients []int, run func(sweep.Step) *measure.Run, slos []verdict.Threshold) *sweep.Result {
	t.Helper()
	steps, err := sweep.StepsFrom(clients, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(steps, func(s sweep.Step) (*measure.Run, error) {
		r := run(s)
		return r, measure.WriteRun(filepath.Join(dir, r.Summary.RunID), r)
	}, slos)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkPlot checks that dir holds plot name as a PNG that decodes and an SVG.
func checkPlot(t *testing.T, dir, name string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Errorf("%s.png: %v", name, err)
	}
	if _, err := os.Stat(filepath.Join(dir, name+".svg")); err != nil {
		t.Error(err)
	}
}

func mustThresholds(t testing.TB, exprs ...string) []verdict.Threshold {
	t.Helper()
	cfg, err := verdict.ParseFlags(nil, exprs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Thresholds
}

// TestSweepWithoutSLO: a sweep given no SLO names no knee, says where request throughput
// peaked and which step failed the defaults first, tabulates every step's TTFT, ITL, TPOT and
// E2E at p50/p90/p95/p99, and writes the TTFT and ITL against throughput plot.
func TestSweepWithoutSLO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// 1000 clients: HTTP errors, failing the default errors==0
	res := sweepSaved(t, dir, []int{250, 500, 1000}, func(s sweep.Step) *measure.Run { return capacityRun(t, s) }, nil)
	if res.Knee != -1 || res.BrokenAt != 2 || len(res.SLOs) != 0 {
		t.Errorf("knee %d, broken at %d, SLOs %v: want no knee, broken at 2 (1000 clients), no SLO", res.Knee, res.BrokenAt, res.SLOs)
	}
	h := res.Headline()
	for _, want := range []string{"no SLO given, so no knee", "peak request throughput", "1000 clients failed first: errors==0"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline %q does not say %q", h, want)
		}
	}
	for _, st := range res.Steps {
		for _, m := range []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency, measure.TimePerOutputToken, measure.StreamDuration} {
			p, ok := st.Latency[m]
			if !ok || !(p.P50 > 0 && p.P50 <= p.P90 && p.P90 <= p.P95 && p.P95 <= p.P99) {
				t.Errorf("step %s %s: %+v (recorded %v), want 0 < p50 <= p90 <= p95 <= p99", st.Step, m, p, ok)
			}
		}
		if !(st.RequestsPerSecond > 0 && st.TokensPerSecond > 0 && st.GoodputPerSecond > 0) {
			t.Errorf("step %s: requests/s %v, tokens/s %v, goodput/s %v; want all positive", st.Step, st.RequestsPerSecond, st.TokensPerSecond, st.GoodputPerSecond)
		}
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests/s", "output tokens/s", "goodput/s", "Latency per step (ms)", "p90", "p95", "e2e (duration)", "tpot", "itl", " pass", " fail"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the sweep's text does not say %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "knee)") {
		t.Errorf("a sweep without SLO marks a knee:\n%s", text.String())
	}
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	checkPlot(t, dir, sweep.Plot)
	checkPlot(t, dir, sweep.PlotLatency)
	md, err := os.ReadFile(filepath.Join(dir, sweep.MarkdownFile))
	if err != nil || !strings.Contains(string(md), "SLOs: none") || !strings.Contains(string(md), sweep.PlotLatency+".png") || !strings.Contains(string(md), "| 500 clients | ttft |") {
		t.Errorf("sweep.md: %v\n%s", err, md)
	}
}

// TestRateSweep: GuideLLM's sweep profile without a network. The synchronous step (1 client)
// reaches 2 requests/s, the throughput step (16 clients) 10; the 3 open-loop steps run at 4,
// 6 and 8/s, strictly between, and the result lists the steps in ascending request rate. A
// throughput step no faster than the synchronous one leaves nothing to sweep: an error, the
// two measuring steps kept.
func TestRateSweep(t *testing.T) {
	t.Parallel()
	fake := func(syncRate, throughputRate float64) func(sweep.Step) (*measure.Run, error) {
		return func(s sweep.Step) (*measure.Run, error) {
			r := fixture.Run(t, fixture.Options{Seed: 1})
			r.Summary.RunID = "rs-" + s.ID()
			r.Summary.Config.Thresholds = nil
			rate := s.Rate
			switch s.Profile {
			case sweep.ProfileSynchronous:
				rate = syncRate
			case sweep.ProfileThroughput:
				rate = throughputRate
			}
			r.Summary.Tokens = &measure.TokenSummary{RequestsPerSecond: rate}
			return r, nil
		}
	}
	var ran []string
	run := fake(2, 10)
	res, err := sweep.RunRate(3, 16, func(s sweep.Step) (*measure.Run, error) {
		ran = append(ran, s.ID())
		return run(s)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ran, ","); got != "sync,throughput,r4,r6,r8" {
		t.Errorf("ran %s, want sync,throughput,r4,r6,r8", got)
	}
	var order []string
	for _, st := range res.Steps {
		order = append(order, st.Step.String())
	}
	if got := strings.Join(order, ","); got != "synchronous (1 client),4/s,6/s,8/s,throughput (16 clients)" {
		t.Errorf("steps %s", got)
	}
	if rs := res.RateSweep; rs == nil || rs.SynchronousRate != 2 || rs.ThroughputRate != 10 || !reflect.DeepEqual(rs.Rates, []float64{4, 6, 8}) {
		t.Errorf("rate sweep %+v", res.RateSweep)
	}
	if h := res.Headline(); !strings.Contains(h, "synchronous 2 requests/s, throughput (16 clients) 10 requests/s, open-loop rates between: 4, 6, 8/s") {
		t.Errorf("headline %q", h)
	}
	dir := t.TempDir()
	if err := res.Write(dir); err != nil {
		t.Fatal(err)
	}
	res, err = sweep.RunRate(3, 16, fake(5, 5), nil)
	if err == nil || !strings.Contains(err.Error(), "no range of rates to sweep") || len(res.Steps) != 2 {
		t.Errorf("a flat target: %v, %d steps", err, len(res.Steps))
	}
}

// TestSweepKneeOnOverhead: the scenarios script a 500 ms wait before the first chunk, and the
// target adds a few milliseconds until the last step, where it adds 500 ms. An SLO of
// ttfc.p99<400ms is judged on ttfc.overhead by default, so the knee is the step before the
// target slowed down (and the headline says how it was judged); ttfc.measured.p99<400ms is
// judged as measured, and every step misses it, the script's wait alone being over the limit;
// a re-judged sweep keeps what it was judged on. A run
// whose scripts say nothing of when frames were due (no overhead recorded) is judged as
// measured either way.
func TestSweepKneeOnOverhead(t *testing.T) {
	t.Parallel()
	steps, err := sweep.StepsFrom([]int{10, 20, 40}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(s sweep.Step) *measure.Run {
		o := fixture.Options{Seed: uint64(s.Clients), TTFCShift: 500 * time.Millisecond}
		if s.Clients == 40 {
			o.OverheadShift = 500 * time.Millisecond
		}
		r := fixture.Run(t, o)
		r.Summary.RunID = "knee-" + s.ID()
		r.Summary.Config.Thresholds = nil
		return r
	}
	for _, tc := range []struct {
		measured   bool
		knee       int
		onOverhead []string
		check      string // the first step's check, as judged
	}{
		{false, 1, []string{"ttfc.p99<400ms"}, "ttfc.overhead.p99<400ms"}, // default: the target's own part
		{true, -1, nil, "ttfc.measured.p99<400ms"},                        // as measured, by name
	} {
		slos := mustThresholds(t, "ttfc.p99<400ms")
		if tc.measured {
			slos = mustThresholds(t, "ttfc.measured.p99<400ms")
		}
		dir := t.TempDir()
		res := sweepSaved(t, dir, []int{10, 20, 40}, run, slos)
		if res.Knee != tc.knee || !reflect.DeepEqual(res.OnOverhead, tc.onOverhead) || res.Steps[0].Checks[0].Name != tc.check {
			t.Errorf("measured %v: knee %d, on overhead %v, first check %q; want %d, %v, %q: %s",
				tc.measured, res.Knee, res.OnOverhead, res.Steps[0].Checks[0].Name, tc.knee, tc.onOverhead, tc.check, res.Headline())
		}
		if judged := strings.Contains(res.Headline(), "judged on the overhead"); judged != !tc.measured {
			t.Errorf("measured %v: headline %q, want it to say so only when judged on the overhead", tc.measured, res.Headline())
		}
		if err := res.Write(dir); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, sweep.MarkdownFile))
		if err != nil || strings.Contains(string(md), "ttfc.p99<400ms (on its overhead)") != !tc.measured {
			t.Errorf("measured %v: sweep.md (%v) should mark the SLO's column as judged on its overhead only when it was:\n%s", tc.measured, err, md)
		}
		again, err := sweep.Rejudge(dir, nil)
		if err != nil || again.Knee != tc.knee || !reflect.DeepEqual(again.OnOverhead, tc.onOverhead) {
			t.Errorf("measured %v: re-judged with the saved SLOs: %v, knee %d, on overhead %v", tc.measured, err, again.Knee, again.OnOverhead)
		}
	}

	// The same runs without overhead (the scripts say nothing of when frames are due): the
	// SLO is judged as measured by default too.
	noOverhead := func(r *measure.Run) *measure.Run {
		h := measure.NewHistograms()
		for _, k := range r.Histograms.Keys() {
			if _, isOverhead := map[measure.Metric]bool{measure.FirstChunkOverhead: true, measure.FirstTokenOverhead: true}[k.Metric]; !isOverhead {
				h.Set(k, r.Histograms.Get(k))
			}
		}
		r.Histograms, r.Summary.Metrics = h, measure.Summarize(h)
		return r
	}
	res, err := sweep.Run(steps, func(s sweep.Step) (*measure.Run, error) { return noOverhead(run(s)), nil }, mustThresholds(t, "ttfc.p99<400ms"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Knee != -1 || len(res.OnOverhead) != 0 || res.Steps[0].Checks[0].Name != "ttfc.p99<400ms" {
		t.Errorf("without overhead: knee %d, on overhead %v, first check %q; want -1, none, the SLO as given: %s",
			res.Knee, res.OnOverhead, res.Steps[0].Checks[0].Name, res.Headline())
	}
}
