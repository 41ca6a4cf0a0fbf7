package loadgen

import (
	"slices"
	"sync"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// sampler keeps the first few offending sessions per rule, with their frames; safe for concurrent use.
type sampler struct {
	mu      sync.Mutex
	perRule int
	counts  map[protocol.Rule]int
	bytes   int // the samples' bytes so far, at most measure.MaxRunSampleBytes
	done    []measure.ViolationSample
}

// wants reserves a sample of rule if the rule still needs one and the run's samples have room.
func (s *sampler) wants(rule protocol.Rule) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[protocol.Rule]int{}
	}
	if s.counts[rule] >= s.perRule || s.bytes >= measure.MaxRunSampleBytes {
		return false
	}
	s.counts[rule]++
	return true
}

// add keeps a sample wants reserved.
func (s *sampler) add(sample measure.ViolationSample) {
	sample.Detail = measure.Clip(sample.Detail, maxSampleDetailBytes)
	s.mu.Lock()
	s.bytes += sample.SampleBytes()
	s.done = append(s.done, sample)
	s.mu.Unlock()
}

// offer keeps each of a session's rules that needs a sample, with its frames.
func (s *sampler) offer(p *session.Plan, res *session.Result, redact func(string) string) {
	var frames []string
	for i, v := range res.Violations {
		if slices.ContainsFunc(res.Violations[:i], func(o protocol.Violation) bool { return o.Rule == v.Rule }) || !s.wants(v.Rule) {
			continue
		}
		if frames == nil {
			frames = res.Frames()
		}
		s.add(measure.ViolationSample{Session: p.ID, Scenario: p.Pick.Scenario, Dialect: p.Label, Seed: p.Pick.Seed,
			Rule: v.Rule, Detail: redact(v.Detail), Frames: frames})
	}
}

func (s *sampler) collected() []measure.ViolationSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.done)
}

// maxSampleDetailBytes bounds a sample's detail, which may quote a hostile target.
const maxSampleDetailBytes = 2 << 10
