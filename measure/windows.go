package measure

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// MaxWindows is how many windows a series holds at most: past the last, adjacent windows merge
// pairwise and the width doubles, so memory stays bounded however long the run.
const MaxWindows = 60

// FirstWindow is the width a series starts with.
const FirstWindow = time.Second

// Windows is a few metrics' latencies by when they were measured, so a reader sees when the
// tail came: per metric at most MaxWindows histograms, each Width wide from the run's start.
// Not safe for concurrent use: keep one per worker and merge them.
type Windows struct {
	width    time.Duration
	byMetric map[Metric][]*hdrhistogram.PackedHistogram
}

// NewWindows returns an empty set of FirstWindow wide windows.
func NewWindows() *Windows {
	return &Windows{width: FirstWindow, byMetric: map[Metric][]*hdrhistogram.PackedHistogram{}}
}

// Record adds d to m's window holding at (since the run started), as Histograms.Record does.
func (w *Windows) Record(m Metric, at, d time.Duration) error {
	if d < 0 || d > time.Hour || at < 0 {
		return fmt.Errorf("record %s = %v at %v: %w", m, d, at, ErrOutOfRange)
	}
	for at/w.width >= MaxWindows {
		w.coarsen()
	}
	if err := w.window(m, int(at/w.width)).RecordValue(d.Microseconds()); err != nil {
		return fmt.Errorf("record %s = %v at %v: %w: %w", m, d, at, ErrOutOfRange, err)
	}
	return nil
}

// window is m's window i, made empty if it has none.
func (w *Windows) window(m Metric, i int) *hdrhistogram.PackedHistogram {
	ws := w.byMetric[m]
	if len(ws) <= i {
		ws = append(ws, make([]*hdrhistogram.PackedHistogram, i+1-len(ws))...)
		w.byMetric[m] = ws
	}
	if ws[i] == nil {
		ws[i] = hdrhistogram.NewPacked(lowestMicros, highestMicros, sigFigs)
	}
	return ws[i]
}

// coarsen doubles the width, merging windows 2i and 2i+1 into window i.
func (w *Windows) coarsen() {
	w.width *= 2
	for m, ws := range w.byMetric {
		out := make([]*hdrhistogram.PackedHistogram, (len(ws)+1)/2)
		for i, h := range ws {
			switch {
			case h == nil:
			case out[i/2] == nil:
				out[i/2] = h
			default:
				out[i/2].Merge(h) // same geometry: nothing is dropped
			}
		}
		w.byMetric[m] = out
	}
}

// Merge adds from into w at the wider width and returns how many values fell outside the range.
func (w *Windows) Merge(from *Windows) (dropped int64) {
	if from == nil {
		return 0
	}
	for w.width < from.width {
		w.coarsen()
	}
	ratio := int(w.width / from.width) // from's windows per window of w
	for m, ws := range from.byMetric {
		for i, h := range ws {
			if h == nil {
				continue
			}
			dropped += w.window(m, i/ratio).Merge(h)
		}
	}
	return dropped
}

// Series is each recorded metric's percentiles per window with values, in report order.
func (w *Windows) Series() []LatencySeries {
	if w == nil {
		return nil
	}
	metrics := slices.SortedFunc(maps.Keys(w.byMetric), func(a, b Metric) int { return a.Rank() - b.Rank() })
	var out []LatencySeries
	for _, m := range metrics {
		s := LatencySeries{Metric: m, WindowMs: w.width.Milliseconds()}
		for i, h := range w.byMetric[m] {
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			s.Windows = append(s.Windows, LatencyWindow{
				StartMs: int64(i) * s.WindowMs, Count: h.TotalCount(),
				P50: h.ValueAtPercentile(50), P95: h.ValueAtPercentile(95), P99: h.ValueAtPercentile(99),
			})
		}
		if len(s.Windows) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// LatencySeries is one metric's percentiles per window of the run, over every key.
type LatencySeries struct {
	Metric   Metric          `json:"metric"`
	WindowMs int64           `json:"window_ms"` // every window's width
	Windows  []LatencyWindow `json:"windows"`   // in time order; a window with no value is absent
}

// LatencyWindow is one window's percentiles, in microseconds.
type LatencyWindow struct {
	StartMs int64 `json:"start_ms"` // since the run started
	Count   int64 `json:"count"`
	P50     int64 `json:"p50_us"`
	P95     int64 `json:"p95_us"`
	P99     int64 `json:"p99_us"`
}

// LatencyOverTime returns the series of m, if recorded.
func (s *Summary) LatencyOverTime(m Metric) (LatencySeries, bool) {
	return find(s.OverTime, func(ls LatencySeries) bool { return ls.Metric == m })
}
