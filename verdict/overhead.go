package verdict

import (
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
)

// OnOverhead is t judged on the target's own part of the latency: a threshold on ttfc or ttft
// (any scope, any statistic) becomes the same threshold on ttfc.overhead or ttft.overhead,
// when run recorded that overhead within t's scope (its scripts say when each frame was due).
// At a load the target copes with, ttfc is mostly the script's thinking time, which no
// capacity changes; the overhead is what load adds, so a sweep's knee is judged on it by
// default. Any other threshold, or a run without the overhead, gives t itself and false.
//
// Judge applies it to every threshold of the command line and the mix: a user who wants the
// latency as measured names ttfc.measured or ttft.measured, which OnOverhead leaves alone.
func OnOverhead(t Threshold, run *measure.Run) (Threshold, bool) {
	over := t.Selector.def.Overhead
	if over == "" || strings.HasSuffix(t.Selector.Name, measuredSuffix) || !recordedIn(run, over, t.Selector.Scope) {
		return t, false
	}
	expr := strings.TrimSpace(t.Expr)
	name := t.Selector.Name
	if !strings.HasPrefix(expr, name) {
		return t, false
	}
	o, err := ParseThreshold(string(over) + expr[len(name):])
	if err != nil {
		return t, false
	}
	return o, true
}

// recordedIn tells whether run holds values of m in the scenario and dialect scope asks for:
// its histograms say, or without them its summaries.
func recordedIn(run *measure.Run, m measure.Metric, scope map[string]string) bool {
	if h := run.Histograms; h != nil && h.Len() > 0 {
		return slices.ContainsFunc(h.Keys(), func(k measure.Key) bool { return k.Metric == m && scopeMatches(scope, k) && h.Count(k) > 0 })
	}
	return slices.ContainsFunc(run.Summary.Metrics, Selector{Scope: scope, def: m.Def()}.matches)
}
