package measure

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
)

// ShardRun is one shard's results and their directory (where Merge reads nil Histograms).
type ShardRun struct {
	Dir string
	Run *Run
}

// MergeError refuses shards that are not one run's; Field is the summary.json field at fault.
type MergeError struct {
	Field  string
	Detail string
}

func (e *MergeError) Error() string { return e.Field + ": " + e.Detail }

// Merge makes one run of a sharded run's shards (CheckShards), as if one process had run it
// all, for the caller to judge; leaks is the whole run's leak check (nil: not checked). Nil
// Run.Histograms are read one shard at a time, so a merge holds the merged set and one shard's.
func Merge(shards []ShardRun, leaks *MergeLeaks) (*Run, error) {
	if err := CheckShards(shards); err != nil {
		return nil, err
	}
	shards = slices.Clone(shards) // sorted here, not in the caller's slice
	slices.SortFunc(shards, func(a, b ShardRun) int { return a.Run.Summary.Shard.Index - b.Run.Summary.Shard.Index })
	first := &shards[0].Run.Summary
	out := &Run{Histograms: NewHistograms()}
	s := &out.Summary
	s.Schema, s.RunID, s.Config = SchemaVersion, first.RunID, first.Config
	s.Environment = first.Environment
	s.Started, s.Ended = first.Started, first.Ended
	s.Violations = map[protocol.Rule]int64{}
	var hosts []string
	var judging Judging
	for _, sh := range shards {
		sum := &sh.Run.Summary
		hs := sh.Run.Histograms
		if hs == nil { // read now, and let go after this shard: one shard's in memory at a time
			var err error
			if hs, err = readHistograms(sh.Dir, sum); err != nil {
				return nil, err
			}
		}
		if dropped := out.Histograms.Merge(hs); dropped > 0 {
			return nil, fmt.Errorf("%s: %d histogram values outside 1µs..1h", sh.Dir, dropped)
		}
		s.Counters = addCounters(s.Counters, sum.Counters)
		s.ProviderRequests = MergeProviderRequests(s.ProviderRequests, sum.ProviderRequests)
		s.Measures = MergeMeasureInfos(s.Measures, sum.Measures)
		for rule, n := range sum.Violations {
			s.Violations[rule] += n
		}
		if sum.Started.Before(s.Started) {
			s.Started = sum.Started
		}
		if sum.Ended.After(s.Ended) {
			s.Ended = sum.Ended
		}
		s.Interrupted = s.Interrupted || sum.Interrupted
		if s.Engine == nil { // every shard read the same engine: the first shard's series stand
			s.Engine = sum.Engine
		}
		s.Leaks = append(s.Leaks, sum.Leaks...)
		for _, nc := range sum.LeaksNotChecked {
			if nc.Source != "run" { // the shards' "the merge checks" notes: the merge says its own
				s.LeaksNotChecked = append(s.LeaksNotChecked, nc)
			}
		}
		if h := sum.Environment.Hostname; h != "" && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
		info := sum.Shard
		judging.FirstErrors = append(judging.FirstErrors, sum.Judging.FirstErrors...)
		for _, p := range sum.Judging.PostRun {
			judging.PostRun = append(judging.PostRun, fmt.Sprintf("shard %d: %s", info.Index, p))
		}
		if st := sum.Judging.Stopped; st != "" {
			judging.Stopped = strings.TrimPrefix(judging.Stopped+"; ", "; ") + fmt.Sprintf("shard %d: %s", info.Index, st)
		}
		judging.Grace, judging.StreamTimeout = max(judging.Grace, sum.Judging.Grace), max(judging.StreamTimeout, sum.Judging.StreamTimeout)
		judging.IdleTimeout = max(judging.IdleTimeout, sum.Judging.IdleTimeout)
		for _, w := range sum.Verdict.Warnings {
			s.Verdict.Warnings = append(s.Verdict.Warnings, fmt.Sprintf("shard %d: %s", info.Index, w))
		}
		ttfc, _ := hs.Merged(func(k Key) bool { return k.Metric == FirstChunk })
		s.Shards = append(s.Shards, ShardFigures{
			Index: info.Index, Dir: sh.Dir, Hostname: sum.Environment.Hostname,
			Started: sum.Started, Ended: sum.Ended, LateBy: info.LateBy,
			SessionsStarted: sum.Counters.SessionsStarted, SessionsOK: sum.Counters.SessionsOK,
			SessionsFailed: sum.Counters.SessionsFailed, LateStarts: sum.Counters.LateStarts,
			DroppedStarts: sum.Counters.DroppedStarts, Violations: sum.TotalViolations(),
			Errors: sum.Counters.Errors(), TTFCP99: ttfc.ValueAtQuantile(99), Pass: sum.Verdict.Pass,
		})
	}
	if len(judging.FirstErrors) > 5 { // as many as one generator quotes
		judging.FirstErrors = judging.FirstErrors[:5]
	}
	judging.MaxInflight = first.Config.MaxInflight
	if leaks != nil {
		s.Leaks = append(s.Leaks, leaks.Leaks...)
		s.LeaksNotChecked = append(s.LeaksNotChecked, leaks.NotChecked...)
	} else {
		s.LeaksNotChecked = append(s.LeaksNotChecked, LeakNotChecked{Source: "run",
			Reason: "merged without a leak check: streambench leaks baseline before the shards, then merge --leak-baseline FILE"})
	}
	s.Environment.Hostname = strings.Join(hosts, ",")
	s.Metrics = Summarize(out.Histograms)
	s.Overall = SummarizeOverall(out.Histograms)
	out.Timeline = mergeTimelines(shards, s.Started)
	out.Samples = mergeSamples(shards)
	measured := s.Ended.Sub(s.Started.Add(s.Config.Warmup))
	s.Tokens = NewTokenSummary(s.Counters, goodputSLOs(first), measured) // every shard's (CheckShards)
	s.Judging = judging
	return out, nil
}

// MergeLeaks is a sharded run's one leak check (leakcheck.Check's Verify).
type MergeLeaks struct {
	Leaks      []Leak
	NotChecked []LeakNotChecked
}

// CheckShards refuses shards that are not one finished run's, each shard once.
func CheckShards(shards []ShardRun) error {
	if len(shards) == 0 {
		return &MergeError{Field: "shards", Detail: "no shard directory given"}
	}
	for _, sh := range shards {
		if s := &sh.Run.Summary; s.Incomplete {
			which := ""
			if s.Shard != nil {
				which = fmt.Sprintf(" (shard %d of %d)", s.Shard.Index, s.Shard.Count)
			}
			return &MergeError{Field: "incomplete", Detail: fmt.Sprintf("%s%s: its %s says \"incomplete\": true, a snapshot taken %s into the run, at %s UTC, when the shard was killed or still running: merge finished shards (gate and compare refuse such a run too)",
				sh.Dir, which, SummaryFile, s.Ended.Sub(s.Started).Round(time.Second), s.Ended.UTC().Format(time.TimeOnly))}
		}
		if sh.Run.Summary.Shard == nil {
			return &MergeError{Field: "shard", Detail: fmt.Sprintf("%s has no shard field in its summary.json: not the results of load --shard (or --shards)", sh.Dir)}
		}
	}
	a := &shards[0].Run.Summary
	want := mustAgree(a)
	for _, sh := range shards[1:] {
		b := &sh.Run.Summary
		for i, f := range mustAgree(b) {
			if x := want[i][1]; x != f[1] {
				return &MergeError{Field: f[0], Detail: fmt.Sprintf("%s has %q, %s has %q: not shards of one run", shards[0].Dir, x, sh.Dir, f[1])}
			}
		}
		keys := slices.Concat(slices.Collect(maps.Keys(a.Config.Extra)), slices.Collect(maps.Keys(b.Config.Extra)))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			x, xok := a.Config.Extra[k]
			y, yok := b.Config.Extra[k]
			if x != y || xok != yok {
				return &MergeError{Field: "config.extra." + k, Detail: fmt.Sprintf("%s has %s, %s has %s: not shards of one run", shards[0].Dir, extraText(x, xok), sh.Dir, extraText(y, yok))}
			}
		}
	}
	count := a.Shard.Count
	seen := map[int]string{}
	for _, sh := range shards {
		i := sh.Run.Summary.Shard.Index
		if i < 0 || i >= count {
			return &MergeError{Field: "shard.index", Detail: fmt.Sprintf("%s is shard %d of %d: out of range", sh.Dir, i, count)}
		}
		if d, ok := seen[i]; ok {
			return &MergeError{Field: "shard.index", Detail: fmt.Sprintf("shard %d given twice: %s and %s", i, d, sh.Dir)}
		}
		seen[i] = sh.Dir
	}
	var missing []string
	for i := range count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return &MergeError{Field: "shard.index", Detail: fmt.Sprintf("shard %s of %d missing (have %d of %d): merge them all", strings.Join(missing, ", "), count, len(seen), count)}
	}
	return nil
}

// mustAgree are the fields (named, as text) every shard of one run has alike: the merged run is
// judged by the first shard's settings.
func mustAgree(s *Summary) [][2]string {
	c, e, j := s.Config, s.Environment, s.Judging
	return [][2]string{
		{"run_id", s.RunID}, {"config.seed", fmt.Sprint(c.Seed)}, {"config.mix", c.Mix},
		{"config.dialects", strings.Join(c.Dialects, ",")}, {"config.clients", fmt.Sprint(c.Clients)},
		{"config.rate", fmt.Sprint(c.Rate)}, {"config.sessions", fmt.Sprint(c.Sessions)}, {"config.stages", c.Stages},
		{"environment.git_revision", e.GitRevision}, {"environment.go_version", e.GoVersion},
		{"shard.count", fmt.Sprint(s.Shard.Count)}, {"config.allow", unordered(c.Allow)},
		{"config.thresholds", unordered(c.Thresholds)}, {"tokens.goodput.slos", unordered(goodputSLOs(s))},
		{"config.arrival", c.Arrival}, {"config.max_inflight", fmt.Sprint(c.MaxInflight)},
		{"config.duration", c.Duration.String()}, {"config.warmup", c.Warmup.String()},
		{"config.think_time", c.ThinkTime.String()}, {"config.faults", unordered(c.Faults)},
		{"config.http2", fmt.Sprint(c.HTTP2)}, {"judging.grace_ns", j.Grace.String()},
		{"judging.stream_timeout_ns", j.StreamTimeout.String()}, {"judging.idle_timeout_ns", j.IdleTimeout.String()},
	}
}

// unordered is a list whose order does not matter as text to compare: sorted, joined.
func unordered[T ~string](list []T) string { return JoinNames(slices.Sorted(slices.Values(list))) }

// goodputSLOs are the SLOs a run's goodput was judged by.
func goodputSLOs(s *Summary) []string {
	if s.Tokens == nil {
		return nil
	}
	return s.Tokens.Goodput.SLOs
}

func extraText(v string, ok bool) string {
	if !ok {
		return "none"
	}
	return fmt.Sprintf("%q", v)
}

// addCounters sums two runs' counters, maps included.
func addCounters(a, b Counters) Counters {
	return Counters{
		SessionsStarted: a.SessionsStarted + b.SessionsStarted, Outcomes: addMaps(a.Outcomes, b.Outcomes), SessionsOK: a.SessionsOK + b.SessionsOK,
		SessionsFailed: a.SessionsFailed + b.SessionsFailed, FailedByRules: addMaps(a.FailedByRules, b.FailedByRules),
		HTTPErrors: addMaps(a.HTTPErrors, b.HTTPErrors), Frames: a.Frames + b.Frames, Bytes: a.Bytes + b.Bytes,
		LateStarts: a.LateStarts + b.LateStarts, DroppedStarts: a.DroppedStarts + b.DroppedStarts,
		RecordErrors: a.RecordErrors + b.RecordErrors, OutputTokens: a.OutputTokens + b.OutputTokens,
		EstimatedTokens: a.EstimatedTokens + b.EstimatedTokens, EstimatedTokenSessions: a.EstimatedTokenSessions + b.EstimatedTokenSessions,
		EstimatedBy:     addMaps(a.EstimatedBy, b.EstimatedBy),
		GoodputSessions: a.GoodputSessions + b.GoodputSessions, GoodputJudged: a.GoodputJudged + b.GoodputJudged,
		TurnRequests: a.TurnRequests + b.TurnRequests, WarmupRequests: a.WarmupRequests + b.WarmupRequests,
	}
}

// addMaps sums two maps of counts by key; nil when both are empty.
func addMaps[K comparable](x, y map[K]int64) map[K]int64 {
	if len(x)+len(y) == 0 {
		return nil
	}
	out := maps.Clone(x)
	if out == nil {
		out = map[K]int64{}
	}
	for k, v := range y {
		out[k] += v
	}
	return out
}

// mergeTimelines sums the shards' seconds on the wall clock, counted from start.
func mergeTimelines(shards []ShardRun, start time.Time) []TimelinePoint {
	bySecond := map[int]TimelinePoint{}
	for _, sh := range shards {
		origin := sh.Run.Summary.Started.Add(sh.Run.Summary.Shard.LateBy)
		offset := int(origin.Sub(start).Round(time.Second) / time.Second)
		for _, p := range sh.Run.Timeline {
			m := bySecond[p.Second+offset]
			m.Second = p.Second + offset
			m.Active += p.Active
			m.Started += p.Started
			m.Completed += p.Completed
			m.Frames += p.Frames
			m.Errors += p.Errors
			m.Violations += p.Violations
			bySecond[m.Second] = m
		}
	}
	out := make([]TimelinePoint, 0, len(bySecond))
	for _, sec := range slices.Sorted(maps.Keys(bySecond)) {
		out = append(out, bySecond[sec])
	}
	return out
}

// mergeSamples keeps per rule the most samples one shard kept: the generator's bound.
func mergeSamples(shards []ShardRun) []ViolationSample {
	bound := map[protocol.Rule]int{}
	for _, sh := range shards {
		per := map[protocol.Rule]int{}
		for _, v := range sh.Run.Samples {
			per[v.Rule]++
		}
		for r, n := range per {
			bound[r] = max(bound[r], n)
		}
	}
	kept := map[protocol.Rule]int{}
	var out []ViolationSample
	for _, sh := range shards {
		for _, v := range sh.Run.Samples {
			if kept[v.Rule] < bound[v.Rule] {
				kept[v.Rule]++
				out = append(out, v)
			}
		}
	}
	return out
}
