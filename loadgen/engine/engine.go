package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/streambench/streambench/measure"
)

// Interval is how often an Scraper reads the gauges, at first.
const Interval = time.Second

const (
	maxEngineBody = 4 << 20   // the whole exposition read (a vLLM's is a few hundred KiB)
	maxEngineLine = 64 << 10  // one line of it
	maxEngineKept = 256 << 10 // the known gauges' lines kept to parse
	engineTimeout = 5 * time.Second
)

// maxEnginePoints bounds a series: past it every other point goes and the interval doubles.
var maxEnginePoints = 4096

// Scraper reads an inference engine's known gauges (measure.EngineGauges) from its
// Prometheus endpoint while a run loads it. Safe for concurrent use.
type Scraper struct {
	client *http.Client
	url    string
	start  time.Time

	mu    sync.Mutex
	m     measure.EngineMetrics
	index map[string]int // a gauge's series in m.Series
}

// NewScraper reads rawURL's gauges with client, timing points from start; shown is the
// URL as the results name it (its credentials redacted).
func NewScraper(client *http.Client, rawURL, shown string, start time.Time) *Scraper {
	return &Scraper{client: client, url: rawURL, start: start, index: map[string]int{},
		m: measure.EngineMetrics{URL: shown, IntervalMs: Interval.Milliseconds(), Series: []measure.EngineSeries{}}}
}

// Run reads the gauges at once, then every interval until ctx ends (a read in flight with it).
func (s *Scraper) Run(ctx context.Context) {
	every := Interval
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
		case <-ctx.Done():
			return
		}
	}
}

// Metrics is a copy of what was read so far; nil for a nil scraper.
func (s *Scraper) Metrics() *measure.EngineMetrics {
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

func (s *Scraper) interval() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(s.m.IntervalMs) * time.Millisecond
}

// Scrape reads the gauges once; a failure is counted and kept as the last error.
func (s *Scraper) Scrape(ctx context.Context) {
	at := time.Since(s.start).Milliseconds()
	values, err := s.read(ctx)
	if err != nil && ctx.Err() != nil {
		return // the run ended the read: not the engine's failure
	}
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

// read is the known gauges' values at the endpoint now, each over its label sets. Only their
// lines are kept and parsed, so a large exposition (a node exporter's) costs one pass over it.
func (s *Scraper) read(ctx context.Context) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, engineTimeout)
	defer cancel()
	fams, err := Fetch(ctx, s.client, s.url, func(body io.Reader) ([]byte, error) {
		return knownLines(io.LimitReader(body, maxEngineBody+1))
	})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		// Said as such, not as the closed connection a timeout leaves.
		return nil, fmt.Errorf("no answer within %v", engineTimeout)
	} else if err != nil {
		return nil, err
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

// StatusError is a Fetch answered with an HTTP status other than 200.
type StatusError int

func (e StatusError) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }

// Fetch GETs the Prometheus text at u and parses what keep returns of its body (nil: all of it,
// up to 8 MiB); ctx bounds it. Its errors are the request's, a StatusError, keep's, or "not
// Prometheus text".
func Fetch(ctx context.Context, client *http.Client, u string,
	keep func(io.Reader) ([]byte, error)) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, StatusError(resp.StatusCode)
	}
	if keep == nil {
		keep = func(body io.Reader) ([]byte, error) { return io.ReadAll(io.LimitReader(body, 8<<20)) }
	}
	kept, err := keep(resp.Body)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(kept))
	if err != nil {
		return nil, fmt.Errorf("not Prometheus text: %w", err)
	}
	return fams, nil
}

// knownLines are the lines of an exposition that name a known gauge (samples and # TYPE), at
// most maxEngineKept bytes of them, read from at most maxEngineBody bytes.
func knownLines(r io.Reader) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEngineLine)
	var kept []byte
	read, n := 0, 0
	for sc.Scan() {
		line := sc.Bytes()
		read += len(line) + 1
		n++
		if read > maxEngineBody {
			return nil, fmt.Errorf("more than %d MiB of metrics", maxEngineBody>>20)
		}
		name := line
		if f := bytes.Fields(line); len(f) >= 3 && string(f[0]) == "#" && string(f[1]) == "TYPE" {
			name = f[2]
		} else if len(line) > 0 && line[0] != '#' {
			if c := line[0]; c != '_' && c != ':' && (c|0x20 < 'a' || c|0x20 > 'z') {
				return nil, fmt.Errorf("not Prometheus text: line %d begins %q", n, line[:min(len(line), 20)])
			}
			name = line[:max(bytes.IndexAny(line, "{ \t"), 0)]
		}
		if knownGauges[string(name)] {
			if kept = append(append(kept, line...), '\n'); len(kept) > maxEngineKept {
				return nil, fmt.Errorf("more than %d KiB of the known gauges' label sets", maxEngineKept>>10)
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, fmt.Errorf("a line longer than %d KiB", maxEngineLine>>10)
	}
	return kept, sc.Err()
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

// Warning says when the engine's gauges could not all be read ("": they could).
func Warning(e *measure.EngineMetrics) string {
	switch {
	case e == nil || e.Scrapes == 0:
		return ""
	case e.Failed == e.Scrapes:
		return fmt.Sprintf("engine metrics: every read of %s failed (last: %s)", e.URL, e.LastError)
	case len(e.Series) == 0:
		return fmt.Sprintf("engine metrics: %s has none of the known vLLM, SGLang or TGI gauges (docs/ENDPOINTS.md)", e.URL)
	case e.Failed > 0:
		return fmt.Sprintf("engine metrics: %d of %d reads of %s failed (last: %s)", e.Failed, e.Scrapes, e.URL, e.LastError)
	}
	return ""
}

// knownGauges are measure.EngineGauges' names.
var knownGauges = func() map[string]bool {
	m := map[string]bool{}
	for _, g := range measure.EngineGauges {
		m[g.Name] = true
	}
	return m
}()
