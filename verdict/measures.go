package verdict

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
)

// measureName makes a dialect measure of a name the registry lacks, for the run to confirm
// (checkMeasure). Measure names are snake_case of two words or more, so a misspelt one-word
// name is refused at once; "child_ttfd_p99" reads as "child_ttfd.p99".
func measureName(name, rest string) (measure.Def, string, string, bool) {
	if name == "" || name[0] < 'a' || name[0] > 'z' || !strings.Contains(strings.Trim(name, "_"), "_") ||
		strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return measure.Def{}, name, rest, false
	}
	if !strings.Contains(rest, ".") {
		if i := strings.LastIndexByte(name, '_'); i > 0 {
			if stat := name[i+1:]; slices.Contains(latencyStats, stat) && strings.Contains(name[:i], "_") {
				name, rest = name[:i], rest+"."+stat
			}
		}
	}
	return measure.Def{Name: measure.Metric(name), Kind: measure.KindDialectMeasure, Scopes: []string{"scenario", "dialect"}}, name, rest, true
}

// parseMeasureLimit reads a dialect measure's limit: a duration, or a number for a count.
func parseMeasureLimit(limit string) (float64, string, error) {
	if us, ok := micros(limit); ok {
		return us, measure.MeasureKindLatency, nil
	}
	if v, ok := number(limit); ok {
		return v, measure.MeasureKindCount, nil
	}
	return 0, "", errors.New("want a duration such as 500ms (a latency measure) or a number such as 3 (a count measure)")
}

// checkMeasure confirms that the run recorded the measure, of its limit's kind.
func (s Selector) checkMeasure(sum *measure.Summary) error {
	info, ok := sum.Measure(s.Name)
	if !ok {
		names := make([]string, len(sum.Measures))
		for i, m := range sum.Measures {
			names[i] = m.Name
		}
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return fmt.Errorf("%s: %w: %q is neither a gate name (%s) nor a dialect measure this run recorded (measures: %s)", s, errNoData, s.Name, knownNames(), have)
	}
	if info.Kind != s.unit {
		want := map[bool]string{true: "a number such as 3", false: "a duration such as 500ms"}[info.Kind == measure.MeasureKindCount]
		return fmt.Errorf("%s: %s is a %s measure: write its limit as %s", s, s.Name, info.Kind, want)
	}
	return nil
}
