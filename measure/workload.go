package measure

import (
	"cmp"
	"strconv"
	"strings"
)

// WorkloadDiffs lists the workload settings in which b's run differs from a's, as "NAME A → B".
func WorkloadDiffs(a, b *Summary) []string {
	var out []string
	diff := func(name, x, y string) {
		if x != y {
			out = append(out, name+" "+cmp.Or(x, "(none)")+" → "+cmp.Or(y, "(none)"))
		}
	}
	ca, cb := a.Config, b.Config
	diff("clients", strconv.Itoa(ca.Clients), strconv.Itoa(cb.Clients))
	diff("rate", formatFloat(ca.Rate)+"/s", formatFloat(cb.Rate)+"/s")
	if ca.Rate > 0 || cb.Rate > 0 {
		diff("arrival", ca.Arrival, cb.Arrival)
		diff("max in-flight", strconv.Itoa(ca.MaxInflight), strconv.Itoa(cb.MaxInflight))
	}
	diff("stages", ca.Stages, cb.Stages)
	diff("duration", durationText(ca.Duration), durationText(cb.Duration))
	diff("sessions", strconv.FormatInt(ca.Sessions, 10), strconv.FormatInt(cb.Sessions, 10))
	diff("warmup", durationText(ca.Warmup), durationText(cb.Warmup))
	diff("think time", durationText(ca.ThinkTime), durationText(cb.ThinkTime))
	diff("mix", ca.Mix, cb.Mix)
	diff("dialects", strings.Join(ca.Dialects, ","), strings.Join(cb.Dialects, ","))
	diff("http2", strconv.FormatBool(ca.HTTP2), strconv.FormatBool(cb.HTTP2))
	diff("faults", strings.Join(ca.Faults, ","), strings.Join(cb.Faults, ","))
	diff("CPUs", strconv.Itoa(a.Environment.CPUs), strconv.Itoa(b.Environment.CPUs))
	return out
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
