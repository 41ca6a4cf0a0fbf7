// Package sweep is the capacity sweep: its steps, each step's run judged against the SLOs, the
// knee and what broke above it (Analyze), re-judging a saved sweep (Rejudge), and its report,
// drawn with report's kit. Running a step is the caller's: sweep imports no load generator.
package sweep

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// Step is one load level of a capacity sweep: closed-loop virtual users or an open-loop rate.
type Step struct {
	Clients int     `json:"clients,omitempty"`
	Rate    float64 `json:"rate,omitempty"`    // sessions per second
	Profile string  `json:"profile,omitempty"` // a rate sweep's measuring steps' (RunRate)
}

// The measuring steps of a rate sweep (Step.Profile), as GuideLLM names its strategies.
const (
	ProfileSynchronous = "synchronous"
	ProfileThroughput  = "throughput"
)

// Load is the step's size on the sweep's axis.
func (s Step) Load() float64 { return cmp.Or(s.Rate, float64(s.Clients)) }

// String names the step: "250 clients", "50/s" or "throughput (64 clients)".
func (s Step) String() string {
	if s.Profile != "" {
		return s.Profile + " (" + strconv.Itoa(s.Clients) + map[bool]string{true: " client)", false: " clients)"}[s.Clients == 1]
	}
	if s.Rate > 0 {
		return strconv.FormatFloat(s.Rate, 'f', -1, 64) + "/s"
	}
	return strconv.Itoa(s.Clients) + " clients"
}

// ID is the step's short name for run ids: "c250", "r50", "sync" or "throughput".
func (s Step) ID() string {
	switch s.Profile {
	case ProfileSynchronous:
		return "sync"
	case ProfileThroughput:
		return "throughput"
	}
	if s.Rate > 0 {
		return "r" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return "c" + strconv.Itoa(s.Clients)
}

// StepsFrom makes the sweep's steps, sorted, from --clients or --rate values (one list).
func StepsFrom(clients []int, rates []float64) ([]Step, error) {
	if (len(clients) == 0) == (len(rates) == 0) {
		return nil, errors.New("give the steps as either --clients N,N,... or --rate R,R,... (not both)")
	}
	var steps []Step
	for _, c := range clients {
		if c <= 0 {
			return nil, fmt.Errorf("--clients %d: want a positive number of virtual users", c)
		}
		steps = append(steps, Step{Clients: c})
	}
	for _, r := range rates {
		if !(r > 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("--rate %g: want a positive number of sessions per second", r)
		}
		steps = append(steps, Step{Rate: r})
	}
	slices.SortFunc(steps, func(a, b Step) int { return cmp.Compare(a.Load(), b.Load()) })
	for i := 1; i < len(steps); i++ {
		if steps[i].Load() == steps[i-1].Load() {
			return nil, fmt.Errorf("step %s is given twice", steps[i])
		}
	}
	return steps, nil
}

// StepResult is one step's run judged against the SLOs; a figure the run lacks is NaN.
type StepResult struct {
	Step   Step            `json:"step"`
	RunID  string          `json:"run_id"`
	Checks []verdict.Check `json:"checks"` // one per SLO, in SLO order
	// Failures are the other checks the step failed, by name: a step that meets its SLOs
	// while breaking rules or erring is no capacity.
	Failures          []string                       `json:"failures,omitempty"`
	Pass              bool                           `json:"pass"`
	Sessions          int64                          `json:"sessions"`
	TTFCP50           float64                        `json:"ttfc_p50_us"`
	TTFCP99           float64                        `json:"ttfc_p99_us"`
	ErrorRate         float64                        `json:"error_rate"`
	FailedRate        float64                        `json:"failed_rate"`
	TTFTP99           float64                        `json:"ttft_p99_us"`
	TPOTP50           float64                        `json:"tpot_p50_us"`
	TokensPerSecond   float64                        `json:"output_tokens_per_s"`
	GoodputShare      float64                        `json:"goodput_share"`
	RequestsPerSecond float64                        `json:"requests_per_s"`
	TTFTP50           float64                        `json:"ttft_p50_us"`
	TTFTP95           float64                        `json:"ttft_p95_us"`
	ITLP50            float64                        `json:"itl_p50_us"`
	ITLP95            float64                        `json:"itl_p95_us"`
	Latency           map[measure.Metric]Percentiles `json:"latency,omitempty"` // of LatencyMetrics
	GoodputPerSecond  float64                        `json:"goodput_per_s"`
	TokensEstimated   bool                           `json:"tokens_estimated,omitempty"`
}

// Percentiles are a latency metric's p50, p90, p95 and p99 in one step (µs).
type Percentiles struct {
	P50 float64 `json:"p50_us"`
	P90 float64 `json:"p90_us"`
	P95 float64 `json:"p95_us"`
	P99 float64 `json:"p99_us"`
}

// values are p's percentiles in order: p50, p90, p95, p99.
func (p Percentiles) values() [4]float64 { return [4]float64{p.P50, p.P90, p.P95, p.P99} }

// LatencyMetrics are the latency metrics a sweep tabulates per step, in table order.
var LatencyMetrics = []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency,
	measure.TimePerOutputToken, measure.StreamDuration, measure.FirstChunk}

// Result is a whole sweep and what it found.
type Result struct {
	SLOs       []string     `json:"slos"`
	OnOverhead []string     `json:"on_overhead,omitempty"` // SLOs judged on their overhead
	Steps      []StepResult `json:"steps"`
	// Knee is the highest step meeting every SLO, as every lower step does (-1: none).
	Knee int `json:"knee"`
	// BrokenAt is the first failing step (-1: none) and Broken what failed there, furthest
	// over its limit first.
	BrokenAt int      `json:"broken_at"`
	Broken   []string `json:"broken"`
	// PassedAgain lists the steps above BrokenAt that passed again: noise near the knee.
	PassedAgain []int     `json:"passed_again,omitempty"`
	RateSweep   *RateInfo `json:"rate_sweep,omitempty"`
}

// RateInfo is what a rate sweep's measuring steps found, and the rates run between them.
type RateInfo struct {
	SynchronousRate   float64   `json:"synchronous_rate"`
	ThroughputRate    float64   `json:"throughput_rate"`
	ThroughputClients int       `json:"throughput_clients"`
	Rates             []float64 `json:"rates"`
}

// DefaultRateSteps is how many open-loop rates a rate sweep runs (--steps).
const DefaultRateSteps = 5

// RunRate finds where the target saturates, as GuideLLM's sweep profile does: a synchronous
// step (one client) and a throughput step (throughputClients) bound the request rates, then n
// open-loop steps run evenly spaced strictly between; it stops at the first error, or when the
// throughput step is no faster than the synchronous one.
func RunRate(n, throughputClients int, runStep func(Step) (*measure.Run, error), slos []verdict.Threshold) (*Result, error) {
	if n < 1 || throughputClients < 2 {
		return nil, fmt.Errorf("a rate sweep needs at least 1 step and 2 throughput clients, got %d and %d", n, throughputClients)
	}
	info := &RateInfo{ThroughputClients: throughputClients}
	var results []StepResult
	done := func(err error) (*Result, error) {
		slices.SortStableFunc(results, func(a, b StepResult) int { return cmp.Compare(a.rateOrder(), b.rateOrder()) })
		res := Analyze(results, slos)
		res.RateSweep = info
		return res, err
	}
	measureStep := func(st Step) (float64, error) {
		run, err := runStep(st)
		if err != nil {
			return 0, fmt.Errorf("step %s: %w", st, err)
		}
		r := JudgeStep(st, run, slos)
		results = append(results, r)
		if math.IsNaN(r.RequestsPerSecond) || r.RequestsPerSecond <= 0 {
			return 0, fmt.Errorf("step %s completed no request: no rate to sweep from", st)
		}
		return r.RequestsPerSecond, nil
	}
	var err error
	if info.SynchronousRate, err = measureStep(Step{Clients: 1, Profile: ProfileSynchronous}); err != nil {
		return done(err)
	}
	if info.ThroughputRate, err = measureStep(Step{Clients: throughputClients, Profile: ProfileThroughput}); err != nil {
		return done(err)
	}
	lo, hi := info.SynchronousRate, info.ThroughputRate
	if hi <= lo {
		return done(fmt.Errorf("the throughput step (%d clients) completed %.3g requests/s, no more than the synchronous step's %.3g: the target does not serve more at once, so there is no range of rates to sweep", throughputClients, hi, lo))
	}
	var steps []Step
	for i := 1; i <= n; i++ {
		rate := lo + (hi-lo)*float64(i)/float64(n+1)
		rate = math.Round(rate*1000) / 1000 // a step's name and run id show it
		if len(info.Rates) > 0 && rate <= info.Rates[len(info.Rates)-1] {
			continue // the range is too narrow for n distinct rates at this precision
		}
		info.Rates = append(info.Rates, rate)
		steps = append(steps, Step{Rate: rate})
	}
	open, err := Run(steps, runStep, slos)
	results = append(results, open.Steps...)
	return done(err)
}

// load is the step's place on the plot's axis: its load, or a measuring step's request rate.
func (r StepResult) load() float64 {
	if r.Step.Profile != "" {
		return r.RequestsPerSecond
	}
	return r.Step.Load()
}

// rateOrder places a step of a rate sweep by request rate.
func (r StepResult) rateOrder() float64 {
	switch r.Step.Profile {
	case ProfileSynchronous:
		return math.Inf(-1)
	case ProfileThroughput:
		return math.Inf(1)
	}
	return r.Step.Rate
}

// Run runs and judges each step and finds the knee, stopping at the first runStep error.
func Run(steps []Step, runStep func(Step) (*measure.Run, error), slos []verdict.Threshold) (*Result, error) {
	var results []StepResult
	for _, st := range steps {
		run, err := runStep(st)
		if err != nil {
			return Analyze(results, slos), fmt.Errorf("step %s: %w", st, err)
		}
		results = append(results, JudgeStep(st, run, slos))
	}
	return Analyze(results, slos), nil
}

// Rejudge judges the sweep saved in dir again, against slos (none: its own).
func Rejudge(dir string, slos []verdict.Threshold) (*Result, error) {
	data, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	var saved Result
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, JSONFile), err)
	}
	if len(slos) == 0 {
		for _, expr := range saved.SLOs {
			t, err := verdict.ParseThreshold(expr)
			if err != nil {
				return nil, fmt.Errorf("%s: slos: %w", filepath.Join(dir, JSONFile), err)
			}
			slos = append(slos, t)
		}
	}
	var steps []StepResult
	for _, st := range saved.Steps {
		run, err := measure.ReadRun(filepath.Join(dir, st.RunID))
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.Step, err)
		}
		steps = append(steps, JudgeStep(st.Step, run, slos))
	}
	res := Analyze(steps, slos)
	res.RateSweep = saved.RateSweep
	return res, nil
}

// JudgeStep judges one step's run with verdict.Judge, the SLOs as its thresholds.
func JudgeStep(st Step, run *measure.Run, slos []verdict.Threshold) StepResult {
	r := StepResult{Step: st, RunID: run.Summary.RunID, Pass: true, Sessions: run.Summary.Counters.SessionsStarted,
		ErrorRate: run.Summary.Counters.ErrorRate(), TokensPerSecond: math.NaN(), GoodputShare: math.NaN(),
		RequestsPerSecond: math.NaN(), GoodputPerSecond: math.NaN(), Latency: map[measure.Metric]Percentiles{}}
	if n := run.Summary.Counters.SessionsStarted; n > 0 {
		r.FailedRate = float64(run.Summary.Counters.SessionsFailed) / float64(n)
	}
	// Named as the overhead, by which the table and plot tell the two apart.
	judged := make([]verdict.Threshold, len(slos))
	for i, t := range slos {
		judged[i], _ = verdict.OnOverhead(t, run)
	}
	res, err := verdict.Judge(run, verdict.Config{Thresholds: judged})
	if err != nil {
		r.Pass, r.Failures = false, []string{err.Error()}
	} else {
		r.Pass = res.Pass
		for _, c := range res.Checks {
			switch {
			case c.Source == "threshold":
				r.Checks = append(r.Checks, c)
			case !c.Pass:
				r.Failures = append(r.Failures, c.Name)
			}
		}
	}
	value := func(sel string) float64 {
		if x, err := verdict.Value(run, sel); err == nil {
			return x
		}
		return math.NaN()
	}
	r.TTFCP50, r.TTFCP99, r.TTFTP50, r.TTFTP95 = value("ttfc.p50"), value("ttfc.p99"), value("ttft.p50"), value("ttft.p95")
	r.TTFTP99, r.TPOTP50, r.ITLP50, r.ITLP95 = value("ttft.p99"), value("tpot.p50"), value("itl.p50"), value("itl.p95")
	for _, m := range LatencyMetrics {
		at := func(stat string) float64 { return value(string(m) + "." + stat) }
		p := Percentiles{P50: at("p50"), P90: at("p90"), P95: at("p95"), P99: at("p99")}
		if v := p.values(); slices.ContainsFunc(v[:], math.IsNaN) {
			continue
		}
		r.Latency[m] = p
	}
	if t := run.Summary.Tokens; t != nil {
		r.TokensPerSecond, r.RequestsPerSecond = t.OutputTokensPerSecond, t.RequestsPerSecond
		r.GoodputPerSecond, r.TokensEstimated = t.Goodput.PerSecond, t.Estimated
		if t.Goodput.Judged > 0 {
			r.GoodputShare = t.Goodput.Share
		}
	}
	return r
}

// overBy is how far a failed check is over its limit, relatively; without data, first.
func overBy(c verdict.Check, t verdict.Threshold) float64 {
	if math.IsNaN(c.Measured) {
		return math.Inf(1)
	}
	if t.Limit == 0 {
		return math.Abs(c.Measured) * 1e9
	}
	return math.Abs(c.Measured-t.Limit) / t.Limit
}

// Analyze finds the knee, the first failing step and what broke there; without an SLO, no
// knee (the defaults say whether a step ran cleanly, not what load is too much).
func Analyze(steps []StepResult, slos []verdict.Threshold) *Result {
	r := &Result{Steps: steps, Knee: -1, BrokenAt: -1}
	for j, s := range slos {
		r.SLOs = append(r.SLOs, s.Expr)
		if slices.ContainsFunc(steps, func(st StepResult) bool { return j < len(st.Checks) && st.Checks[j].Name != s.Expr }) {
			r.OnOverhead = append(r.OnOverhead, s.Expr)
		}
	}
	for i, st := range steps {
		switch {
		case !st.Pass:
			if r.BrokenAt < 0 {
				r.BrokenAt = i
			}
		case len(slos) == 0:
		case r.BrokenAt < 0:
			r.Knee = i
		default:
			r.PassedAgain = append(r.PassedAgain, i)
		}
	}
	if r.BrokenAt >= 0 {
		type broken struct {
			name string
			over float64
		}
		var bs []broken
		for j, c := range steps[r.BrokenAt].Checks {
			if !c.Pass {
				over := 0.0
				if j < len(slos) {
					over = overBy(c, slos[j])
				}
				bs = append(bs, broken{c.Name, over})
			}
		}
		slices.SortStableFunc(bs, func(a, b broken) int { return cmp.Compare(b.over, a.over) })
		for _, b := range bs {
			r.Broken = append(r.Broken, b.name)
		}
		r.Broken = append(r.Broken, steps[r.BrokenAt].Failures...)
	}
	return r
}

// IsDir reports whether dir holds a sweep rather than one run.
func IsDir(dir string) bool {
	_, errSweep := os.Stat(filepath.Join(dir, JSONFile))
	_, errRun := os.Stat(filepath.Join(dir, measure.SummaryFile))
	return errSweep == nil && errRun != nil
}

// ID is a sweep's id: runID when given, else "sweep-" and the UTC time now.
func ID(runID string, now time.Time) string {
	if runID != "" {
		return runID
	}
	return "sweep-" + now.UTC().Format("20060102-150405")
}
