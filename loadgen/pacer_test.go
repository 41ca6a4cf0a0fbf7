package loadgen

import (
	"math"
	"testing"
	"time"
)

func TestConstantRatePace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		rate     float64
		elapsed  time.Duration
		started  uint64
		wantWait time.Duration
		wantStop bool
	}{
		// The first session starts at once.
		{"first at zero", 10, 0, 0, 0, false},
		// 10/s: the 5th start (index 5) is due at 500ms.
		{"on schedule", 10, 200 * time.Millisecond, 5, 300 * time.Millisecond, false},
		// Behind schedule: the wait is negative, so the caller knows the intended start.
		{"behind", 10, time.Second, 5, -500 * time.Millisecond, false},
		// A zero rate has nothing to start.
		{"zero rate stops", 0, 0, 0, 0, true},
		// Fractional rates keep exact spacing: 0.5/s means every 2s.
		{"fractional", 0.5, 0, 3, 6 * time.Second, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wait, stop := ConstantRate{PerSecond: c.rate}.Pace(c.elapsed, c.started)
			if wait != c.wantWait || stop != c.wantStop {
				t.Fatalf("Pace(%v, %d) = (%v, %v), want (%v, %v)", c.elapsed, c.started, wait, stop, c.wantWait, c.wantStop)
			}
		})
	}
}

func TestPoissonMeanAndDeterminism(t *testing.T) {
	t.Parallel()
	const rate, n = 200.0, 20000
	p := &Poisson{PerSecond: rate, Seed: 42}
	var last time.Duration
	var gaps []float64
	for i := uint64(0); i < n; i++ {
		wait, stop := p.Pace(0, i)
		if stop {
			t.Fatalf("Poisson stopped at %d", i)
		}
		if wait < last {
			t.Fatalf("arrival %d due at %v before arrival %d at %v", i, wait, i-1, last)
		}
		if i > 0 {
			gaps = append(gaps, (wait - last).Seconds())
		}
		last = wait
	}
	mean := last.Seconds() / float64(n-1)
	if want := 1 / rate; math.Abs(mean-want)/want > 0.03 {
		t.Errorf("mean interval %.6fs, want %.6fs ± 3%%", mean, want)
	}
	// Exponential intervals: the standard deviation equals the mean (a constant pacer's is 0).
	var ss float64
	for _, g := range gaps {
		ss += (g - mean) * (g - mean)
	}
	if sd := math.Sqrt(ss / float64(len(gaps))); math.Abs(sd-mean)/mean > 0.05 {
		t.Errorf("interval stddev %.6fs, want ≈ mean %.6fs", sd, mean)
	}
	// Same seed, same schedule, even when asked out of order (memo reset).
	q := &Poisson{PerSecond: rate, Seed: 42}
	w1, _ := q.Pace(0, 1234)
	w0, _ := q.Pace(0, 10)
	r0, _ := p.Pace(0, 10)
	r1, _ := p.Pace(0, 1234)
	if w0 != r0 || w1 != r1 {
		t.Errorf("same seed gave different schedules: %v/%v vs %v/%v", w0, w1, r0, r1)
	}
	// Another seed, another schedule.
	other, _ := (&Poisson{PerSecond: rate, Seed: 43}).Pace(0, 10)
	if other == r0 {
		t.Errorf("seeds 42 and 43 gave the same 10th arrival %v", r0)
	}
}

func TestParseStages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    Stages
		wantErr bool
	}{
		// The example.
		{"30s:1000,60s:1000,10s:0", Stages{{30 * time.Second, 1000}, {60 * time.Second, 1000}, {10 * time.Second, 0}}, false},
		// Spaces around stages are tolerated.
		{" 1s:5 , 2s:0.5", Stages{{time.Second, 5}, {2 * time.Second, 0.5}}, false},
		// Missing colon.
		{"30s", nil, true},
		// Bad duration.
		{"abc:10", nil, true},
		// Zero duration would divide by zero.
		{"0s:10", nil, true},
		// Negative target.
		{"1s:-1", nil, true},
	}
	for _, c := range cases {
		got, err := ParseStages(c.in)
		if (err != nil) != c.wantErr {
			t.Errorf("ParseStages(%q) error = %v, wantErr %v", c.in, err, c.wantErr)
			continue
		}
		if c.wantErr {
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("ParseStages(%q) = %v, want %v", c.in, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("ParseStages(%q)[%d] = %v, want %v", c.in, i, got[i], c.want[i])
			}
		}
		if back, _ := ParseStages(got.String()); len(back) != len(got) {
			t.Errorf("String() %q does not round-trip", got.String())
		}
	}
}

func TestStagesTarget(t *testing.T) {
	t.Parallel()
	st := Stages{{10 * time.Second, 100}, {10 * time.Second, 100}, {5 * time.Second, 0}}
	cases := []struct {
		name     string
		elapsed  time.Duration
		want     float64
		wantDone bool
	}{
		// Ramps linearly from 0.
		{"start", 0, 0, false},
		{"mid ramp up", 5 * time.Second, 50, false},
		// Holds.
		{"hold", 15 * time.Second, 100, false},
		// Ramps down.
		{"mid ramp down", 22500 * time.Millisecond, 50, false},
		// Past the end: the last target, done.
		{"after", 30 * time.Second, 0, true},
	}
	for _, c := range cases {
		got, done := st.Target(c.elapsed)
		if math.Abs(got-c.want) > 1e-9 || done != c.wantDone {
			t.Errorf("%s: Target(%v) = (%v, %v), want (%v, %v)", c.name, c.elapsed, got, done, c.want, c.wantDone)
		}
	}
}

func TestStagesPace(t *testing.T) {
	t.Parallel()
	// A flat stage paces exactly like ConstantRate (within the µs search resolution).
	flat := Stages{{time.Nanosecond, 50}, {10 * time.Second, 50}}
	for _, n := range []uint64{1, 10, 250} {
		got, _ := flat.Pace(0, n)
		want, _ := ConstantRate{PerSecond: 50}.Pace(0, n)
		if d := got - want; d < -2*time.Microsecond || d > 2*time.Microsecond {
			t.Errorf("flat stages start %d due %v, constant rate %v", n, got, want)
		}
	}
	// A ramp 0 → 100/s over 10 s: n starts are due at sqrt(2n/10) s (integral 5t²).
	ramp := Stages{{10 * time.Second, 100}}
	for _, n := range []uint64{5, 20, 125, 499} {
		got, stop := ramp.Pace(0, n)
		want := time.Duration(math.Sqrt(float64(n)/5) * float64(time.Second))
		if stop || (got-want).Abs() > 2*time.Microsecond {
			t.Errorf("ramp start %d due (%v, stop %v), want %v", n, got, stop, want)
		}
	}
	// The ramp's 500 starts are all it has: the 500th stops.
	if _, stop := ramp.Pace(0, 500); !stop {
		t.Errorf("ramp did not stop after its 500 expected starts")
	}
	// The wait is relative to elapsed.
	if got, _ := ramp.Pace(time.Second, 5); (got - 0).Abs() > 2*time.Microsecond {
		t.Errorf("start 5 due at 1s, asked at 1s: wait %v, want 0", got)
	}
}

// TestGammaArrivals: gamma intervals of shape B keep the mean 1/rate and have a coefficient of
// variation of 1/sqrt(B); B = 1 is the Poisson pacer's schedule, draw for draw.
func TestGammaArrivals(t *testing.T) {
	t.Parallel()
	const rate, n = 100.0, 40000
	for _, b := range []float64{0.25, 0.5, 1, 2, 4} {
		p := &Poisson{PerSecond: rate, Burstiness: b, Seed: 7}
		var sum, ss float64
		prev := time.Duration(0)
		for i := uint64(1); i <= n; i++ {
			due, _ := p.Pace(0, i)
			g := (due - prev).Seconds()
			prev, sum, ss = due, sum+g, ss+g*g
		}
		mean := sum / n
		cv := math.Sqrt(ss/n-mean*mean) / mean
		if want := 1 / rate; math.Abs(mean-want)/want > 0.03 {
			t.Errorf("burstiness %g: mean interval %.6fs, want %.6fs ± 3%%", b, mean, want)
		}
		if want := 1 / math.Sqrt(b); math.Abs(cv-want)/want > 0.05 {
			t.Errorf("burstiness %g: coefficient of variation %.3f, want %.3f ± 5%%", b, cv, want)
		}
	}
	poisson, gamma1 := &Poisson{PerSecond: rate, Seed: 7}, &Poisson{PerSecond: rate, Burstiness: 1, Seed: 7}
	for i := uint64(0); i < 100; i++ {
		a, _ := poisson.Pace(0, i)
		g, _ := gamma1.Pace(0, i)
		if a != g {
			t.Fatalf("start %d due at %v, Poisson's at %v: burstiness 1 is not the Poisson schedule", i, g, a)
		}
	}
}

func TestSchedulePace(t *testing.T) {
	t.Parallel()
	s := Schedule{0, 100 * time.Millisecond, 100 * time.Millisecond, time.Second}
	for _, c := range []struct {
		elapsed  time.Duration
		started  uint64
		wantWait time.Duration
		wantStop bool
	}{
		{0, 0, 0, false}, // the first row at once
		{30 * time.Millisecond, 1, 70 * time.Millisecond, false},   // the second due at 100 ms
		{150 * time.Millisecond, 2, -50 * time.Millisecond, false}, // a row of the same time, late: a negative wait
		{time.Second, 3, 0, false},                                 // the last row
		{time.Second, 4, 0, true},                                  // the schedule is over after its rows
	} {
		if wait, stop := s.Pace(c.elapsed, c.started); wait != c.wantWait || stop != c.wantStop {
			t.Errorf("Pace(%v, %d) = (%v, %v), want (%v, %v)", c.elapsed, c.started, wait, stop, c.wantWait, c.wantStop)
		}
	}
}
