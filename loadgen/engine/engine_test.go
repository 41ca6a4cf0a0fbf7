package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestScraper: the known gauges are read over their label sets (counts summed, shares
// averaged), other metrics left out, one point per read in order.
func TestScraper(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		fmt.Fprintf(w, `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="a"} %d
vllm:num_requests_running{model_name="b"} 1
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{rank="0"} 0.25
vllm:kv_cache_usage_perc{rank="1"} 0.75
vllm:kv_cache_usage_perc{rank="2"} NaN
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total 9
tgi_queue_size 4
`, i)
	}))
	defer srv.Close()
	s := NewScraper(srv.Client(), srv.URL, srv.URL, time.Now())
	for range 3 {
		s.Scrape(context.Background())
	}
	m := s.Metrics()
	if m.Scrapes != 3 || m.Failed != 0 || m.URL != srv.URL {
		t.Fatalf("reads %d, failed %d (%s), url %q", m.Scrapes, m.Failed, m.LastError, m.URL)
	}
	want := map[string][]float64{
		"vllm:num_requests_running": {2, 3, 4},
		"vllm:kv_cache_usage_perc":  {0.5, 0.5, 0.5},
		"tgi_queue_size":            {4, 4, 4}, // untyped, as a plain exposition writes it
	}
	if len(m.Series) != len(want) {
		t.Fatalf("series %+v, want %d", m.Series, len(want))
	}
	for _, sr := range m.Series {
		w := want[sr.Name]
		if len(sr.Points) != len(w) {
			t.Fatalf("%s: %+v, want %v", sr.Name, sr.Points, w)
		}
		for i, p := range sr.Points {
			if p.Value != w[i] || (i > 0 && p.Ms < sr.Points[i-1].Ms) {
				t.Fatalf("%s: %+v, want values %v in time order", sr.Name, sr.Points, w)
			}
		}
	}
	if !m.Series[1].Fraction() || m.Series[0].Fraction() {
		t.Fatalf("fractions: %+v", m.Series)
	}
}

// TestScraperHostile: an endpoint that errs, lies or floods is counted as a failed read with
// its reason, never kept as a value, and costs at most its bounds; a large exposition of other
// metrics is read for the known gauges alone.
func TestScraperHostile(t *testing.T) {
	lines := func(line string, bytes int) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			fmt.Fprint(w, strings.Repeat(line, bytes/len(line)+1))
		}
	}
	for _, c := range []struct {
		name, want string
		serve      func(w http.ResponseWriter)
	}{
		{"status", "HTTP 503", func(w http.ResponseWriter) { w.WriteHeader(503) }},
		{"html", `not Prometheus text: line 1 begins "<html>"`, func(w http.ResponseWriter) { fmt.Fprint(w, "<html>\n<body>hi</body>") }},
		{"flood", "more than 4 MiB of metrics", lines("node_cpu_seconds_total{cpu=\"0\"} 1\n", 5<<20)},
		{"long line", "a line longer than 64 KiB", lines("x", 100<<10)},
		{"label sets", "more than 256 KiB of the known gauges' label sets", func(w http.ResponseWriter) {
			for i := range 10000 {
				fmt.Fprintf(w, "vllm:num_requests_running{model_name=\"m%d\"} 1\n", i)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w) }))
			defer srv.Close()
			s := NewScraper(srv.Client(), srv.URL, srv.URL, time.Now())
			s.Scrape(context.Background())
			m := s.Metrics()
			if m.Failed != 1 || !strings.Contains(m.LastError, c.want) || len(m.Series) != 0 || len(m.LastError) > 400 {
				t.Fatalf("failed %d, last error %q, series %v; want one failure naming %q", m.Failed, m.LastError, m.Series, c.want)
			}
		})
	}
	t.Run("large exposition", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			lines("# HELP node_x a node exporter's\nnode_x{cpu=\"0\"} 1\n", 3<<20)(w)
			fmt.Fprint(w, "# TYPE sglang:num_queue_reqs gauge\nsglang:num_queue_reqs 5\n")
		}))
		defer srv.Close()
		s := NewScraper(srv.Client(), srv.URL, srv.URL, time.Now())
		s.Scrape(context.Background())
		if m := s.Metrics(); m.Failed != 0 || len(m.Series) != 1 || m.Series[0].Points[0].Value != 5 {
			t.Fatalf("%+v: want sglang:num_queue_reqs 5 read from 3 MiB of other metrics", m)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		defer func(n int) { maxEnginePoints = n }(maxEnginePoints)
		maxEnginePoints = 8
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "sglang:num_queue_reqs 1\n")
		}))
		defer srv.Close()
		s := NewScraper(srv.Client(), srv.URL, srv.URL, time.Now())
		for range 3*maxEnginePoints + 1 {
			s.Scrape(context.Background())
		}
		m := s.Metrics()
		// Run reads half as often after each thinning; read by hand, the series thins each time
		// it is past the bound, keeping its first point.
		if n := len(m.Series[0].Points); n > maxEnginePoints || n < maxEnginePoints/2 || m.IntervalMs < 2*Interval.Milliseconds() || m.Scrapes != 3*maxEnginePoints+1 {
			t.Fatalf("%d points every %d ms after %d reads, want %d to %d and a longer interval", n, m.IntervalMs, m.Scrapes, maxEnginePoints/2, maxEnginePoints)
		}
	})
}

// TestScraperRunStops: a read in flight ends with Run's context, not counted as the engine's
// failure.
func TestScraperRunStops(t *testing.T) {
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-r.Context().Done()
	}))
	defer srv.Close()
	s := NewScraper(srv.Client(), srv.URL, srv.URL, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	<-held // the first read is under way, and held
	cancel()
	<-done
	if m := s.Metrics(); m.Failed != 0 || m.Scrapes != 0 {
		t.Fatalf("%+v: a read the run cut counted", m)
	}
}
