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

// One leak check around a sharded run, whose shards skip their own as each would see the
// others' streams: TakeBaseline before any shard starts, Verify after all ended.

// Baseline is what TakeBaseline read, saved between the steps (WriteBaseline).
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

// withDefaults is p with a plain client, DefaultGrace and DefaultPerStream where none is given.
func (p *Probe) withDefaults() *Probe {
	q := *p
	if q.Client == nil {
		q.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if q.Grace <= 0 {
		q.Grace = DefaultGrace
	}
	if q.PerStream <= 0 {
		q.PerStream = DefaultPerStream
	}
	return &q
}

// TakeBaseline reads every configured source (none is an error), recording what it cannot read.
func (p *Probe) TakeBaseline(ctx context.Context) (*Baseline, error) {
	if len(p.sources()) == 0 {
		return nil, errors.New("leak baseline: no source: give the runtime's metrics URL, the mock's URL or both")
	}
	b := p.withDefaults().Baseline(ctx)
	return &Baseline{Taken: time.Now().UTC(), Sources: b.sources, NotChecked: b.notChecked}, nil
}

// Verify reads the baseline's sources again, as Check does; other sources are an error.
func (p *Probe) Verify(ctx context.Context, b *Baseline) ([]measure.Leak, []measure.LeakNotChecked, error) {
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
	leaks, notChecked := p.withDefaults().Check(ctx, &Reading{sources: b.Sources, notChecked: b.NotChecked})
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
func (p *Probe) VerifyFile(ctx context.Context, path string) ([]measure.Leak, []measure.LeakNotChecked, error) {
	b, err := ReadBaseline(path)
	if err != nil {
		return nil, nil, err
	}
	return p.Verify(ctx, b)
}
