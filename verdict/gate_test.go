package verdict_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
)

func TestParseThresholdErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want string // part of the message
	}{
		{"ttfc.p99", "no comparison"},                               // no operator at all
		{"ttfc.p99=300ms", "single '=' is for --max-regression"},    // regression syntax used as threshold
		{"latency.p99<300ms", `unknown name "latency"`},             // unknown metric
		{"ttfc<300ms", "needs a statistic"},                         // latency without a statistic
		{"ttfc.p98<300ms", `unknown statistic "p98"`},               // unsupported percentile
		{"ttfc.p99<300", "want a duration"},                         // missing unit
		{"ttfc.p99<", "missing limit"},                              // empty limit
		{"errors<0.1", "want a percentage such as 0.1% or a count"}, // fraction without %
		{"errors<150%", "between 0% and 100%"},                      // impossible percentage
		{"errors.p99<1%", "takes no statistic"},                     // statistic on a count
		{"violations==-1", "want a count"},                          // negative count
		{"ttfc{scenario=a.p99<1s", "not closed"},                    // unclosed scope
		{"ttfc{tenant=a}.p99<1s", `scope key "tenant"`},             // unknown scope key
		{"ttfc{scenario}.p99<1s", "want key=value"},                 // scope without value
		{"leaks{rule=x}==0", "takes no scope"},                      // scope on an unscoped count
		{"ttfc{scenario=a,scenario=b}.p99<1s", "given twice"},       // duplicated scope key
		{"tpot<10ms", "needs a statistic"},                          // a token latency is a histogram too
		{"stream_tokens_per_s<20", "needs a statistic"},             // so is the per-stream rate
		{"stream_tokens_per_s.p50>20ms", "want tokens per second"},  // a rate limit is a number
		{"tokens_per_s.p50>1", "takes no statistic"},                // the aggregate rate is one figure
		{"goodput>=150%", "between 0% and 100%"},                    // impossible share
		{"errors<NaN%", "between 0% and 100%"},                      // not a number
		{"goodput>=NaN%", "between 0% and 100%"},                    // not a number
		{"tokens_per_s>=NaN", "want tokens per second"},             // not a number
		{"tokens_per_s>=Inf", "want tokens per second"},             // no rate is over it
		{"stream_tokens_per_s.p50>=NaN", "want tokens per second"},  // not a number
		{"child_ttfd.p99<Inf", "want a duration"},                   // a measure's limit neither
	} {
		_, err := verdict.ParseThreshold(tc.expr)
		var te *verdict.ThresholdError
		if !errors.As(err, &te) {
			t.Errorf("ParseThreshold(%q) = %v, want a *ThresholdError", tc.expr, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.expr) {
			t.Errorf("ParseThreshold(%q) error %q: want it to quote the threshold and contain %q", tc.expr, err, tc.want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr      string
		selector  string
		op        string
		limit     float64
		isPercent bool
	}{
		{"ttfc.p99<300ms", "ttfc.p99", "<", 300_000, false},                                                                                    // latency in µs
		{"gap.p99<=50ms", "chunk_gap.p99", "<=", 50_000, false},                                                                                // alias
		{"chunk_gap.p999<=1s", "chunk_gap.p99.9", "<=", 1e6, false},                                                                            // p999 spelling
		{"errors<0.1%", "errors", "<", 0.001, true},                                                                                            // error rate
		{"errors==0", "errors", "==", 0, false},                                                                                                // error count
		{"violations==0", "violations", "==", 0, false},                                                                                        // count
		{"failed<0.5%", "failed", "<", 0.005, true},                                                                                            // failed-session rate
		{"violations{rule=R-converge}==0", "violations{rule=R-converge}", "==", 0, false},                                                      // scoped count
		{"ttft.p99<500ms", "ttft.p99", "<", 500_000, false},                                                                                    // token latency in µs
		{"ttft.overhead.p99<50ms", "ttft.overhead.p99", "<", 50_000, false},                                                                    // the target's own ttft: a dotted name
		{"ttfc.overhead{scenario=plain-answer}.p50<=5ms", "ttfc.overhead{scenario=plain-answer}.p50", "<=", 5_000, false},                      // dotted name, scoped
		{"stream_tokens_per_s.p50>=20", "stream_tokens_per_s.p50", ">=", 20_000, false},                                                        // rate, kept ×RateScale like its histogram
		{"tokens_per_s>=1000", "tokens_per_s", ">=", 1000, false},                                                                              // aggregate tokens/s
		{"goodput>=99%", "goodput", ">=", 0.99, true},                                                                                          // goodput share
		{"ttfc{dialect=sim-chat, scenario=plain-answer}.p99 < 300ms", "ttfc{dialect=sim-chat,scenario=plain-answer}.p99", "<", 300_000, false}, // spaces, scope
	} {
		th, err := verdict.ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tc.expr, err)
			continue
		}
		if th.Selector.String() != tc.selector || th.Op != tc.op || math.Abs(th.Limit-tc.limit) > 1e-9 || th.Percent != tc.isPercent {
			t.Errorf("ParseThreshold(%q) = %s %s %v (percent %v), want %s %s %v (%v)", tc.expr,
				th.Selector, th.Op, th.Limit, th.Percent, tc.selector, tc.op, tc.limit, tc.isPercent)
		}
	}
}

func TestParseRegression(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr    string
		wantErr string
	}{
		{"ttfc.p99=10%", ""},                        // percentage allowance
		{"ttfc{scenario=a}.p50=25ms", ""},           // absolute allowance
		{"ttfc.p99<10%", "want NAME.STAT=PERCENT"},  // threshold syntax
		{"errors=10%", "only latency"},              // counts do not regress here
		{"ttfc.p99=ten", "allowance \"ten\""},       // not a number
		{"ttfc.p99==10%", "want NAME.STAT=PERCENT"}, // double equals
		{"ttfc.p99=NaN%", "allowance \"NaN%\""},     // not a number
		{"ttfc.p99=+Inf%", "allowance \"+Inf%\""},   // no limit at all
	} {
		_, err := verdict.ParseRegression(tc.expr)
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("ParseRegression(%q) = %v, want error containing %q", tc.expr, err, tc.wantErr)
		}
	}
}

// mustParse parses every expression with parse, failing the test on the first error.
func mustParse[T any](t *testing.T, parse func(string) (T, error), exprs ...string) []T {
	t.Helper()
	var out []T
	for _, e := range exprs {
		v, err := parse(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func mustThresholds(t *testing.T, exprs ...string) []verdict.Threshold {
	t.Helper()
	return mustParse(t, verdict.ParseThreshold, exprs...)
}

func mustRegressions(t *testing.T, exprs ...string) []verdict.Regression {
	t.Helper()
	return mustParse(t, verdict.ParseRegression, exprs...)
}

func TestGate(t *testing.T) {
	t.Parallel()
	base := fixture.Run(t, fixture.Options{Seed: 3})
	slow := fixture.Run(t, fixture.Options{Seed: 3, TTFCShift: 200 * time.Millisecond})
	broken := fixture.Run(t, fixture.Options{Seed: 3, Violations: map[protocol.Rule]int64{protocol.RTerminal: 2}})
	leaky := fixture.Run(t, fixture.Options{Seed: 3, Leak: true})
	erring := fixture.Run(t, fixture.Options{Seed: 3, HTTPErrors: 40})
	// The runtime read at the baseline and not after the load: it died or restarted.
	lost := fixture.Run(t, fixture.Options{Seed: 3})
	lost.Summary.LeaksNotChecked = []measure.LeakNotChecked{{Source: "runtime", Lost: true, Reason: "read before the load, unreadable after it: connection refused"}}
	// A runtime with no /metrics at all is not judged.
	unread := fixture.Run(t, fixture.Options{Seed: 3})
	unread.Summary.LeaksNotChecked = []measure.LeakNotChecked{{Source: "runtime", Reason: "connection refused"}}
	for _, tc := range []struct {
		name       string
		run        *measure.Run
		thresholds []string
		regress    []string
		wantFailed []string // names of the failing checks, in order
	}{
		// a run passes against itself, thresholds and regressions together
		{"self", base, []string{"ttfc.p99<500ms", "violations==0", "leaks==0"}, []string{"ttfc.p99=10%", "gap.p99=10%"}, nil},
		// 200 ms slower time to first chunk fails the regression check, and only it
		{"slower", slow, []string{"violations==0"}, []string{"ttfc.p99=10%", "gap.p99=10%"}, []string{"ttfc.p99=10%"}},
		// an absolute allowance below the shift fails too
		{"slower absolute", slow, nil, []string{"ttfc.p50=150ms"}, []string{"ttfc.p50=150ms"}},
		// violations fail violations==0 (given, it replaces the default)
		{"violations", broken, []string{"violations==0", "violations{rule=R-converge}==0"}, nil, []string{"violations==0"}},
		// a leak fails leaks==0
		{"leak", leaky, []string{"leaks==0"}, nil, []string{"leaks==0"}},
		// so does a process lost between baseline and verify, by default too; not one never read
		{"lost", lost, []string{"leaks==0"}, nil, []string{"leaks==0"}},
		{"lost by default", lost, []string{"ttfc.p99<1s"}, nil, []string{"leaks==0"}},
		{"never read", unread, []string{"leaks==0"}, nil, nil},
		// 40 errors in 2000 sessions is 2%: fails errors<0.1% (given, it replaces errors==0)
		{"errors", erring, []string{"errors<0.1%"}, nil, []string{"errors<0.1%"}},
		// failed counts every failed session: 40 of 2000 is 2%; naming it relaxes errors==0
		{"failed", erring, []string{"failed<1%", "failed<=40"}, nil, []string{"failed<1%"}},
		// without a threshold naming them, the 40 errors fail the default errors==0
		{"errors by default", erring, []string{"ttfc.p99<1s"}, nil, []string{"errors==0"}},
		// a scoped threshold sees only its scenario: tool-loop's p99 is ~300 ms as measured, plain-answer's lower
		{"scoped", base, []string{"ttfc.measured{scenario=plain-answer}.p99<250ms", "ttfc.measured{scenario=tool-loop,dialect=sim-chat}.p99<250ms"}, nil,
			[]string{"ttfc.measured{scenario=tool-loop,dialect=sim-chat}.p99<250ms"}},
		// on ttfc, the same limits judge the overhead (the script's 300 ms taken out): both pass
		{"scoped on overhead", base, []string{"ttfc{scenario=plain-answer}.p99<250ms", "ttfc{scenario=tool-loop,dialect=sim-chat}.p99<250ms"}, nil, nil},
		// a threshold on a metric never recorded fails rather than passing blind
		{"no data", base, []string{"stop.p99<1s"}, nil, []string{"stop.p99<1s"}},
		// token metrics within their limits: ttft p99 ~134 ms, tpot p50 ~8 ms, itl p99 ~24 ms,
		// 118 tokens/s per stream at p50, 2,400 tokens/s in all, goodput 98%
		{"tokens", base, []string{"ttft.p99<200ms", "ttfo.p50<100ms", "tpot.p50<10ms", "itl.p99<40ms", "stream_tokens_per_s.p50>=100",
			"tokens_per_s>=2000", "goodput>=97%", "goodput>=1600"}, nil, nil},
		// and each one beyond them
		{"tokens failing", base, []string{"ttfo.p99<100ms", "stream_tokens_per_s.p50>=150", "tokens_per_s>=3000", "goodput>99%"}, nil,
			[]string{"ttfo.p99<100ms", "stream_tokens_per_s.p50>=150", "tokens_per_s>=3000", "goodput>99%"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := mustJudge(t, tc.run, verdict.Config{
				Thresholds: mustThresholds(t, tc.thresholds...), Regressions: mustRegressions(t, tc.regress...), Baseline: base})
			var out bytes.Buffer
			if err := report.WriteGateTable(&out, res); err != nil {
				t.Fatal(err)
			}
			got := res.Failed()
			if strings.Join(got, "|") != strings.Join(tc.wantFailed, "|") || res.Pass != (len(tc.wantFailed) == 0) {
				t.Errorf("failed checks %q (pass %v), want %q\n%s", got, res.Pass, tc.wantFailed, out.String())
			}
			for _, name := range tc.wantFailed {
				if !strings.Contains(out.String(), name) {
					t.Errorf("table does not name the failing check %s:\n%s", name, out.String())
				}
			}
		})
	}
}

// TestOverheadThreshold: a threshold on ttft.overhead judges the overhead histogram, not ttft:
// a run whose ttft is far over 50 ms but whose overhead is 20 ms passes ttft.overhead.p99<50ms
// and fails ttft.overhead.p99<10ms.
func TestOverheadThreshold(t *testing.T) {
	t.Parallel()
	run := fixture.Run(t, fixture.Options{Seed: 3})
	k := measure.Key{Metric: measure.FirstTokenOverhead, Scenario: "plain-answer", Dialect: "sim-chat"}
	for range 100 {
		if err := run.Histograms.Record(k, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	res := mustJudge(t, run, verdict.Config{Thresholds: mustThresholds(t, "ttft.overhead.p99<50ms", "ttft.overhead.p99<10ms", "ttft.measured.p99>50ms")})
	if got := strings.Join(res.Failed(), "|"); got != "ttft.overhead.p99<10ms" {
		t.Errorf("failed checks %q, want only ttft.overhead.p99<10ms", got)
	}
	if _, err := verdict.ParseThreshold("ttft.overheads.p99<50ms"); err == nil {
		t.Error("ttft.overheads.p99<50ms parsed: a misspelt dotted name must be refused")
	}
}

// TestThresholdsJudgedOnOverhead: a threshold on ttfc judges the target's own part when the run
// recorded it, saying so and giving the latency as measured; ttfc.measured judges the latency
// as measured; a run without the overhead (a target with no script) is judged as measured.
func TestThresholdsJudgedOnOverhead(t *testing.T) {
	t.Parallel()
	run := fixture.Run(t, fixture.Options{Seed: 5})
	res := mustJudge(t, run, verdict.Config{Thresholds: mustThresholds(t, "ttfc.p99<150ms", "ttfc.measured.p99<150ms")})
	if got := strings.Join(res.Failed(), "|"); got != "ttfc.measured.p99<150ms" {
		t.Errorf("failed checks %q, want only ttfc.measured.p99<150ms (the fixture's ttfc p99 is ~300 ms, its overhead far less)", got)
	}
	c := findCheck(res, "ttfc.p99<150ms")
	if !strings.Contains(c.Detail, "judged on ttfc.overhead.p99") || !strings.Contains(c.Detail, "as measured") {
		t.Errorf("the check does not say it judged the overhead and what was measured: %q", c.Detail)
	}

	// Without the overhead recorded, ttfc is judged as measured: it fails.
	bare := fixture.Run(t, fixture.Options{Seed: 5})
	kept := measure.NewHistograms()
	for _, k := range bare.Histograms.Keys() {
		if k.Metric != measure.FirstChunkOverhead {
			kept.Set(k, bare.Histograms.Get(k))
		}
	}
	bare.Histograms = kept
	res = mustJudge(t, bare, verdict.Config{Thresholds: mustThresholds(t, "ttfc.p99<150ms")})
	if got := strings.Join(res.Failed(), "|"); got != "ttfc.p99<150ms" {
		t.Errorf("without an overhead recorded: failed checks %q, want ttfc.p99<150ms", got)
	}
}

// TestJudgeDefaults: the defaults apply whatever else is checked (a mix threshold, a flag),
// and only a threshold naming a default's measure relaxes it; the run's integrity is always
// judged. Each row fails or passes one way.
func TestJudgeDefaults(t *testing.T) {
	t.Parallel()
	run := func(mod func(r *measure.Run)) *measure.Run {
		r := fixture.Run(t, fixture.Options{Seed: 4})
		mod(r)
		return r
	}
	violating := func(r *measure.Run) { r.Summary.Violations = map[protocol.Rule]int64{protocol.RConverge: 13} }
	inBand := func(r *measure.Run) {
		r.Summary.Counters.Outcomes[measure.OutcomeCompleted] -= 5
		r.Summary.Counters.Outcomes[measure.OutcomeInBandError] = 5
	}
	for _, tc := range []struct {
		name       string
		run        *measure.Run
		mix, flags []string
		wantFailed []string
	}{
		// a clean run passes the defaults alone
		{"clean", run(func(*measure.Run) {}), nil, nil, nil},
		// the false PASS: a mix threshold on errors replaced violations==0
		{"violations under a mix errors threshold", run(violating), []string{"errors<0.1%"}, nil, []string{"violations==0"}},
		// and an unrelated flag does not replace it either
		{"violations under a latency flag", run(violating), nil, []string{"ttfc.p99<1s"}, []string{"violations==0"}},
		// naming the rule relaxes that rule alone
		{"rule relaxed by name", run(violating), nil, []string{"violations{rule=R-converge}<20"}, nil},
		{"other rule still counted", run(func(r *measure.Run) {
			violating(r)
			r.Summary.Violations[protocol.RAbort] = 1
		}), nil, []string{"violations{rule=R-converge}<20"}, []string{"violations==0"}},
		// in-band errors are errors: errors==0 fails
		{"in-band errors", run(inBand), nil, nil, []string{"errors==0"}},
		// the outcome named takes it out of errors, judged by its own limit
		{"outcome relaxed by name", run(inBand), nil, []string{"outcome.in_band_error<1%"}, nil},
		{"outcome over its limit", run(inBand), nil, []string{"outcome.in_band_error<=4"}, []string{"outcome.in_band_error<=4"}},
		// a relaxed errors threshold from the mix
		{"errors relaxed in the mix", run(inBand), []string{"errors<1%"}, nil, nil},
		// integrity: interrupted, outcomes not adding up, nothing started
		{"interrupted", run(func(r *measure.Run) { r.Summary.Interrupted = true }), nil, nil, []string{"ran to its planned end"}},
		{"outcomes missing", run(func(r *measure.Run) { r.Summary.Counters.SessionsStarted++ }), nil, nil, []string{"every session ended"}},
		{"nothing started", run(func(r *measure.Run) { r.Summary.Counters = measure.Counters{} }), nil, nil, []string{"a session started"}},
		{"post-run failure", run(func(r *measure.Run) { r.Summary.Judging.PostRun = []string{"cancel latency: mock unreachable"} }), nil, nil, []string{"post-run checks passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run.Summary.Config.Thresholds = tc.mix
			res := mustJudge(t, tc.run, verdict.Config{Thresholds: mustThresholds(t, tc.flags...)})
			if got := res.Failed(); strings.Join(got, "|") != strings.Join(tc.wantFailed, "|") || res.Pass != (len(tc.wantFailed) == 0) {
				var out bytes.Buffer
				_ = report.WriteGateTable(&out, res)
				t.Errorf("failed %q (pass %v), want %q\n%s", got, res.Pass, tc.wantFailed, out.String())
			}
			// Stamp (what load, run and merge save) agrees with the gate without flags.
			if len(tc.flags) == 0 {
				if err := verdict.Stamp(tc.run); err != nil {
					t.Fatal(err)
				}
				if tc.run.Summary.Verdict.Pass != res.Pass {
					t.Errorf("Stamp says pass %v, Judge %v", tc.run.Summary.Verdict.Pass, res.Pass)
				}
			}
		})
	}
}

func TestJudgeBadInput(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 4})
	r.Summary.Config.Thresholds = []string{"ttfc.p99<fast"}
	if _, err := verdict.Judge(r, verdict.Config{}); err == nil || !strings.Contains(err.Error(), "config.thresholds[0]") {
		t.Errorf("a bad mix threshold: %v, want an error naming config.thresholds[0]", err)
	}
	r.Summary.Config.Thresholds = []string{"violations{rule=R-convergence}==0"}
	rules := dialects.Default().Rules()
	if _, err := verdict.Judge(r, verdict.Config{Rules: rules}); err == nil || !strings.Contains(err.Error(), `unknown rule "R-convergence"`) {
		t.Errorf("a mix threshold on a rule that does not exist: %v, want an error naming it", err)
	}
	r.Summary.Config.Thresholds = nil
	if _, err := verdict.Judge(r, verdict.Config{Regressions: mustRegressions(t, "ttfc.p99=5%")}); err == nil {
		t.Error("regressions without a baseline must be an error")
	}
	if _, err := verdict.ParseThreshold("hung==0"); err == nil || !strings.Contains(err.Error(), "outcome.stalled") {
		t.Errorf("hung==0: %v, want an error pointing at the outcomes", err)
	}
	if _, err := verdict.ParseThreshold("outcome.hung<1%"); err == nil || !strings.Contains(err.Error(), "in_band_error") {
		t.Errorf("outcome.hung: %v, want an error listing the outcomes", err)
	}
}

func TestGateJUnit(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 5, Violations: map[protocol.Rule]int64{protocol.RAbort: 1}})
	res := mustJudge(t, r, verdict.Config{Thresholds: mustThresholds(t, "violations==0", "leaks==0")})
	var buf bytes.Buffer
	if err := report.WriteGateJUnit(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, buf.String())
	}
	s := doc.Suites[0]
	// every check a case; only violations==0 fails
	failing := slices.IndexFunc(s.Cases, func(c struct {
		Name    string    `xml:"name,attr"`
		Failure *struct{} `xml:"failure"`
	}) bool {
		return c.Failure != nil
	})
	if s.Tests != len(res.Checks) || s.Failures != 1 || failing < 0 || s.Cases[failing].Name != "violations==0" {
		t.Errorf("JUnit suite = %+v\n%s", s, buf.String())
	}
}

// TestGateAllow: an allowed rule's violations leave violations==0 passing and appear as a
// check of their own with the verdict "allowed"; other rules still fail; the mix's allow list
// works like --allow.
func TestGateAllow(t *testing.T) {
	t.Parallel()
	abort := map[protocol.Rule]int64{protocol.RAbort: 12}
	both := map[protocol.Rule]int64{protocol.RAbort: 12, protocol.RTerminal: 1}
	fromMix := fixture.Run(t, fixture.Options{Seed: 8, Violations: abort})
	fromMix.Summary.Config.Allow = []protocol.Rule{protocol.RAbort}
	for _, tc := range []struct {
		name       string
		run        *measure.Run
		allow      []protocol.Rule
		wantFailed []string
		wantText   string // in the table
	}{
		// without --allow, R-abort fails violations==0, and the check quotes its first sample
		{"not allowed", fixture.Run(t, fixture.Options{Seed: 8, Violations: abort}), nil, []string{"violations==0"}, "FAIL"},
		{"first sample", fixture.Run(t, fixture.Options{Seed: 8, Violations: abort}), nil, []string{"violations==0"},
			"R-abort×12; first: R-abort (tool-loop, sim-chat): final text differs at byte 5"},
		// with R-abort allowed, the other rule's sample is quoted and R-abort's is not
		{"first sample not allowed", fixture.Run(t, fixture.Options{Seed: 8, Violations: both}), []protocol.Rule{protocol.RAbort}, []string{"violations==0"},
			"R-terminal×1; first: R-terminal (tool-loop, sim-chat): final"},
		// allowed: the gate passes and shows the count as allowed
		{"allowed", fixture.Run(t, fixture.Options{Seed: 8, Violations: abort}), []protocol.Rule{protocol.RAbort}, nil, "allowed: R-abort×12"},
		// another rule still fails while R-abort is allowed
		{"other rule", fixture.Run(t, fixture.Options{Seed: 8, Violations: both}), []protocol.Rule{protocol.RAbort}, []string{"violations==0"}, "allow R-abort"},
		// the mix's allow list, recorded in the run, allows as --allow does
		{"mix", fromMix, nil, nil, "allowed: R-abort×12"},
		// its check's source is the load's (the run keeps its mix's allow: and load --allow
		// together), not "mix": load --allow put it there as often
		{"mix source", fromMix, nil, nil, "load"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := mustJudge(t, tc.run, verdict.Config{Thresholds: mustThresholds(t, "violations==0"), Allow: tc.allow})
			var out bytes.Buffer
			if err := report.WriteGateTable(&out, res); err != nil {
				t.Fatal(err)
			}
			if got := res.Failed(); strings.Join(got, "|") != strings.Join(tc.wantFailed, "|") || !strings.Contains(out.String(), tc.wantText) {
				t.Errorf("failed %q, want %q; table should contain %q:\n%s", got, tc.wantFailed, tc.wantText, out.String())
			}
		})
	}
	// failed leaves out the sessions that failed by allowed rules alone, and says so
	failing := fixture.Run(t, fixture.Options{Seed: 8, Violations: both})
	failing.Summary.Counters.SessionsFailed = 13
	failing.Summary.Counters.FailedByRules = map[string]int64{"R-abort": 12, "R-abort,R-terminal": 1}
	for _, tc := range []struct {
		allow      []protocol.Rule
		wantFailed bool
		wantDetail string
	}{
		{nil, true, ""}, // 13 failed
		{[]protocol.Rule{protocol.RAbort}, true, "not counting 12 failed only by allowed rules"},                      // 1 failed by R-terminal too
		{[]protocol.Rule{protocol.RAbort, protocol.RTerminal}, false, "not counting 13 failed only by allowed rules"}, // none left
	} {
		res := mustJudge(t, failing, verdict.Config{Thresholds: mustThresholds(t, "failed==0"), Allow: tc.allow})
		if c := findCheck(res, "failed==0"); c.Pass == tc.wantFailed || !strings.Contains(c.Detail, tc.wantDetail) {
			t.Errorf("allow %v: failed==0 check %+v, want failing %v with detail %q", tc.allow, c, tc.wantFailed, tc.wantDetail)
		}
	}
	bad := fixture.Run(t, fixture.Options{Seed: 8})
	bad.Summary.Config.Allow = []protocol.Rule{"R-abrot"}
	shared, err := protocol.NewRuleSet(protocol.SharedRules())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verdict.Judge(bad, verdict.Config{Rules: shared}); err == nil || !strings.Contains(err.Error(), `config.allow[0]`) || !strings.Contains(err.Error(), `unknown rule "R-abrot"`) {
		t.Errorf("an unknown allowed rule in the run: %v, want an error naming config.allow[0] and the rule", err)
	}
	// Without the known rules (a snapshot's verdict, a sweep's) the list is not checked.
	if _, err := verdict.Judge(bad, verdict.Config{}); err != nil {
		t.Errorf("an allow list judged without the known rules: %v", err)
	}
}

// TestGateMarkdownReadsInATerminal: the Markdown table keeps '<' of a threshold as written
// (it is read raw in a terminal too) and escapes only what GitHub would render as HTML.
func TestGateMarkdownReadsInATerminal(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 9})
	res := mustJudge(t, r, verdict.Config{Thresholds: mustThresholds(t, "ttfc.p99<1s", "errors<=0.1%")})
	res.Checks[slices.IndexFunc(res.Checks, func(c verdict.Check) bool { return c.Name == "ttfc.p99<1s" })].Detail = "<script>alert(1)</script> & &amp; a|b"
	var out bytes.Buffer
	report.WriteGateMarkdown(&out, res)
	s := out.String()
	for _, want := range []string{"| ttfc.p99<1s |", "| errors<=0.1% |", "&lt;script>alert(1)&lt;/script> & &amp;amp; a\\|b"} {
		if !strings.Contains(s, want) {
			t.Errorf("markdown lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "&lt;1s") || strings.Contains(s, "<script>") {
		t.Errorf("markdown escapes a comparison or lets a tag through:\n%s", s)
	}
}

func TestGateWithoutHistogramsFallsBackToSummary(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 6})
	r.Histograms = nil
	res := mustJudge(t, r, verdict.Config{Thresholds: mustThresholds(t, "ttfc.p99<1ms")})
	if c := findCheck(res, "ttfc.p99<1ms"); res.Pass || !strings.Contains(c.Detail, "worst of 4") {
		t.Errorf("check = %+v, want a failure computed from the worst of 4 summaries", c)
	}
}

func TestMetricsHelpListsEveryName(t *testing.T) {
	t.Parallel()
	help := verdict.MetricsHelp()
	want := []string{"p99.9", "  ttfc.measured ", "  ttft.measured "}
	for _, d := range measure.Registry() {
		name := "  " + string(d.Name)
		if d.Alias != "" {
			name += "|" + string(d.Alias)
		}
		if d.Judged() {
			want = append(want, name+" ", d.Example)
		}
	}
	for _, name := range want {
		if !strings.Contains(help, name) {
			t.Errorf("MetricsHelp lacks %q", name)
		}
	}
}

// summaryRun is a run with only per-key ttfc summaries: p50 and p99 in ms and a count per key.
func summaryRun(keys map[string][3]float64) *measure.Run {
	r := &measure.Run{Summary: measure.Summary{RunID: "summary-only"}}
	for name, v := range keys {
		sc, dialect, _ := strings.Cut(name, "/")
		r.Summary.Metrics = append(r.Summary.Metrics, measure.MetricSummary{
			Key:   measure.Key{Metric: measure.FirstChunk, Scenario: sc, Dialect: dialect},
			Count: int64(v[2]), P50: int64(v[0] * 1000), P99: int64(v[1] * 1000), Max: int64(v[1] * 1000)})
	}
	return r
}

func TestRegressionPerKey(t *testing.T) {
	t.Parallel()
	few := map[string][3]float64{"slow/legacy": {7000, 8000, 3}, "a/x": {150, 200, 3}, "b/x": {250, 300, 3}, "c/y": {350, 400, 3}, "d/y": {90, 100, 3}}
	shift := func(m map[string][3]float64, ms float64, only ...string) map[string][3]float64 {
		out := map[string][3]float64{}
		for k, v := range m {
			if len(only) == 0 || slices.Contains(only, k) {
				v[0] += ms
				v[1] += ms
			}
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		base, cur  map[string][3]float64
		regression string
		pass       bool
		detail     string
	}{
		// +200 ms on every fast key: the merged p99 (the legacy 8 s) would hide it; per key it fails
		{"hidden by the merge", few, shift(few, 200, "a/x", "b/x", "c/y", "d/y"), "ttfc.p99=10%", false, "worst d/y +200.0%"},
		// one noisy key with 3 samples among five: the median key is fine
		{"one noisy key", few, shift(few, 100, "d/y"), "ttfc.p99=10%", true, "worst d/y +100.0%"},
		// a key with enough samples (2,000 > 1,000 for p99) regressed alone still fails, named
		{"trusted key", map[string][3]float64{"a/x": {100, 200, 2000}, "b/x": {100, 200, 3}, "c/x": {100, 200, 3}},
			map[string][3]float64{"a/x": {100, 250, 2000}, "b/x": {100, 200, 3}, "c/x": {100, 200, 3}}, "ttfc.p99=10%", false,
			"over the allowance with enough samples: a/x +25.0%"},
		// absolute allowance: a +30 ms median is over +20 ms
		{"absolute", few, shift(few, 30), "ttfc.p50=20ms", false, "5 keys"},
		// and +10 ms is within it
		{"absolute within", few, shift(few, 10), "ttfc.p50=20ms", true, "5 keys"},
		// scoped to one scenario: only that key is compared
		{"scoped", few, shift(few, 100, "d/y"), "ttfc{scenario=d}.p99=10%", false, "1 keys; worst d/y"},
		// another workload shares few keys: the detail says how many of each run were left out
		{"other workload", few, map[string][3]float64{"a/x": {150, 200, 3}, "e/z": {1, 1, 3}, "f/z": {1, 1, 3}}, "ttfc.p99=10%", true,
			"1 keys; worst a/x +0.0% (200.000 → 200.000 ms); not compared: 2 keys of this run not in the baseline, 4 of the baseline not in this run"},
		// different mixes with no key in common cannot be compared: fail, saying why
		{"no common key", few, map[string][3]float64{"z/z": {1, 1, 5}}, "ttfc.p99=10%", false, "no scenario×dialect key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := mustRegressions(t, tc.regression)[0]
			c := g.Evaluate(summaryRun(tc.cur), summaryRun(tc.base))
			if c.Pass != tc.pass || !strings.Contains(c.Detail, tc.detail) {
				t.Errorf("%s: pass %v (%s, %s), want pass %v and detail containing %q", tc.regression, c.Pass, c.Value, c.Detail, tc.pass, tc.detail)
			}
		})
	}
}

// TestGateWarnsOfAnotherWorkload: regressions against a baseline of another workload (other
// dialects, other clients) compare only the keys both recorded; the gate says so, as compare
// does, in its result and in the table it prints.
func TestGateWarnsOfAnotherWorkload(t *testing.T) {
	t.Parallel()
	cur := fixture.Run(t, fixture.Options{Seed: 4})
	base := fixture.Run(t, fixture.Options{Seed: 4})
	cfg := verdict.Config{Regressions: mustRegressions(t, "ttfc.p99=10%"), Baseline: base}
	res, err := verdict.Judge(cur, cfg)
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("the same workload: warnings %q, err %v", res.Warnings, err)
	}
	base.Summary.Config.Dialects = []string{"sim-chat"}
	base.Summary.Config.Clients = 20
	res = mustJudge(t, cur, cfg)
	want := "the baseline's workload differs from this run's, so the regressions compare only the scenario×dialect keys both recorded: clients 20 → 500; dialects sim-chat → compose,sim-canvas,sim-chat"
	if len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", res.Warnings, want)
	}
	var out bytes.Buffer
	if err := report.WriteGateTable(&out, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: "+want) {
		t.Errorf("the gate table does not warn:\n%s", out.String())
	}
	out.Reset()
	report.WriteGateMarkdown(&out, res)
	if !strings.Contains(out.String(), "Warning: the baseline's workload differs") {
		t.Errorf("the gate's Markdown does not warn:\n%s", out.String())
	}
}

// findCheck returns res's first check named name (the expression as written, or a default's).
func findCheck(res *verdict.Result, name string) verdict.Check {
	i := slices.IndexFunc(res.Checks, func(c verdict.Check) bool { return c.Name == name })
	if i < 0 {
		return verdict.Check{}
	}
	return res.Checks[i]
}

// mustJudge judges run with cfg, failing the test on an error.
func mustJudge(t *testing.T, run *measure.Run, cfg verdict.Config) *verdict.Result {
	t.Helper()
	res, err := verdict.Judge(run, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
