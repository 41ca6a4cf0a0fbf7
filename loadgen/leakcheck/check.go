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

// The defaults of a check's grace and pooled tolerance per peak stream.
const (
	DefaultGrace     = 5 * time.Second
	DefaultPerStream = 0.05
)

// Check is one leak check around a sharded run, whose shards skip their own as each would see
// the others' streams: Baseline before any shard starts, Verify after all ended.
type Check struct {
	RuntimeMetricsURL string        // "" or "-": not read
	MockURL           string        // its /metrics is read; "": not read
	Grace             time.Duration // 0: DefaultGrace
	PerStream         float64       // 0: DefaultPerStream
	PeakStreams       int64         // over every shard (an upper bound will do)
	Client            *http.Client  // nil: a plain client
}

// Baseline is what Check.Baseline read, saved between the steps (WriteBaseline).
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

// Baseline reads every configured source (none is an error), recording what it cannot read.
func (c Check) Baseline(ctx context.Context) (*Baseline, error) {
	p := c.probe()
	if len(p.sources()) == 0 {
		return nil, errors.New("leak baseline: no source: give the runtime's metrics URL, the mock's URL or both")
	}
	b := p.Baseline(ctx)
	return &Baseline{Taken: time.Now().UTC(), Sources: b.sources, NotChecked: b.notChecked}, nil
}

// Verify reads the baseline's sources again, as Probe.Check does; other sources are an error.
func (c Check) Verify(ctx context.Context, b *Baseline) ([]measure.Leak, []measure.LeakNotChecked, error) {
	p := c.probe()
	want := map[string]string{}
	for _, src := range p.sources() {
		want[src.Source] = src.URL
	}
	for _, r := range b.Sources {
		url, ok := want[r.Source]
		if !ok {
			return nil, nil, fmt.Errorf("leak verify: the baseline read the %s at %s; give its URL to verify too", r.Source, r.URL)
		}
		if url != r.URL {
			return nil, nil, fmt.Errorf("leak verify: %s: the baseline read %s, verify was given %s", r.Source, r.URL, url)
		}
	}
	leaks, notChecked := p.Check(ctx, &Reading{sources: b.Sources, notChecked: b.NotChecked})
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

// ReadBaseline reads a file WriteBaseline wrote; unknown fields are an error, so a
// summary.json given by mistake is not read as an empty baseline.
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
