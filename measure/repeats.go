package measure

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// RepeatsFile is a repeated workload's spread (load and run --repeat), beside its runs.
const RepeatsFile = "repeats.json"

// Repeats is one workload played several times: the runs' ids and each headline figure over them.
type Repeats struct {
	Runs    []string `json:"runs"`
	Figures []Spread `json:"figures"`
}

// Spread is one figure over the runs: each run's value, their median and range, and the range
// as a share of the median (0 when the median is 0).
type Spread struct {
	Figure string    `json:"figure"`
	Unit   string    `json:"unit,omitempty"` // "ms", or none where the figure names it (tokens/s)
	Values []float64 `json:"values"`
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Spread float64   `json:"spread"`
}

// repeatFigures are the figures a repeat's spread covers, each read from a run's summary.
var repeatFigures = []struct {
	name, unit string
	value      func(*Summary) (float64, bool)
}{
	{"ttft p50", "ms", overall(TimeToFirstToken, 50)},
	{"ttft p99", "ms", overall(TimeToFirstToken, 99)},
	{"ttfc p50", "ms", overall(FirstChunk, 50)},
	{"ttfc p99", "ms", overall(FirstChunk, 99)},
	{"e2e p50", "ms", overall(StreamDuration, 50)},
	{"e2e p99", "ms", overall(StreamDuration, 99)},
	{"itl p50", "ms", overall(InterTokenLatency, 50)},
	{"tokens/s", "", tokens(func(t *TokenSummary) float64 { return t.OutputTokensPerSecond })},
	{"requests/s", "", tokens(func(t *TokenSummary) float64 { return t.RequestsPerSecond })},
	{"goodput/s", "", tokens(func(t *TokenSummary) float64 { return t.Goodput.PerSecond })},
}

func overall(m Metric, p int) func(*Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		o, ok := s.OverallMetric(m)
		if !ok || o.Count == 0 {
			return 0, false
		}
		return float64(map[int]int64{50: o.P50, 99: o.P99}[p]) / 1000, true
	}
}

func tokens(f func(*TokenSummary) float64) func(*Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		if s.Tokens == nil {
			return 0, false
		}
		return f(s.Tokens), true
	}
}

// NewRepeats is the spread of every figure all the runs have.
func NewRepeats(runs []*Summary) Repeats {
	var r Repeats
	for _, s := range runs {
		r.Runs = append(r.Runs, s.RunID)
	}
	for _, f := range repeatFigures {
		values := make([]float64, 0, len(runs))
		for _, s := range runs {
			if v, ok := f.value(s); ok {
				values = append(values, v)
			}
		}
		if len(values) == 0 || len(values) < len(runs) {
			continue
		}
		sorted := slices.Sorted(slices.Values(values))
		sp := Spread{Figure: f.name, Unit: f.unit, Values: values, Min: sorted[0], Max: sorted[len(sorted)-1]}
		if n := len(sorted); n%2 == 1 {
			sp.Median = sorted[n/2]
		} else {
			sp.Median = (sorted[n/2-1] + sorted[n/2]) / 2
		}
		if sp.Median != 0 {
			sp.Spread = (sp.Max - sp.Min) / sp.Median
		}
		r.Figures = append(r.Figures, sp)
	}
	return r
}

// WriteRepeats writes r as RepeatsFile into dir.
func WriteRepeats(dir string, r Repeats) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", RepeatsFile, err)
	}
	return os.WriteFile(filepath.Join(dir, RepeatsFile), append(b, '\n'), 0o644)
}

// ReadRepeats reads dir's RepeatsFile (os.ErrNotExist when dir is not a repeated workload's).
func ReadRepeats(dir string) (Repeats, error) {
	var r Repeats
	f, err := os.Open(filepath.Join(dir, RepeatsFile))
	if err != nil {
		return r, err
	}
	defer f.Close()
	b, err := io.ReadAll(&capReader{r: f, left: readLimits[RepeatsFile].bytes, limits: readLimits[RepeatsFile]})
	if err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, RepeatsFile), err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: %w", filepath.Join(dir, RepeatsFile), err)
	}
	for _, f := range r.Figures {
		if len(f.Values) != len(r.Runs) || f.Figure == "" {
			return r, fmt.Errorf("%s: figure %q has %d values for %d runs", filepath.Join(dir, RepeatsFile), f.Figure, len(f.Values), len(r.Runs))
		}
	}
	return r, nil
}
