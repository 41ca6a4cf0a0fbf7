package measure

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Judging is what the verdict quotes beyond the summary: the first error messages, the
// post-run checks that failed, and the settings its reasons name.
type Judging struct {
	FirstErrors   []string
	PostRun       []string
	Grace         time.Duration
	StreamTimeout time.Duration
	MaxInflight   int
}

// Judge is a run's verdict, the same for a single run (the generator calls it) and for a run
// merged from shards: it passes with no violations but allowed ones, no leaks over tolerance,
// no errors beyond the scripted ones, every value recorded, no session hung, every planned
// start made, and at least one session started, uninterrupted. It sets no warnings.
func Judge(s *Summary, j Judging) Verdict {
	var reasons, allowed []string
	c := s.Counters
	if n := s.ViolationsExcept(s.Config.Allow); n > 0 {
		rules := make([]string, 0, len(s.Violations))
		for rule, k := range s.Violations {
			if !slices.Contains(s.Config.Allow, rule) {
				rules = append(rules, fmt.Sprintf("%s×%d", rule, k))
			}
		}
		slices.Sort(rules)
		reasons = append(reasons, fmt.Sprintf("%d protocol violations: %v", n, rules))
	}
	for _, rule := range s.Config.Allow {
		if k := s.Violations[rule]; k > 0 {
			allowed = append(allowed, fmt.Sprintf("%s×%d", rule, k))
		}
	}
	for _, l := range s.Leaks {
		if !l.OK {
			reasons = append(reasons, fmt.Sprintf("leak: %s %s grew by %g (from %g to %g, tolerance %g)", l.Source, l.Name, l.Delta, l.Before, l.After, l.Tolerance))
		}
	}
	if n := c.Errors(); n > 0 {
		reasons = append(reasons, fmt.Sprintf("%d unscripted errors (HTTP %v, transport %d, decode %d); first: %s", n, c.HTTPErrors, c.TransportErrors, c.DecodeErrors, strings.Join(j.FirstErrors, "; ")))
	}
	if c.RecordErrors > 0 {
		reasons = append(reasons, fmt.Sprintf("%d latencies outside the histogram range", c.RecordErrors))
	}
	if c.SessionsHung > 0 {
		reasons = append(reasons, fmt.Sprintf("%d sessions hung: no terminal frame within the %s grace period or the %s stream timeout (R-terminal)", c.SessionsHung, j.Grace, j.StreamTimeout))
	}
	if c.DroppedStarts > 0 {
		reasons = append(reasons, fmt.Sprintf("%d scheduled sessions dropped at --max-inflight %d", c.DroppedStarts, j.MaxInflight))
	}
	if c.SessionsStarted == 0 {
		reasons = append(reasons, "no session started")
	}
	if s.Interrupted {
		reasons = append(reasons, "interrupted before the planned end")
	}
	reasons = append(reasons, j.PostRun...)
	return Verdict{Pass: len(reasons) == 0, Reasons: reasons, Allowed: allowed}
}
