package loadgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// A Pacer schedules an open-loop run's starts: Pace, a function of the time elapsed and the
// sessions started, returns the wait before the next start (negative when behind: it was due
// -wait ago) and stop when the schedule is over. Callers measure latency from the intended
// start, so a slow target cannot hide its queueing (no coordinated omission).
type Pacer interface {
	Pace(elapsed time.Duration, started uint64) (wait time.Duration, stop bool)
}

// ConstantRate starts PerSecond sessions per second, evenly spaced, forever (the caller bounds
// the run by duration or session count). The n-th start (from 0) is due at n/PerSecond.
type ConstantRate struct {
	PerSecond float64
}

// Pace implements Pacer.
func (c ConstantRate) Pace(elapsed time.Duration, started uint64) (time.Duration, bool) {
	if c.PerSecond <= 0 {
		return 0, true
	}
	due := time.Duration(float64(started) / c.PerSecond * float64(time.Second))
	return due - elapsed, false
}

// Poisson starts sessions at exponentially distributed intervals of mean 1/PerSecond, or with a
// Burstiness B other than 0 and 1 gamma-distributed ones of shape B (vLLM's --burstiness). The
// k-th interval comes from a generator seeded with (Seed, k), so the schedule is a pure function
// of the seed. Not safe for concurrent use (it memoizes the last arrival, for O(1) calls).
type Poisson struct {
	PerSecond, Burstiness float64
	Seed                  uint64

	memoN   uint64        // arrivals summed into memoDue
	memoDue time.Duration // due time of arrival memoN
}

// interval returns the gap before arrival k (k >= 1); arrival 0 is due at 0.
func (p *Poisson) interval(k uint64) time.Duration {
	r := rand.New(rand.NewPCG(p.Seed, k))
	if b := p.Burstiness; b > 0 && b != 1 {
		return time.Duration(gamma(r, b) / b / p.PerSecond * float64(time.Second))
	}
	return time.Duration(r.ExpFloat64() / p.PerSecond * float64(time.Second))
}

// gamma draws from the gamma distribution of shape k and scale 1 (Marsaglia and Tsang's
// method; for k < 1, a draw of shape k+1 scaled by U^(1/k)).
func gamma(r *rand.Rand, k float64) float64 {
	if k < 1 {
		return gamma(r, k+1) * math.Pow(r.Float64(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(r.Float64()) < x*x/2+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// Pace implements Pacer.
func (p *Poisson) Pace(elapsed time.Duration, started uint64) (time.Duration, bool) {
	if p.PerSecond <= 0 {
		return 0, true
	}
	if started < p.memoN {
		p.memoN, p.memoDue = 0, 0
	}
	for p.memoN < started {
		p.memoN++
		p.memoDue += p.interval(p.memoN)
	}
	return p.memoDue - elapsed, false
}

// Schedule starts session n at Schedule[n] (a trace's timestamps, load --trace) and stops
// after the last.
type Schedule []time.Duration

// Pace implements Pacer.
func (s Schedule) Pace(elapsed time.Duration, started uint64) (time.Duration, bool) {
	if started >= uint64(len(s)) {
		return 0, true
	}
	return s[started] - elapsed, false
}

// Stage is one step of a ramp: over Duration the target (a session rate, or closed-loop virtual
// users) moves linearly from the previous stage's Target (0 before the first) to this one.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Stages is a piecewise-linear ramp, as k6 stages: "30s:1000,60s:1000,10s:0" ramps up to 1000
// in 30 s, holds for 60 s, ramps down to 0 in 10 s.
type Stages []Stage

// ParseStages parses "DURATION:TARGET[,DURATION:TARGET...]".
func ParseStages(s string) (Stages, error) {
	var out Stages
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		d, t, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("stage %d %q: want DURATION:TARGET, e.g. 30s:1000", i+1, part)
		}
		dur, err := time.ParseDuration(d)
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("stage %d %q: duration %q: want a positive duration such as 30s", i+1, part, d)
		}
		target, err := strconv.ParseFloat(t, 64)
		if err != nil || target < 0 || math.IsInf(target, 0) || math.IsNaN(target) {
			return nil, fmt.Errorf("stage %d %q: target %q: want a number >= 0", i+1, part, t)
		}
		out = append(out, Stage{Duration: dur, Target: target})
	}
	return out, nil
}

// String renders the stages in the form ParseStages reads.
func (st Stages) String() string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.Duration.String() + ":" + strconv.FormatFloat(s.Target, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// Duration is the total length of the ramp.
func (st Stages) Duration() time.Duration {
	var d time.Duration
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// Target returns the ramp's value at elapsed, and done once elapsed is past the last stage.
func (st Stages) Target(elapsed time.Duration) (target float64, done bool) {
	from := 0.0
	for _, s := range st {
		if elapsed < s.Duration {
			frac := float64(elapsed) / float64(s.Duration)
			return from + (s.Target-from)*frac, false
		}
		elapsed -= s.Duration
		from = s.Target
	}
	return from, true
}

// expectedStarts is the integral of the rate ramp from 0 to elapsed: how many sessions should
// have started by then.
func (st Stages) expectedStarts(elapsed time.Duration) float64 {
	from, n := 0.0, 0.0
	for _, s := range st {
		secs := s.Duration.Seconds()
		if elapsed < s.Duration {
			t := elapsed.Seconds()
			slope := (s.Target - from) / secs
			return n + from*t + slope*t*t/2
		}
		n += (from + s.Target) / 2 * secs
		elapsed -= s.Duration
		from = s.Target
	}
	return n
}

// Pace implements Pacer for a ramp of session rates: start n (from 0) is due when the rate's
// integral reaches n, so a flat stage paces exactly as ConstantRate.
func (st Stages) Pace(elapsed time.Duration, started uint64) (time.Duration, bool) {
	total := st.Duration()
	want := float64(started)
	if st.expectedStarts(total) <= want {
		return 0, true
	}
	// Binary search the due instant: expectedStarts is non-decreasing in time.
	lo, hi := time.Duration(0), total
	for hi-lo > time.Microsecond {
		mid := lo + (hi-lo)/2
		if st.expectedStarts(mid) >= want {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - elapsed, false
}
