package endpoint

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

// TestEngineScraper: the known gauges are read over their label sets (counts summed, shares
// averaged), other metrics left out, one point per read in order.
func TestEngineScraper(t *testing.T) {
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
	s := NewEngineScraper(srv.Client(), srv.URL, time.Now())
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

// TestEngineScraperHostile: an endpoint that errs, lies or floods is counted as a failed read
// with its reason, never kept as a value; the series stay bounded however long the run.
func TestEngineScraperHostile(t *testing.T) {
	for _, c := range []struct {
		name, want string
		serve      func(w http.ResponseWriter)
	}{
		{"status", "HTTP 503", func(w http.ResponseWriter) { w.WriteHeader(503) }},
		{"html", "not Prometheus text", func(w http.ResponseWriter) { fmt.Fprint(w, "<html>\n<body>hi</body>") }},
		{"flood", "more than 16 MiB", func(w http.ResponseWriter) {
			line := "# HELP x " + strings.Repeat("y", 1<<20) + "\n"
			for range 17 {
				fmt.Fprint(w, line)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.serve(w) }))
			defer srv.Close()
			s := NewEngineScraper(srv.Client(), srv.URL, time.Now())
			s.Scrape(context.Background())
			m := s.Metrics()
			if m.Failed != 1 || !strings.Contains(m.LastError, c.want) || len(m.Series) != 0 || len(m.LastError) > 400 {
				t.Fatalf("failed %d, last error %q, series %v; want one failure naming %q", m.Failed, m.LastError, m.Series, c.want)
			}
		})
	}
	t.Run("bounded", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "sglang:num_queue_reqs 1\n")
		}))
		defer srv.Close()
		s := NewEngineScraper(srv.Client(), srv.URL, time.Now())
		for range maxEnginePoints + 1 {
			s.Scrape(context.Background())
		}
		m := s.Metrics()
		if n := len(m.Series[0].Points); n > maxEnginePoints/2+1 || m.IntervalMs != 2*EngineInterval.Milliseconds() {
			t.Fatalf("%d points every %d ms after %d reads, want them halved and the interval doubled", n, m.IntervalMs, m.Scrapes)
		}
	})
}

// TestEngineURLRedacted: a password in the URL never reaches the results.
func TestEngineURLRedacted(t *testing.T) {
	s := NewEngineScraper(http.DefaultClient, "http://user:secret@127.0.0.1:1/metrics", time.Now())
	if m := s.Metrics(); strings.Contains(m.URL, "secret") {
		t.Fatalf("url %q keeps the password", m.URL)
	}
}
