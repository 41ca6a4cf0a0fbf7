package endpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/streambench/streambench/measure"
)

// EngineInterval is how often an EngineScraper reads the gauges, at first.
const EngineInterval = time.Second

const (
	// maxEnginePoints bounds a series: past it every other point goes and the interval doubles.
	maxEnginePoints = 4096
	maxEngineBody   = 16 << 20
	engineTimeout   = 5 * time.Second
)

// EngineScraper reads an inference engine's known gauges (measure.EngineGauges) from its
// Prometheus endpoint while a run loads it. Safe for concurrent use.
type EngineScraper struct {
	client *http.Client
	url    string
	start  time.Time

	mu    sync.Mutex
	m     measure.EngineMetrics
	index map[string]int // a gauge's series in m.Series
}

// NewEngineScraper reads rawURL's gauges with client, timing points from start.
func NewEngineScraper(client *http.Client, rawURL string, start time.Time) *EngineScraper {
	shown := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		shown = u.Redacted()
	}
	return &EngineScraper{client: client, url: rawURL, start: start, index: map[string]int{},
		m: measure.EngineMetrics{URL: shown, IntervalMs: EngineInterval.Milliseconds(), Series: []measure.EngineSeries{}}}
}

// Run reads the gauges at once, then every interval until stop closes or ctx ends.
func (s *EngineScraper) Run(ctx context.Context, stop <-chan struct{}) {
	every := EngineInterval
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.Scrape(ctx)
		if d := s.interval(); d != every {
			every = d
			t.Reset(every)
		}
		select {
		case <-t.C:
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Metrics is a copy of what was read so far; nil for a nil scraper.
func (s *EngineScraper) Metrics() *measure.EngineMetrics {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	m.Series = make([]measure.EngineSeries, len(s.m.Series))
	for i, sr := range s.m.Series {
		m.Series[i] = sr
		m.Series[i].Points = append([]measure.EnginePoint(nil), sr.Points...)
	}
	return &m
}

func (s *EngineScraper) interval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.m.IntervalMs) * time.Millisecond
}

// Scrape reads the gauges once; a failure is counted and kept as the last error.
func (s *EngineScraper) Scrape(ctx context.Context) {
	at := time.Since(s.start).Milliseconds()
	values, err := s.read(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Scrapes++
	if err != nil {
		s.m.Failed++
		msg := err.Error()
		if len(msg) > 300 { // a hostile endpoint's bytes quoted by the parser
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
		s.m.LastError = msg
		return
	}
	thin := false
	for _, g := range measure.EngineGauges {
		v, ok := values[g.Name]
		if !ok {
			continue
		}
		i, ok := s.index[g.Name]
		if !ok {
			i = len(s.m.Series)
			s.index[g.Name] = i
			s.m.Series = append(s.m.Series, measure.EngineSeries{Name: g.Name, Doc: g.Doc})
		}
		s.m.Series[i].Points = append(s.m.Series[i].Points, measure.EnginePoint{Ms: at, Value: v})
		thin = thin || len(s.m.Series[i].Points) > maxEnginePoints
	}
	if thin {
		for i := range s.m.Series {
			pts := s.m.Series[i].Points
			for j := range (len(pts) + 1) / 2 {
				pts[j] = pts[2*j]
			}
			s.m.Series[i].Points = pts[:(len(pts)+1)/2]
		}
		s.m.IntervalMs *= 2
	}
}

// read is the known gauges' values at the endpoint now, each over its label sets.
func (s *EngineScraper) read(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxEngineBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxEngineBody {
		return nil, errors.New("more than 16 MiB of metrics")
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text: %w", err)
	}
	out := map[string]float64{}
	for _, g := range measure.EngineGauges {
		if f := fams[g.Name]; f != nil {
			if v, ok := gaugeValue(f, g.Fraction); ok {
				out[g.Name] = v
			}
		}
	}
	return out, nil
}

// gaugeValue is f's value summed over its label sets, or their mean; NaNs are left out.
func gaugeValue(f *dto.MetricFamily, mean bool) (float64, bool) {
	var sum float64
	n := 0
	for _, m := range f.GetMetric() {
		v := m.GetGauge().GetValue()
		if m.Gauge == nil {
			v = m.GetUntyped().GetValue()
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		sum += v
		n++
	}
	if n == 0 {
		return 0, false
	}
	if mean {
		return sum / float64(n), true
	}
	return sum, true
}
