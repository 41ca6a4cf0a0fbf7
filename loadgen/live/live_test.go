package live

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	sbstack "github.com/streambench/streambench/stack"
)

// testScale speeds the scripts up, as in loadgen's tests.
const testScale = 0.05

// scrape reads url's metrics, by family name.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return fams
}

// sample is the value of fam's series whose labels include want (counter, gauge, or a
// histogram's count); ok false when there is no such series.
func sample(fams map[string]*dto.MetricFamily, fam string, want map[string]string) (v float64, ok bool) {
	f := fams[fam]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, val := range want {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == val {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
		ok = true
	}
	return v, ok
}

// TestLiveScrapeMidRun: a load against an in-process stack whose runtime sends two terminals
// (a fault, so a rule fails) is scraped while it runs: open streams, sessions by outcome,
// violations by rule and both histograms are there and non-zero; then the run is stopped.
func TestLiveScrapeMidRun(t *testing.T) {
	t.Parallel()
	faults, err := agentruntime.ParseFaults([]string{"double-terminal"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sbstack.StartInProcess(sbstack.Options{TimeScale: testScale, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Stop)

	live := New()
	srv := httptest.NewServer(live.Handler())
	t.Cleanup(srv.Close)

	cfg := loadgen.Config{
		Dialects: dialects.Default(),
		Target:   st.RuntimeURL, Mix: plainAnswerOptedIn(t), RunID: "live",
		// Long enough that the scrape happens mid-run; the test cancels it once it has.
		Clients: 4, Duration: 5 * time.Minute, ScriptTimeScale: testScale, NoLeakCheck: true,
		SamplesPerRule: 1,
	}
	live.Attach(&cfg)
	// Wait on an output after the Live (the run calls outputs in order): a failed session
	// whose values have all been observed, then a progress tick with streams open.
	ended := make(chan struct{})
	ticked := make(chan struct{})
	var endOnce, tickOnce sync.Once
	cfg.Outputs = append(cfg.Outputs, loadgen.SessionEndFunc(func(e loadgen.SessionEnd) {
		if len(e.Violations) > 0 {
			endOnce.Do(func() { close(ended) })
		}
	}), loadgen.ProgressFunc(func(p loadgen.Progress) {
		select {
		case <-ended:
			if p.Active > 0 {
				tickOnce.Do(func() { close(ticked) })
			}
		default:
		}
	}))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := loadgen.Run(ctx, cfg); done <- err }()
	select {
	case <-ticked:
	case err := <-done:
		t.Fatalf("run ended before the scrape: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no failed session and progress tick within a minute")
	}

	fams := scrape(t, srv.URL+"/metrics")
	for _, c := range []struct {
		family string
		labels map[string]string
	}{
		// Streams are open mid-run (4 users back to back).
		{measure.OpenStreams.Live(), nil},
		{measure.SessionsStarted.Live(), nil},
		{measure.Frames.Live(), nil},
		// Every session fails on the doubled terminal.
		{measure.ByOutcome.Live(), map[string]string{"outcome": "completed"}},
		{measure.Violations.Live(), map[string]string{"rule": string(protocol.RTerminal)}},
		// The histograms have observations, labelled by the client's dialect.
		{measure.FirstChunk.Live(), map[string]string{"dialect": "sim-chat-optedin"}},
		{measure.ChunkGap.Live(), map[string]string{"dialect": "sim-chat-optedin"}},
	} {
		v, ok := sample(fams, c.family, c.labels)
		if !ok || v <= 0 {
			t.Errorf("%s%v: got %g (present %v), want a series above 0", c.family, c.labels, v, ok)
		}
	}
	// Outcomes that did not happen are exported from zero, so rate() has them.
	if v, ok := sample(fams, measure.ByOutcome.Live(), map[string]string{"outcome": "over_time"}); !ok || v != 0 {
		t.Errorf("%s{outcome=over_time}: got %g (present %v), want 0", measure.ByOutcome.Live(), v, ok)
	}
	if _, ok := sample(fams, "go_goroutines", nil); !ok {
		t.Error("no Go runtime metrics on the registry")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLiveFeeds: Attach adds the Exporter after the outputs already set; each output it is
// moves the series it feeds and nothing else; a session without a violation adds none, a batch
// of gaps is observed value by value.
func TestLiveFeeds(t *testing.T) {
	t.Parallel()
	live := New()
	srv := httptest.NewServer(live.Handler())
	t.Cleanup(srv.Close)
	earlier := loadgen.SessionEndFunc(func(loadgen.SessionEnd) {})
	cfg := loadgen.Config{Outputs: []loadgen.Output{earlier}}
	live.Attach(&cfg)
	if len(cfg.Outputs) != 2 || cfg.Outputs[1] != loadgen.Output(live) {
		t.Errorf("Attach: outputs %v, want the one set before and then the Exporter", cfg.Outputs)
	}

	live.SessionEnded(loadgen.SessionEnd{Dialect: "compose", Outcome: measure.OutcomeCompleted})
	live.SessionEnded(loadgen.SessionEnd{Dialect: "compose", Outcome: measure.OutcomeStalled, Violations: []protocol.Violation{{Rule: protocol.RTerminal}, {Rule: protocol.RTerminal}}})
	live.Latencies(session.Latencies{Dialect: "compose", TimeToFirstChunk: 120 * time.Millisecond})
	live.Latencies(session.Latencies{Dialect: "compose"}) // no chunk: nothing observed
	live.Latencies(session.Latencies{Dialect: "compose", ChunkGaps: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 3 * time.Second}})
	live.Progress(loadgen.Progress{Active: 7, Started: 9, Frames: 40, Draining: true})

	fams := scrape(t, srv.URL+"/metrics")
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{measure.ByOutcome.Live(), map[string]string{"outcome": "completed"}, 1},
		{measure.ByOutcome.Live(), map[string]string{"outcome": "stalled"}, 1},
		{measure.ByOutcome.Live(), map[string]string{"outcome": "cut"}, 0},
		// Each violation counts, as in the run's summary.
		{measure.Violations.Live(), map[string]string{"rule": string(protocol.RTerminal)}, 2},
		{measure.FirstChunk.Live(), map[string]string{"dialect": "compose"}, 1},
		{measure.ChunkGap.Live(), map[string]string{"dialect": "compose"}, 3},
		{measure.OpenStreams.Live(), nil, 7},
		{measure.SessionsStarted.Live(), nil, 9},
		{measure.Frames.Live(), nil, 40},
		{measure.Errors.Live(), nil, 0},
		{measure.Draining.Live(), nil, 1},
	} {
		if v, ok := sample(fams, c.family, c.labels); !ok || v != c.want {
			t.Errorf("%s%v: got %g (present %v), want %g", c.family, c.labels, v, ok, c.want)
		}
	}
	// Every series the registry says is live is served.
	for _, d := range measure.Registry() {
		if _, ok := fams[d.Live]; d.Live != "" && !ok {
			t.Errorf("%s: the registry's live series %s is not served", d.Name, d.Live)
		}
	}
	// The 3 s gap lands above the 2.5 s bucket: the buckets reach a stall's tail.
	h := fams[measure.ChunkGap.Live()].GetMetric()[0].GetHistogram()
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == 2.5 && b.GetCumulativeCount() != 2 {
			t.Errorf("chunk gaps ≤ 2.5 s: %d, want 2", b.GetCumulativeCount())
		}
	}
}

// plainAnswerOptedIn is a mix of plain-answer only, played by opted-in sim-chat against
// deployments that send every event.
func plainAnswerOptedIn(t *testing.T) *loadgen.Mix {
	t.Helper()
	all := protocol.Options{"policy": "all"}
	m, err := loadgen.NewMix("test", 3, map[string]float64{"plain-answer": 1}, []loadgen.Profile{{
		Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1,
		Targets: []loadgen.Target{{Slug: "openai-all", Options: all}, {Slug: "anthropic-all", Options: all}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
