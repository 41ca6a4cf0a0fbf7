package measure

import (
	"testing"
	"time"
)

// TestWindowsSeries: values land in the window of the moment they were measured, and each
// window's percentiles are its own values'.
func TestWindowsSeries(t *testing.T) {
	t.Parallel()
	w := NewWindows()
	for i := range 100 {
		at := time.Duration(i) * 10 * time.Millisecond // 0 .. 990 ms: window 0
		if err := w.Record(FirstChunk, at, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := w.Record(FirstChunk, 3*time.Second+at, 50*time.Millisecond); err != nil { // window 3
			t.Fatal(err)
		}
	}
	series := w.Series()
	if len(series) != 1 || series[0].Metric != FirstChunk || series[0].WindowMs != 1000 {
		t.Fatalf("series %+v, want one for ttfc in 1 s windows", series)
	}
	ws := series[0].Windows
	if len(ws) != 2 || ws[0].StartMs != 0 || ws[1].StartMs != 3000 {
		t.Fatalf("windows %+v, want 0 s and 3 s (the empty ones left out)", ws)
	}
	if ws[0].Count != 100 || ws[0].P50/1000 != 10 || ws[1].P99/1000 != 50 {
		t.Errorf("windows %+v, want 100 values of 10 ms, then of 50 ms", ws)
	}
	if err := w.Record(FirstChunk, -time.Second, time.Millisecond); err == nil {
		t.Error("a value before the run's start was recorded")
	}
}

// TestWindowsStayBounded: a run longer than MaxWindows seconds merges adjacent windows, so the
// series never holds more than MaxWindows windows and loses no value.
func TestWindowsStayBounded(t *testing.T) {
	t.Parallel()
	w := NewWindows()
	const seconds = 1000
	for s := range seconds {
		if err := w.Record(FirstChunk, time.Duration(s)*time.Second, time.Duration(s+1)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	// 1000 s in at most 60 windows: 1 s doubled until 60 windows cover it, 32 s.
	if w.width != 32*time.Second {
		t.Errorf("width %v, want 32s", w.width)
	}
	s := w.Series()[0]
	var n int64
	for _, win := range s.Windows {
		n += win.Count
	}
	if len(s.Windows) > MaxWindows || n != seconds {
		t.Errorf("%d windows holding %d values, want at most %d holding %d", len(s.Windows), n, MaxWindows, seconds)
	}
	// The last window holds seconds 992..999: its p50 is about 996 ms.
	last := s.Windows[len(s.Windows)-1]
	if last.StartMs != 31*32000 || last.P50/1000 < 992 || last.P50/1000 > 1000 {
		t.Errorf("last window %+v, want the one from 992 s with p50 near 996 ms", last)
	}
}

// TestWindowsMerge: shards whose windows have grown to different widths merge at the wider
// one, each value in the window of its moment.
func TestWindowsMerge(t *testing.T) {
	t.Parallel()
	short, long := NewWindows(), NewWindows()
	for s := range 10 {
		if err := short.Record(FirstChunkOverhead, time.Duration(s)*time.Second, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := long.Record(FirstChunkOverhead, 100*time.Second, 80*time.Millisecond); err != nil { // 2 s windows
		t.Fatal(err)
	}
	if dropped := short.Merge(long); dropped != 0 {
		t.Fatalf("merge dropped %d", dropped)
	}
	s := short.Series()[0]
	if s.WindowMs != 2000 || len(s.Windows) != 6 {
		t.Fatalf("series %+v, want 2 s windows: five of the short shard's, one of the long one's", s)
	}
	if w := s.Windows[0]; w.Count != 2 || w.P50/1000 != 5 {
		t.Errorf("first window %+v, want seconds 0 and 1 of the short shard", w)
	}
	if w := s.Windows[5]; w.StartMs != 100000 || w.Count != 1 || w.P99/1000 != 80 {
		t.Errorf("last window %+v, want the long shard's value at 100 s", w)
	}
}
