package leakcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/streambench/streambench/measure"
)

// The defaults of a check's grace and pooled tolerance (loadgen's --leak-grace and
// --leak-per-stream).
const (
	DefaultGrace     = 5 * time.Second
	DefaultPerStream = 0.05
)

// Check is one leak check around a load that several generator processes share (the
// shards of a sharded run): Baseline before any shard starts, Verify after every one has
// ended. A shard's own check would see the other shards' streams, so shards skip theirs and
// this one judges the whole run. It reads the runtime's and the mock's gauges only: the
// generators are other processes.
type Check struct {
	// RuntimeMetricsURL is the runtime's Prometheus endpoint ("" or "-": not read); MockURL
	// the mock's base URL, whose /metrics is read ("": not read).
	RuntimeMetricsURL string
	MockURL           string
	// Grace is how long Verify waits for the gauges to settle (0: DefaultGrace).
	Grace time.Duration
	// PerStream is the pooled tolerance per peak open stream (0: DefaultPerStream), and
	// PeakStreams the run's peak open streams over every shard (an upper bound will do).
	PerStream   float64
	PeakStreams int64
	// Client reads the endpoints (nil: a client with no special settings).
	Client *http.Client
}

// Baseline is what Check.Baseline read, saved between the steps (a file: see
// WriteBaseline).
type Baseline struct {
	Taken      time.Time                `json:"taken"`
	Sources    []SourceReading          `json:"sources"`
	NotChecked []measure.LeakNotChecked `json:"not_checked,omitempty"`
}

// SourceReading is one source's gauges at the baseline.
type SourceReading struct {
	Source string             `json:"source"` // "runtime" or "mock"
	URL    string             `json:"url"`
	Gauges map[string]float64 `json:"gauges"`
}

func (c Check) probe() *Probe {
	p := &Probe{Client: c.Client, RuntimeURL: c.RuntimeMetricsURL, MockURL: c.MockURL,
		PerStream: c.PerStream, Grace: c.Grace, Peak: func() int64 { return c.PeakStreams }}
	if p.Client == nil {
		p.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if p.Grace <= 0 {
		p.Grace = DefaultGrace
	}
	if p.PerStream <= 0 {
		p.PerStream = DefaultPerStream
	}
	return p
}

// Baseline reads every configured source. A source it cannot read is recorded as not
// checked (as a run's own check does); it is an error only when no source is configured.
func (c Check) Baseline(ctx context.Context) (*Baseline, error) {
	p := c.probe()
	if len(p.sources()) == 0 {
		return nil, errors.New("leak baseline: no source: give the runtime's metrics URL, the mock's URL or both")
	}
	b := p.Baseline(ctx)
	out := &Baseline{Taken: time.Now().UTC(), NotChecked: b.notChecked}
	for _, src := range b.sources {
		out.Sources = append(out.Sources, SourceReading{Source: src.name, URL: src.url, Gauges: b.gauges[src.name]})
	}
	return out, nil
}

// Verify reads the baseline's sources again until every delta is within tolerance or Grace
// has passed. The sources must be the ones the baseline read: a verify against another
// runtime than the baseline's is an error naming both URLs.
func (c Check) Verify(ctx context.Context, b *Baseline) ([]measure.Leak, []measure.LeakNotChecked, error) {
	p := c.probe()
	want := map[string]string{}
	for _, src := range p.sources() {
		want[src.name] = src.url
	}
	before := &Reading{gauges: map[string]gauges{}, notChecked: b.NotChecked}
	for _, r := range b.Sources {
		url, ok := want[r.Source]
		if !ok {
			return nil, nil, fmt.Errorf("leak verify: the baseline read the %s at %s; give its URL to verify too", r.Source, r.URL)
		}
		if url != r.URL {
			return nil, nil, fmt.Errorf("leak verify: %s: the baseline read %s, verify was given %s", r.Source, r.URL, url)
		}
		before.sources = append(before.sources, leakSource{name: r.Source, url: r.URL})
		before.gauges[r.Source] = r.Gauges
	}
	leaks, notChecked := p.Check(ctx, before)
	return leaks, notChecked, nil
}

// WriteBaseline saves b as JSON at path.
func WriteBaseline(path string, b *Baseline) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("leak baseline: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("leak baseline: %w", err)
	}
	return nil
}

// ReadBaseline reads a file WriteBaseline wrote; unknown fields are an error naming
// the file, so a summary.json given by mistake is not read as an empty baseline.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("leak baseline: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Baseline
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("leak baseline %s: %w", path, err)
	}
	if b.Taken.IsZero() {
		return nil, fmt.Errorf("leak baseline %s: no \"taken\" time: not a file written by leaks baseline", path)
	}
	return &b, nil
}

// VerifyFile is Verify against the baseline ReadBaseline reads from path.
func (c Check) VerifyFile(ctx context.Context, path string) ([]measure.Leak, []measure.LeakNotChecked, error) {
	b, err := ReadBaseline(path)
	if err != nil {
		return nil, nil, err
	}
	return c.Verify(ctx, b)
}
