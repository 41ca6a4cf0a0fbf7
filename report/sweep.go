package report

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// Step is one load level of a capacity sweep: closed-loop virtual users or an open-loop rate.
type Step struct {
	Clients int     `json:"clients,omitempty"`
	Rate    float64 `json:"rate,omitempty"` // sessions per second
	// Profile names the two closed-loop steps of a rate sweep (RateSweep) that measure its
	// range: ProfileSynchronous (one client) and ProfileThroughput; "" for every other step.
	Profile string `json:"profile,omitempty"`
}

// The measuring steps of a rate sweep (Step.Profile), as GuideLLM names its strategies.
const (
	ProfileSynchronous = "synchronous"
	ProfileThroughput  = "throughput"
)

// Load is the step's size on the sweep's axis.
func (s Step) Load() float64 {
	if s.Rate > 0 {
		return s.Rate
	}
	return float64(s.Clients)
}

// String names the step: "250 clients" or "50/s"; a rate sweep's measuring steps
// "synchronous (1 client)" and "throughput (64 clients)".
func (s Step) String() string {
	if s.Profile != "" {
		unit := " clients)"
		if s.Clients == 1 {
			unit = " client)"
		}
		return s.Profile + " (" + strconv.Itoa(s.Clients) + unit
	}
	if s.Rate > 0 {
		return strconv.FormatFloat(s.Rate, 'f', -1, 64) + "/s"
	}
	return strconv.Itoa(s.Clients) + " clients"
}

// ID is the step's short name for run ids and directories: "c250" or "r50"; "sync" and
// "throughput" for a rate sweep's measuring steps.
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

// StepsFrom makes the sweep's steps from --clients or --rate values (exactly one list), sorted
// ascending. Duplicates and non-positive values are errors.
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

// StepResult is one step's run judged against the SLOs.
type StepResult struct {
	Step   Step            `json:"step"`
	RunID  string          `json:"run_id"`
	Checks []verdict.Check `json:"checks"` // one per SLO, in SLO order
	// Failures are the other checks the step failed (verdict.Judge's defaults, the mix's
	// thresholds, the run's integrity), by name: a step that meets its SLOs while breaking
	// rules or erring is no capacity.
	Failures []string `json:"failures,omitempty"`
	Pass     bool     `json:"pass"`
	// Sessions, the merged time to first chunk (µs; NaN without samples), the error and failure
	// rates, for the plot and the table.
	Sessions   int64   `json:"sessions"`
	TTFCP50    float64 `json:"ttfc_p50_us"`
	TTFCP99    float64 `json:"ttfc_p99_us"`
	ErrorRate  float64 `json:"error_rate"`  // HTTP, transport and decode errors / started
	FailedRate float64 `json:"failed_rate"` // failed sessions (errors or violations) / started
	// The token metrics' headline per step (NaN when the run recorded none): merged ttft p99 and
	// tpot p50 (µs), aggregate output tokens/s and the goodput share (load --goodput-slo).
	TTFTP99         float64 `json:"ttft_p99_us"`
	TPOTP50         float64 `json:"tpot_p50_us"`
	TokensPerSecond float64 `json:"output_tokens_per_s"`
	GoodputShare    float64 `json:"goodput_share"`
	// Request throughput (completed sessions/s) and the p50/p95 of ttft and itl (µs), as
	// vllm bench serve and GuideLLM tabulate a sweep; NaN when the run recorded none.
	RequestsPerSecond float64 `json:"requests_per_s"`
	TTFTP50           float64 `json:"ttft_p50_us"`
	TTFTP95           float64 `json:"ttft_p95_us"`
	ITLP50            float64 `json:"itl_p50_us"`
	ITLP95            float64 `json:"itl_p95_us"`
	// Latency is, per latency metric of the sweep table (SweepLatencyMetrics) the run
	// recorded, its p50, p90, p95 and p99 (µs); a metric without samples is absent.
	Latency map[measure.Metric]Percentiles `json:"latency,omitempty"`
	// GoodputPerSecond is the goodput sessions per second of wall time (NaN without tokens);
	// TokensEstimated says the step's token counts were estimated in part (no usage report).
	GoodputPerSecond float64 `json:"goodput_per_s"`
	TokensEstimated  bool    `json:"tokens_estimated,omitempty"`
}

// Percentiles are a latency metric's p50, p90, p95 and p99 in one step (µs).
type Percentiles struct {
	P50 float64 `json:"p50_us"`
	P90 float64 `json:"p90_us"`
	P95 float64 `json:"p95_us"`
	P99 float64 `json:"p99_us"`
}

// SweepLatencyMetrics are the latency metrics a sweep tabulates per step, in table order:
// the token metrics vllm bench serve, GuideLLM and AIPerf report (TTFT, ITL, TPOT, E2E as
// duration), then time to first chunk (the runtime's own first-answer latency).
var SweepLatencyMetrics = []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency,
	measure.TimePerOutputToken, measure.StreamDuration, measure.FirstChunk}

// sweepMetricLabel names a metric in the sweep's latency table and plot.
func sweepMetricLabel(m measure.Metric) string {
	if m == measure.StreamDuration {
		return "e2e (duration)"
	}
	return string(m)
}

// Objectives are a sweep's SLOs. One on ttfc or ttft is judged on its overhead in a step that
// recorded it (its scenarios script when each frame is due; verdict.OnOverhead): what load adds
// to the target's own part, not the thinking time a scenario scripts. ttfc.measured and
// ttft.measured judge the latency as measured.
type Objectives struct {
	SLOs []verdict.Threshold
}

// SweepResult is a whole sweep and what it found.
type SweepResult struct {
	SLOs []string `json:"slos"`
	// OnOverhead lists the SLOs judged on their overhead, in at least one step.
	OnOverhead []string     `json:"on_overhead,omitempty"`
	Steps      []StepResult `json:"steps"`
	// Knee is the index of the highest step meeting every SLO with every lower step meeting
	// them too; -1 when the first step already fails.
	Knee int `json:"knee"`
	// BrokenAt is the index of the first failing step (-1 when every step passes) and Broken the
	// SLOs that failed there, the one furthest over its limit first.
	BrokenAt int      `json:"broken_at"`
	Broken   []string `json:"broken"`
	// PassedAgain lists steps above BrokenAt that met every SLO again: the results are noisy
	// near the knee and the sweep should be repeated or its steps refined.
	PassedAgain []int `json:"passed_again,omitempty"`
	// RateSweep is set for a saturation sweep (sweep --rate sweep; RateSweep): the rates its
	// measuring steps found.
	RateSweep *RateSweepInfo `json:"rate_sweep,omitempty"`
}

// RateSweepInfo is what a saturation sweep measured before its open-loop steps: the request
// throughput (completed requests/s) of its synchronous and throughput steps.
type RateSweepInfo struct {
	SynchronousRate   float64 `json:"synchronous_rate"`
	ThroughputRate    float64 `json:"throughput_rate"`
	ThroughputClients int     `json:"throughput_clients"`
	// Rates are the open-loop steps' rates, evenly spaced strictly between the two.
	Rates []float64 `json:"rates"`
}

// DefaultRateSweepSteps is how many open-loop rates sweep --rate sweep runs between its
// synchronous and throughput steps (--steps).
const DefaultRateSweepSteps = 5

// RateSweep finds where the target saturates, as GuideLLM's sweep profile does: a synchronous
// step (one closed-loop client, one request at a time) measures the request throughput a
// client alone gets, a throughput step (throughputClients closed-loop clients) the most the
// target serves; then n open-loop steps run at rates evenly spaced strictly between the two
// (sync + (throughput − sync)·i/(n+1), i = 1…n). Each step is judged as Sweep judges it; the
// result lists the steps in ascending request rate (synchronous, the rates, throughput). It
// stops at the first runStep error, and when the throughput step is no faster than the
// synchronous one (there is no range to sweep).
func RateSweep(n, throughputClients int, runStep func(Step) (*measure.Run, error), obj Objectives) (*SweepResult, error) {
	if n < 1 || throughputClients < 2 {
		return nil, fmt.Errorf("a rate sweep needs at least 1 step and 2 throughput clients, got %d and %d", n, throughputClients)
	}
	info := &RateSweepInfo{ThroughputClients: throughputClients}
	var results []StepResult
	done := func(err error) (*SweepResult, error) {
		slices.SortStableFunc(results, func(a, b StepResult) int { return cmp.Compare(a.rateOrder(), b.rateOrder()) })
		res := Analyze(results, obj)
		res.RateSweep = info
		return res, err
	}
	measureStep := func(st Step) (float64, error) {
		run, err := runStep(st)
		if err != nil {
			return 0, fmt.Errorf("step %s: %w", st, err)
		}
		r := JudgeStep(st, run, obj)
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
	for i := 1; i <= n; i++ {
		rate := lo + (hi-lo)*float64(i)/float64(n+1)
		rate = math.Round(rate*1000) / 1000 // a step's name and run id show it
		if len(info.Rates) > 0 && rate <= info.Rates[len(info.Rates)-1] {
			continue // the range is too narrow for n distinct rates at this precision
		}
		info.Rates = append(info.Rates, rate)
	}
	for _, rate := range info.Rates {
		st := Step{Rate: rate}
		run, err := runStep(st)
		if err != nil {
			return done(fmt.Errorf("step %s: %w", st, err))
		}
		results = append(results, JudgeStep(st, run, obj))
	}
	return done(nil)
}

// load is the step's place on the sweep plot's axis: its load, or for a rate sweep's
// measuring steps the request rate they reached (NaN when none).
func (r StepResult) load() float64 {
	if r.Step.Profile != "" {
		return r.RequestsPerSecond
	}
	return r.Step.Load()
}

// rateOrder places a step of a rate sweep by request rate: its measured throughput for the
// measuring steps, its rate for the open-loop ones.
func (r StepResult) rateOrder() float64 {
	switch r.Step.Profile {
	case ProfileSynchronous:
		return math.Inf(-1)
	case ProfileThroughput:
		return math.Inf(1)
	}
	return r.Step.Rate
}

// Sweep runs each step with runStep (in ascending load), judges each run (verdict.Judge: the
// defaults and the SLOs, which may be none) and finds the knee. It stops at the first runStep error and returns it with the steps done so far.
func Sweep(steps []Step, runStep func(Step) (*measure.Run, error), obj Objectives) (*SweepResult, error) {
	var results []StepResult
	for _, st := range steps {
		run, err := runStep(st)
		if err != nil {
			res := Analyze(results, obj)
			return res, fmt.Errorf("step %s: %w", st, err)
		}
		results = append(results, JudgeStep(st, run, obj))
	}
	return Analyze(results, obj), nil
}

// Rejudge re-reads the step runs of a sweep written in dir (sweep.json names them; each is in
// dir/RUN-ID) and judges them against slos, without running anything: to try other SLOs on the
// same measurements. It writes nothing; call Write for that.
func Rejudge(dir string, obj Objectives) (*SweepResult, error) {
	data, err := os.ReadFile(filepath.Join(dir, SweepJSONFile))
	if err != nil {
		return nil, fmt.Errorf("read sweep: %w", err)
	}
	var saved SweepResult
	if err := json.Unmarshal(data, &saved); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SweepJSONFile), err)
	}
	if len(obj.SLOs) == 0 {
		for _, expr := range saved.SLOs {
			t, err := verdict.ParseThreshold(expr)
			if err != nil {
				return nil, fmt.Errorf("%s: slos: %w", filepath.Join(dir, SweepJSONFile), err)
			}
			obj.SLOs = append(obj.SLOs, t)
		}
	}
	var steps []StepResult
	for _, st := range saved.Steps {
		run, err := measure.ReadRun(filepath.Join(dir, st.RunID))
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", st.Step, err)
		}
		steps = append(steps, JudgeStep(st.Step, run, obj))
	}
	res := Analyze(steps, obj)
	res.RateSweep = saved.RateSweep
	return res, nil
}

// JudgeStep judges one step's run with verdict.Judge, the SLOs as its thresholds: those on
// ttfc and ttft on their overhead when the run recorded it.
func JudgeStep(st Step, run *measure.Run, obj Objectives) StepResult {
	r := StepResult{Step: st, RunID: run.Summary.RunID, Pass: true, Sessions: run.Summary.Counters.SessionsStarted,
		ErrorRate: run.Summary.Counters.ErrorRate(), TTFCP50: math.NaN(), TTFCP99: math.NaN(),
		TTFTP99: math.NaN(), TPOTP50: math.NaN(), TokensPerSecond: math.NaN(), GoodputShare: math.NaN(),
		RequestsPerSecond: math.NaN(), TTFTP50: math.NaN(), TTFTP95: math.NaN(), ITLP50: math.NaN(), ITLP95: math.NaN(),
		GoodputPerSecond: math.NaN()}
	if n := run.Summary.Counters.SessionsStarted; n > 0 {
		r.FailedRate = float64(run.Summary.Counters.SessionsFailed) / float64(n)
	}
	// Judge would judge them on the overhead too, under their own names; the sweep gives it
	// the overhead's names, by which its table and plot tell the two apart.
	slos := make([]verdict.Threshold, len(obj.SLOs))
	for i, t := range obj.SLOs {
		slos[i], _ = verdict.OnOverhead(t, run)
	}
	res, err := verdict.Judge(run, verdict.Config{Thresholds: slos})
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
	for _, v := range []struct {
		sel string
		dst *float64
	}{{"ttfc.p50", &r.TTFCP50}, {"ttfc.p99", &r.TTFCP99}, {"ttft.p99", &r.TTFTP99}, {"tpot.p50", &r.TPOTP50},
		{"ttft.p50", &r.TTFTP50}, {"ttft.p95", &r.TTFTP95}, {"itl.p50", &r.ITLP50}, {"itl.p95", &r.ITLP95}} {
		if x, err := verdict.Value(run, v.sel); err == nil {
			*v.dst = x
		}
	}
	for _, m := range SweepLatencyMetrics {
		var p Percentiles
		ok := true
		for _, q := range []struct {
			stat string
			dst  *float64
		}{{"p50", &p.P50}, {"p90", &p.P90}, {"p95", &p.P95}, {"p99", &p.P99}} {
			x, err := verdict.Value(run, string(m)+"."+q.stat)
			if err != nil || math.IsNaN(x) {
				ok = false
				break
			}
			*q.dst = x
		}
		if ok {
			if r.Latency == nil {
				r.Latency = map[measure.Metric]Percentiles{}
			}
			r.Latency[m] = p
		}
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

// overBy is how far a failed check is over its limit, relative to the limit, for ranking which
// SLO broke first; a check without data ranks first (it broke outright).
func overBy(c verdict.Check, t verdict.Threshold) float64 {
	if math.IsNaN(c.Measured) {
		return math.Inf(1)
	}
	if t.Limit == 0 {
		return math.Abs(c.Measured) * 1e9
	}
	return math.Abs(c.Measured-t.Limit) / t.Limit
}

// Analyze finds the knee, the first failing step and what broke there. Without an SLO there
// is no knee (the defaults alone say whether a step ran cleanly, not what load is too much):
// only the first failing step and its failures. Pure: it only reads the step results, so it is
// table-tested without any network.
func Analyze(steps []StepResult, obj Objectives) *SweepResult {
	slos := obj.SLOs
	r := &SweepResult{Steps: steps, Knee: -1, BrokenAt: -1}
	for j, s := range slos {
		r.SLOs = append(r.SLOs, s.Expr)
		if slices.ContainsFunc(steps, func(st StepResult) bool { return j < len(st.Checks) && st.Checks[j].Name != s.Expr }) {
			r.OnOverhead = append(r.OnOverhead, s.Expr)
		}
	}
	for i, st := range steps {
		if st.Pass {
			if len(slos) == 0 {
				continue
			}
			if r.BrokenAt < 0 {
				r.Knee = i
			} else {
				r.PassedAgain = append(r.PassedAgain, i)
			}
			continue
		}
		if r.BrokenAt < 0 {
			r.BrokenAt = i
		}
	}
	if r.BrokenAt >= 0 {
		type broken struct {
			name string
			over float64
			idx  int
		}
		var bs []broken
		for j, c := range steps[r.BrokenAt].Checks {
			if !c.Pass {
				over := 0.0
				if j < len(slos) {
					over = overBy(c, slos[j])
				}
				bs = append(bs, broken{c.Name, over, j})
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

// Headline says in one sentence what the sweep found.
func (r *SweepResult) Headline() string {
	h := r.headline()
	if rs := r.RateSweep; rs != nil {
		rates := make([]string, len(rs.Rates))
		for i, x := range rs.Rates {
			rates[i] = strconv.FormatFloat(x, 'f', -1, 64)
		}
		h = fmt.Sprintf("rate sweep: synchronous %.3g requests/s, throughput (%d clients) %.3g requests/s, open-loop rates between: %s/s; %s",
			rs.SynchronousRate, rs.ThroughputClients, rs.ThroughputRate, cmp.Or(strings.Join(rates, ", "), "none"), h)
	}
	return h
}

// headline is Headline without a rate sweep's measured range.
func (r *SweepResult) headline() string {
	var b strings.Builder
	switch {
	case len(r.Steps) == 0:
		return "no step ran"
	case len(r.SLOs) == 0:
		return r.headlineWithoutSLO()
	case r.Knee < 0:
		fmt.Fprintf(&b, "no knee: the lowest step, %s, already misses an SLO", r.Steps[0].Step)
	case r.BrokenAt < 0:
		fmt.Fprintf(&b, "every step met every SLO: the knee is above %s (the highest step tried)", r.Steps[r.Knee].Step)
	default:
		fmt.Fprintf(&b, "knee: %s, the highest load meeting every SLO", r.Steps[r.Knee].Step)
	}
	if r.BrokenAt >= 0 {
		fmt.Fprintf(&b, "; at %s %s broke first", r.Steps[r.BrokenAt].Step, r.Broken[0])
		if len(r.Broken) > 1 {
			fmt.Fprintf(&b, " (also missed there: %s)", strings.Join(r.Broken[1:], ", "))
		}
	}
	if len(r.PassedAgain) > 0 {
		var names []string
		for _, i := range r.PassedAgain {
			names = append(names, r.Steps[i].Step.String())
		}
		fmt.Fprintf(&b, " (warning: %s met every SLO again above that: noisy, repeat the sweep)", strings.Join(names, ", "))
	}
	if len(r.OnOverhead) > 0 {
		fmt.Fprintf(&b, "; %s judged on the overhead (the target's own part, the script's delays taken out; an SLO on ttfc.measured or ttft.measured judges the latency as measured)",
			strings.Join(r.OnOverhead, ", "))
	}
	return b.String()
}

// headlineWithoutSLO is the headline of a sweep given no SLO: where request throughput peaked
// and the first step that failed the run's defaults, if any.
func (r *SweepResult) headlineWithoutSLO() string {
	var b strings.Builder
	b.WriteString("no SLO given, so no knee (--slo adds one)")
	peak := -1
	for i, st := range r.Steps {
		if !math.IsNaN(st.RequestsPerSecond) && (peak < 0 || st.RequestsPerSecond > r.Steps[peak].RequestsPerSecond) {
			peak = i
		}
	}
	if peak >= 0 {
		st := r.Steps[peak]
		fmt.Fprintf(&b, "; peak request throughput %s requests/s at %s", floatOrNA(st.RequestsPerSecond), st.Step)
		if !math.IsNaN(st.TokensPerSecond) {
			fmt.Fprintf(&b, " (%s output tokens/s)", floatOrNA(st.TokensPerSecond))
		}
	}
	if r.BrokenAt >= 0 {
		fmt.Fprintf(&b, "; %s failed first", r.Steps[r.BrokenAt].Step)
		if len(r.Broken) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(r.Broken, ", "))
		}
	}
	return b.String()
}

// table is the sweep's per-step throughput, goodput, errors, SLO checks and verdict.
func (r *SweepResult) table() table {
	t := table{Header: []string{"step", "run", "sessions", "requests/s", "output tokens/s", "goodput", "goodput/s", "errors", "failed"},
		Right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, s := range r.SLOs {
		t.Header = append(t.Header, s+boolText(slices.Contains(r.OnOverhead, s), " (on its overhead)", ""))
		t.Right = append(t.Right, true)
	}
	t.Header = append(t.Header, "verdict")
	for i, st := range r.Steps {
		tokens := floatOrNA(st.TokensPerSecond)
		if st.TokensEstimated {
			tokens += " (estimated)"
		}
		row := []string{st.Step.String(), st.RunID, num(st.Sessions), floatOrNA(st.RequestsPerSecond), tokens,
			pctOrNA(st.GoodputShare), floatOrNA(st.GoodputPerSecond), pct(st.ErrorRate), pct(st.FailedRate)}
		for _, c := range st.Checks {
			row = append(row, c.Value+boolText(c.Pass, "", " ✗"))
		}
		verdict := boolText(st.Pass, "meets SLOs", "misses SLO")
		if len(r.SLOs) == 0 {
			verdict = boolText(st.Pass, "pass", "fail")
		}
		if i == r.Knee {
			verdict += " (knee)"
		}
		t.Rows = append(t.Rows, append(row, verdict))
	}
	return t
}

// latencyTable is each step's latency percentiles, a row per step and metric
// (SweepLatencyMetrics, those the step recorded).
func (r *SweepResult) latencyTable() table {
	t := table{Title: "Latency per step (ms)", Header: []string{"step", "metric", "p50", "p90", "p95", "p99"},
		Right: []bool{false, false, true, true, true, true}}
	for _, st := range r.Steps {
		for _, m := range SweepLatencyMetrics {
			p, ok := st.Latency[m]
			if !ok {
				continue
			}
			t.Rows = append(t.Rows, []string{st.Step.String(), sweepMetricLabel(m), msf(p.P50), msf(p.P90), msf(p.P95), msf(p.P99)})
		}
	}
	return t
}

// floatOrNA shows a rate with one decimal, or n/a for NaN.
func floatOrNA(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// pctOrNA shows a share as a percentage, or n/a for NaN.
func pctOrNA(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return pct(v)
}

func msOrNA(us float64) string {
	if math.IsNaN(us) {
		return "n/a"
	}
	return msf(us)
}

// WriteText prints the sweep table, the latency table and the headline for a terminal.
func (r *SweepResult) WriteText(w io.Writer) error {
	if err := r.table().writeText(w); err != nil {
		return err
	}
	if lt := r.latencyTable(); len(lt.Rows) > 0 {
		fmt.Fprintln(w)
		if err := lt.writeText(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Headline())
	return err
}

// Sweep output file names.
const (
	SweepMarkdownFile = "sweep.md"
	SweepHTMLFile     = "sweep.html"
	SweepJSONFile     = "sweep.json"
	PlotSweep         = "sweep"
	// PlotSweepLatency is TTFT and ITL percentiles against request throughput, a point per
	// step: the chart vllm bench serve and GuideLLM users read a sweep by.
	PlotSweepLatency = "sweep-latency"
)

// WriteMarkdown writes the sweep report as GitHub-flavoured Markdown.
func (r *SweepResult) WriteMarkdown(w io.Writer) {
	fmt.Fprint(w, "# streambench capacity sweep\n\n")
	fmt.Fprintf(w, "**%s.**\n\n", mdCell(capitalize(r.Headline())))
	fmt.Fprintf(w, "SLOs: %s\n\n", mdCell(cmp.Or(strings.Join(r.SLOs, ", "), "none")))
	r.table().writeMarkdown(w, "")
	r.latencyTable().writeMarkdown(w, "##")
	fmt.Fprintf(w, "Plots: [%s.png](%s.png) ([SVG](%s.svg)), latency and failures against load; [%s.png](%s.png) ([SVG](%s.svg)), "+
		"TTFT and ITL percentiles against request throughput. Each step's full report is in its run directory.\n",
		PlotSweep, PlotSweep, PlotSweep, PlotSweepLatency, PlotSweepLatency, PlotSweepLatency)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Write saves sweep.json, sweep.md, sweep.html and the sweep plot (PNG, SVG) in dir.
func (r *SweepResult) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	plots, err := writeFigures(dir, []figure{r.figure(), r.latencyFigure()},
		map[string]string{PlotSweep: "Capacity sweep", PlotSweepLatency: "TTFT and ITL against request throughput"})
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r.jsonSafe(), "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", SweepJSONFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, SweepJSONFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	var md bytes.Buffer
	r.WriteMarkdown(&md)
	if err := os.WriteFile(filepath.Join(dir, SweepMarkdownFile), md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	var html bytes.Buffer
	if err := sweepTemplate.Execute(&html, map[string]any{
		"Headline":    capitalize(r.Headline()),
		"SLOs":        cmp.Or(strings.Join(r.SLOs, ", "), "none"),
		"Table":       htmlTable{r.table()},
		"Latency":     htmlTable{r.latencyTable()},
		"Plot":        template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(plots[0].PNG)),
		"LatencyPlot": template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(plots[1].PNG)),
	}); err != nil {
		return fmt.Errorf("render %s: %w", SweepHTMLFile, err)
	}
	if err := os.WriteFile(filepath.Join(dir, SweepHTMLFile), html.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	return nil
}

// jsonSafe replaces NaN (which JSON cannot carry) with -1 in a copy of r.
func (r *SweepResult) jsonSafe() *SweepResult {
	c := *r
	c.Steps = slices.Clone(r.Steps)
	fix := func(v *float64) {
		if math.IsNaN(*v) {
			*v = -1
		}
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		fix(&s.TTFCP50)
		fix(&s.TTFCP99)
		fix(&s.TTFTP99)
		fix(&s.TPOTP50)
		fix(&s.TokensPerSecond)
		fix(&s.RequestsPerSecond)
		fix(&s.TTFTP50)
		fix(&s.TTFTP95)
		fix(&s.ITLP50)
		fix(&s.ITLP95)
		fix(&s.GoodputShare)
		fix(&s.GoodputPerSecond)
		s.Checks = slices.Clone(s.Checks)
		for j := range s.Checks {
			fix(&s.Checks[j].Measured)
		}
	}
	return &c
}

var sweepTemplate = template.Must(template.New("sweep").Funcs(template.FuncMap{}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>streambench capacity sweep</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; border: 1px solid #eee; }
.headline { font-size: 1.15em; font-weight: bold; }
</style>
</head>
<body>
<h1>streambench capacity sweep</h1>
<p class="headline">{{.Headline}}.</p>
<p>SLOs: {{.SLOs}}</p>
<figure><img src="{{.Plot}}" alt="Time to first chunk and error rate against load"></figure>
{{with .Table}}<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $.Table.IsRight $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{end}}
<h2>{{.Latency.Title}}</h2>
<figure><img src="{{.LatencyPlot}}" alt="TTFT and ITL percentiles against request throughput"></figure>
{{with .Latency}}{{if .Rows}}<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $.Latency.IsRight $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{else}}<p>No latency was recorded.</p>{{end}}{{end}}
</body>
</html>
`))

// figure plots p50/p99 time to first chunk and the error rate against load, with the SLO limits
// on those quantities as horizontal lines and the knee as a vertical line.
func (r *SweepResult) figure() figure {
	loadLabel := "virtual users (closed loop)"
	if len(r.Steps) > 0 && r.Steps[0].Step.Rate > 0 {
		loadLabel = "sessions per second (open loop)"
	}
	if r.RateSweep != nil {
		loadLabel = "sessions per second (synchronous and throughput: measured)"
	}
	xy := func(get func(StepResult) float64) plotter.XYs {
		var pts plotter.XYs
		for _, s := range r.Steps {
			x := s.load()
			if v := get(s); !math.IsNaN(v) && !math.IsNaN(x) {
				pts = append(pts, plotter.XY{X: x, Y: v})
			}
		}
		return pts
	}
	latency := newPlot("Capacity sweep: latency against load")
	latency.X.Label.Text = loadLabel
	latency.Y.Label.Text = "latency (ms)"
	errs := newPlot("Capacity sweep: failures against load")
	errs.X.Label.Text = loadLabel
	errs.Y.Label.Text = "% of sessions started"
	series := 0
	addLine := func(p *plot.Plot, label string, pts plotter.XYs) {
		if len(pts) == 0 {
			return
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return
		}
		lineStyle(l, series)
		series++
		s.Color = l.Color
		s.Shape = draw.CircleGlyph{}
		s.Radius = vg.Points(3)
		p.Add(l, s)
		p.Legend.Add(label, l, s)
	}
	addLine(latency, "ttfc p50 (all scenarios)", xy(func(s StepResult) float64 { return s.TTFCP50 / 1000 }))
	addLine(latency, "ttfc p99 (all scenarios)", xy(func(s StepResult) float64 { return s.TTFCP99 / 1000 }))
	addLine(errs, "errors (HTTP, transport, decode)", xy(func(s StepResult) float64 { return s.ErrorRate * 100 }))
	addLine(errs, "failed sessions (errors or violations)", xy(func(s StepResult) float64 { return s.FailedRate * 100 }))
	if len(r.Steps) == 0 {
		noData(latency, "no step ran")
		noData(errs, "no step ran")
	}
	minX, maxX := 0.0, 1.0
	if len(r.Steps) > 0 {
		minX, maxX = r.Steps[0].load(), r.Steps[len(r.Steps)-1].load()
	}
	hline := func(p *plot.Plot, label string, y float64) {
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: y}, {X: maxX, Y: y}})
		if err != nil {
			return
		}
		l.Color = color.Black
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("SLO "+label, l)
	}
	// Each SLO's limit, and for a latency SLO that is not one of the lines above (scoped, or
	// another metric or statistic) its own measured value, so every limit has its line.
	for j, expr := range r.SLOs {
		t, err := verdict.ParseThreshold(expr)
		if err != nil {
			continue
		}
		switch {
		case t.Selector.IsLatency():
			// An SLO judged on its overhead gets its own line too: the limit is the
			// overhead's, not the measured ttfc's drawn above.
			sel, onOverhead := t.Selector.String(), slices.Contains(r.OnOverhead, expr)
			if onOverhead || (sel != "ttfc.p50" && sel != "ttfc.p99") {
				label := sel
				if onOverhead {
					label = strings.Replace(sel, t.Selector.Name, t.Selector.Name+".overhead", 1) + " (judged)"
				}
				addLine(latency, label, xy(func(s StepResult) float64 {
					if j < len(s.Checks) {
						return s.Checks[j].Measured / 1000
					}
					return math.NaN()
				}))
			}
			hline(latency, expr+boolText(onOverhead, " (on its overhead)", ""), t.Limit/1000)
		case t.Selector.CountsSessions():
			if t.Percent {
				hline(errs, expr, t.Limit*100)
			}
		}
	}
	if r.Knee >= 0 {
		x := r.Steps[r.Knee].load()
		for _, p := range []*plot.Plot{latency, errs} {
			p.Add(kneeMarker{x: x, label: "knee: " + r.Steps[r.Knee].Step.String()})
		}
	}
	for _, p := range []*plot.Plot{latency, errs} {
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max*1.25, 0.1) // headroom for the legend above the lines
		p.X.Tick.Marker = plot.TickerFunc(countTicks)
		p.Y.Tick.Marker = plot.TickerFunc(plainTicks)
	}
	rows := [][]*plot.Plot{{latency}, {errs}}
	return figure{name: PlotSweep, width: figureWidth, height: 9 * vg.Inch, draw: func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
			PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(16)}
		canvases := plot.Align(rows, tiles, c)
		for i := range rows {
			rows[i][0].Draw(canvases[i][0])
		}
	}}
}

// kneeMarker is a plotter: the compiler checks it stays one.
var (
	_ plot.Plotter    = kneeMarker{}
	_ plot.DataRanger = kneeMarker{}
)

// kneeMarker draws a vertical line across the data area at x, labelled.
type kneeMarker struct {
	x     float64
	label string
}

// Plot implements plot.Plotter.
func (k kneeMarker) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(k.x)
	c.StrokeLine2(draw.LineStyle{Color: color.RGBA{G: 110, B: 40, A: 255}, Width: vg.Points(2),
		Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
	sty := draw.TextStyle{Color: color.RGBA{G: 110, B: 40, A: 255}, Font: p.Legend.TextStyle.Font,
		Handler: p.Legend.TextStyle.Handler, XAlign: draw.XLeft, YAlign: draw.YTop}
	// Mid-height: the legend owns the top-left corner and the curves hug the bottom below the knee.
	c.FillText(sty, vg.Point{X: x + vg.Points(4), Y: (c.Min.Y + c.Max.Y) / 2}, k.label)
}

// DataRange implements plot.DataRanger so the knee is always inside the axis.
func (k kneeMarker) DataRange() (xmin, xmax, ymin, ymax float64) {
	return k.x, k.x, math.Inf(1), math.Inf(-1)
}

// IsSweepDir reports whether dir holds a sweep (sweep.json without a run's summary) rather
// than one run.
func IsSweepDir(dir string) bool {
	_, errSweep := os.Stat(filepath.Join(dir, SweepJSONFile))
	_, errRun := os.Stat(filepath.Join(dir, measure.SummaryFile))
	return errSweep == nil && errRun != nil
}

// latencyFigure plots TTFT (top) and ITL (bottom) at p50, p90, p95 and p99 against request
// throughput, a point per step joined in step order (a saturated server's throughput may fall
// back while its latency climbs: the line then turns left), each p50 point labelled with its step.
func (r *SweepResult) latencyFigure() figure {
	var panels []*plot.Plot
	for _, m := range []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency} {
		p := newPlot(fmt.Sprintf("%s percentiles against request throughput", strings.ToUpper(string(m))))
		p.X.Label.Text = "request throughput (completed requests per second)"
		p.Y.Label.Text = string(m) + " (ms)"
		stats := []struct {
			name string
			get  func(Percentiles) float64
		}{{"p50", func(q Percentiles) float64 { return q.P50 }}, {"p90", func(q Percentiles) float64 { return q.P90 }},
			{"p95", func(q Percentiles) float64 { return q.P95 }}, {"p99", func(q Percentiles) float64 { return q.P99 }}}
		drawn := false
		for i, stat := range stats {
			var pts plotter.XYs
			var labels []string
			for _, st := range r.Steps {
				q, ok := st.Latency[m]
				if !ok || math.IsNaN(st.RequestsPerSecond) {
					continue
				}
				pts = append(pts, plotter.XY{X: st.RequestsPerSecond, Y: stat.get(q) / 1000})
				labels = append(labels, st.Step.String())
			}
			if len(pts) == 0 {
				continue
			}
			l, s, err := plotter.NewLinePoints(pts)
			if err != nil {
				continue
			}
			lineStyle(l, i)
			s.Color, s.Shape, s.Radius = l.Color, draw.CircleGlyph{}, vg.Points(3)
			p.Add(l, s)
			p.Legend.Add(string(m)+" "+stat.name, l, s)
			if i == 0 {
				if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels}); err == nil {
					for j := range lb.TextStyle {
						lb.TextStyle[j].Font.Size = vg.Points(8)
						lb.TextStyle[j].YAlign = draw.YTop
					}
					lb.Offset = vg.Point{X: vg.Points(4), Y: -vg.Points(4)}
					p.Add(lb)
				}
			}
			drawn = true
		}
		if !drawn {
			noData(p, "no step recorded "+string(m)+" and request throughput")
		} else {
			p.X.Min, p.Y.Min = 0, 0
			p.Y.Max = math.Max(p.Y.Max*1.25, 0.1) // headroom for the legend above the lines
			p.X.Max = math.Max(p.X.Max*1.1, 0.1)  // room for the step labels
			p.X.Tick.Marker = plot.TickerFunc(plainTicks)
			p.Y.Tick.Marker = plot.TickerFunc(plainTicks)
		}
		panels = append(panels, p)
	}
	rows := [][]*plot.Plot{{panels[0]}, {panels[1]}}
	return figure{name: PlotSweepLatency, width: figureWidth, height: 9 * vg.Inch, draw: func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
			PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(16)}
		canvases := plot.Align(rows, tiles, c)
		for i := range rows {
			rows[i][0].Draw(canvases[i][0])
		}
	}}
}
