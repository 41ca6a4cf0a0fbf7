package verdict

import (
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
)

// OnOverhead is t on ttfc or ttft made the same threshold on ttfc.overhead or ttft.overhead,
// when run recorded that within t's scope: ttfc is mostly the script's thinking time, which no
// capacity changes, and the overhead is what load adds. Otherwise (ttfc.measured too) it
// gives t and false.
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

// recordedIn tells whether run holds values of m within scope.
func recordedIn(run *measure.Run, m measure.Metric, scope map[string]string) bool {
	if h := run.Histograms; h != nil && h.Len() > 0 {
		return slices.ContainsFunc(h.Keys(), func(k measure.Key) bool { return k.Metric == m && scopeMatches(scope, k) && h.Count(k) > 0 })
	}
	return slices.ContainsFunc(run.Summary.Metrics, Selector{Scope: scope, def: m.Def()}.matches)
}
