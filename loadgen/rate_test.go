package loadgen

import (
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/measure"
)

// handlerTransport serves requests from an http.Handler in memory: no sockets, so a whole run
// can live inside a synctest bubble where time is virtual.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// legacyPlainMix plays plain-answer through legacy sim-chat clients: one chunk per stream.
func legacyPlainMix(t *testing.T) *Mix {
	t.Helper()
	m, err := NewMix("legacy-plain", 11, map[string]float64{"plain-answer": 1}, []Profile{
		{Dialect: "sim-chat", Weight: 1, Targets: []Target{{Slug: "odd"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpenLoopAchievedRate: an open-loop run starts sessions at the target rate (within 1%),
// with no late or dropped starts when the target keeps up. Virtual time: a 20 s run at 150/s
// takes well under a second.
func TestOpenLoopAchievedRate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		rate     float64
		arrival  string
		duration time.Duration
		tol      float64
	}{
		// Evenly spaced starts: the count is exact but for the last tick.
		{"constant", 150, "constant", 10 * time.Second, 0.01},
		// Poisson arrivals: ±1% at 6,000 expected arrivals is within 1.3 standard deviations;
		// the seed is fixed, so the schedule (and this check) is deterministic.
		{"poisson", 300, "poisson", 20 * time.Second, 0.02},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				run := runLoad(t, Config{
					Clock:  hrtimer.NewPortable(),
					Target: "http://in-memory", Transport: handlerTransport{oddSimChat(t)},
					Mix: legacyPlainMix(t), RunID: "rate", Rate: c.rate, Arrival: c.arrival,
					Duration: c.duration, NoLeakCheck: true, RuntimeMetricsURL: "-",
				})
				cnt := run.Summary.Counters
				want := c.rate * c.duration.Seconds()
				got := float64(cnt.SessionsStarted)
				if math.Abs(got-want)/want > c.tol {
					t.Errorf("started %v sessions in %v at %v/s, want %v ± %.0f%%", got, c.duration, c.rate, want, 100*c.tol)
				}
				if cnt.LateStarts != 0 || cnt.DroppedStarts != 0 {
					t.Errorf("late %d dropped %d, want none", cnt.LateStarts, cnt.DroppedStarts)
				}
				if cnt.SessionsOK != cnt.SessionsStarted || !run.Summary.Verdict.Pass {
					t.Errorf("ok %d of %d, verdict %v", cnt.SessionsOK, cnt.SessionsStarted, run.Summary.Verdict.Reasons)
				}
				// The timeline's per-second starts add up to the total.
				var sum int64
				for _, p := range run.Timeline {
					sum += p.Started
				}
				if sum != cnt.SessionsStarted {
					t.Errorf("timeline starts sum to %d, counters say %d", sum, cnt.SessionsStarted)
				}
			})
		})
	}
}

// TestOpenLoopDropsAtMaxInflight: when streams outlive the schedule and the in-flight cap is
// reached, starts are dropped and counted (never silently delayed), and the verdict says so.
func TestOpenLoopDropsAtMaxInflight(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second) // every stream takes 1 s; 100/s needs 100 in flight
			oddSimChat(t).ServeHTTP(w, r)
		})
		run := runLoad(t, Config{
			Clock:  hrtimer.NewPortable(),
			Target: "http://in-memory", Transport: handlerTransport{slow},
			Mix: legacyPlainMix(t), RunID: "drops", Rate: 100, MaxInflight: 10,
			Duration: 5 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-",
		})
		cnt := run.Summary.Counters
		if cnt.DroppedStarts == 0 || cnt.SessionsStarted+cnt.DroppedStarts != 500 {
			t.Errorf("started %d dropped %d, want drops and 500 scheduled in all", cnt.SessionsStarted, cnt.DroppedStarts)
		}
		if run.Summary.Verdict.Pass {
			t.Errorf("verdict passed a run that dropped %d starts", cnt.DroppedStarts)
		}
	})
}

// TestClosedLoopStagesRamp: with stages, the number of open streams follows the ramp.
func TestClosedLoopStagesRamp(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(500 * time.Millisecond)
			oddSimChat(t).ServeHTTP(w, r)
		})
		var peak int64
		var atHold []int64
		run := runLoad(t, Config{
			Clock:  hrtimer.NewPortable(),
			Target: "http://in-memory", Transport: handlerTransport{slow},
			Mix: legacyPlainMix(t), RunID: "stages",
			Stages:      Stages{{4 * time.Second, 20}, {4 * time.Second, 20}, {2 * time.Second, 0}},
			NoLeakCheck: true, RuntimeMetricsURL: "-",
			Outputs: []Output{ProgressFunc(func(p Progress) {
				peak = max(peak, p.Active)
				if p.Elapsed >= 5*time.Second && p.Elapsed <= 8*time.Second {
					atHold = append(atHold, p.Active)
				}
			})},
		})
		if peak > 20 {
			t.Errorf("peak %d open streams, ramp tops at 20", peak)
		}
		// A sample may fall on the virtual instant at which some users' sessions ended and their
		// next ones have not begun yet (no think time, but the same tick), so one sample may
		// dip; the hold must still reach 20 and never sag below 15.
		if len(atHold) == 0 || slices.Max(atHold) != 20 || slices.Min(atHold) < 15 {
			t.Errorf("during the hold at 20 users, open streams %v: want 20 reached and never under 15", atHold)
		}
		if run.Summary.Counters.SessionsStarted == 0 || !run.Summary.Verdict.Pass {
			t.Errorf("counters %+v verdict %v", run.Summary.Counters, run.Summary.Verdict.Reasons)
		}
	})
}

// TestWarmupExcludedFromHistograms: sessions started during the warmup are checked and counted
// but their latencies are not recorded.
func TestWarmupExcludedFromHistograms(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		run := runLoad(t, Config{
			Clock:  hrtimer.NewPortable(),
			Target: "http://in-memory", Transport: handlerTransport{oddSimChat(t)},
			Mix: legacyPlainMix(t), RunID: "warmup", Rate: 10, Duration: 5 * time.Second,
			Warmup: 2 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-",
		})
		var ttfc int64
		for _, m := range run.Summary.Metrics {
			if m.Metric == "ttfc" {
				ttfc += m.Count
			}
		}
		// 50 starts at 0.0, 0.1, ... 4.9 s; the 20 before 2 s are warmup.
		if got := run.Summary.Counters.SessionsStarted; got != 50 {
			t.Errorf("started %d, want 50", got)
		}
		if ttfc != 30 {
			t.Errorf("ttfc recorded %d times, want 30 (50 sessions minus 20 in the warmup)", ttfc)
		}
	})
}

// TestWarmupKeepsThroughput: with a warm-up, requests/s and tokens/s are the steady state's
// (what completed after the warm-up, over the time after it), within 5% of a run as long as
// the measured part without one. Virtual time: 5 users, sessions of about 0.7 s.
func TestWarmupKeepsThroughput(t *testing.T) {
	t.Parallel()
	play := func(warmup, duration time.Duration) *measure.TokenSummary {
		var tokens *measure.TokenSummary
		synctest.Test(t, func(t *testing.T) {
			slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(700 * time.Millisecond)
				oddSimChat(t).ServeHTTP(w, r)
			})
			run := runLoad(t, Config{
				Clock:  hrtimer.NewPortable(),
				Target: "http://in-memory", Transport: handlerTransport{slow},
				Mix: legacyPlainMix(t), RunID: "warmup-throughput", Clients: 5, Duration: duration,
				Warmup: warmup, NoLeakCheck: true, RuntimeMetricsURL: "-",
			})
			if c := run.Summary.Counters; c.SessionsOK != c.SessionsStarted || c.SessionsOK == 0 {
				t.Errorf("warm-up %v: %d started, %d ok", warmup, c.SessionsStarted, c.SessionsOK)
			}
			tokens = run.Summary.Tokens
		})
		return tokens
	}
	steady, warmed := play(0, 20*time.Second), play(20*time.Second, 40*time.Second)
	for _, f := range []struct {
		name          string
		steady, after float64
	}{
		{"requests/s", steady.RequestsPerSecond, warmed.RequestsPerSecond},
		{"tokens/s", steady.OutputTokensPerSecond, warmed.OutputTokensPerSecond},
		{"goodput/s", steady.Goodput.PerSecond, warmed.Goodput.PerSecond},
	} {
		if f.steady <= 0 || math.Abs(f.after/f.steady-1) > 0.05 {
			t.Errorf("%s: %.2f after a 20 s warm-up, %.2f in 20 s without one: want within 5%%", f.name, f.after, f.steady)
		}
	}
}

// TestStagesEndingAtLoadStop: a ramp that ends at a non-zero target ends the run; the users
// do not go on starting sessions forever.
func TestStagesEndingAtLoadStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Second)
			oddSimChat(t).ServeHTTP(w, r)
		})
		run := runLoad(t, Config{
			Clock:  hrtimer.NewPortable(),
			Target: "http://in-memory", Transport: handlerTransport{slow},
			Mix: legacyPlainMix(t), RunID: "stages-end", Stages: Stages{{3 * time.Second, 5}},
			NoLeakCheck: true, RuntimeMetricsURL: "-",
		})
		// Users come up over 3 s and each runs ~1 s sessions: a handful of sessions, all ok.
		c := run.Summary.Counters
		if c.SessionsStarted == 0 || c.SessionsStarted > 15 || c.SessionsOK != c.SessionsStarted {
			t.Errorf("started %d ok %d, want a few, all ok", c.SessionsStarted, c.SessionsOK)
		}
		if d := run.Summary.Ended.Sub(run.Summary.Started); d > 5*time.Second {
			t.Errorf("run lasted %v after a 3 s ramp", d)
		}
	})
}
