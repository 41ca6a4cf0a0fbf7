package selfbench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// scaleStreamShare is the share of default-mix scale sessions playing the long scale-stream: the
// mix's own last seconds against its 30, so about nine users in ten are in a long stream.
const scaleStreamShare = 0.6

// scaleDefaultMix is the default mix with scale-stream added to every profile at scaleStreamShare.
func scaleDefaultMix() (*loadgen.Mix, error) {
	def := loadgen.DefaultMix()
	profiles := slices.Clone(def.Profiles)
	for i, p := range profiles {
		weights, own := map[string]float64{}, map[string]float64{}
		maps.Copy(weights, def.Scenarios)
		maps.Copy(weights, p.Scenarios)
		maps.Copy(own, p.Scenarios)
		var total float64
		for _, w := range weights {
			total += w
		}
		// w / (total + w) = share  ⇔  w = total · share / (1 − share)
		own[scaleStreamName] = total * scaleStreamShare / (1 - scaleStreamShare)
		profiles[i].Scenarios = own
	}
	mix, err := loadgen.NewMix("bench-scale-default-mix", def.Seed, def.Scenarios, profiles)
	if err != nil {
		return nil, fmt.Errorf("bench scale --default-mix: %w", err)
	}
	return mix, nil
}

const scaleStreamName = "scale-stream"

// embeddedDocs is the embedded library's scenario files by name (a child mock loads one directory).
func embeddedDocs() map[string]string {
	lib := scenarios.Embedded()
	docs := map[string]string{}
	for _, name := range lib.Names() {
		docs[name] = string(lib.Source(name))
	}
	return docs
}

// scaleFamily is one kind of default-mix session, counted to show it played among the long streams.
type scaleFamily struct {
	name  string
	match func(scenario string, target loadgen.Target) bool
}

// scaleFamilies are the counted families; redacted and nothink are deployments, any scenario on them theirs.
func scaleFamilies() []scaleFamily {
	prefix := func(p string) func(string, loadgen.Target) bool {
		return func(s string, _ loadgen.Target) bool { return strings.HasPrefix(s, p) }
	}
	is := func(name string) func(string, loadgen.Target) bool {
		return func(s string, _ loadgen.Target) bool { return s == name }
	}
	return []scaleFamily{
		{"compose swarms (swarm-*)", prefix("swarm-")},
		{"compose plan approvals (plan-*)", prefix("plan-")},
		{"compose tasks/actions/conclave/trace (compose-side-events)", is("compose-side-events")},
		{"canvas reconnects (reconnect-*)", prefix("reconnect-")},
		{"PII scenarios (pii-*)", prefix("pii-")},
		{"sessions on PII-redacted workflows", func(_ string, t loadgen.Target) bool { return t.Options["redacted"] == true }},
		{"Sim paused runs (paused-for-input)", is("paused-for-input")},
		{"execution timeouts (execution-timeout)", is("execution-timeout")},
		{"thinking cap (thinking-over-cap)", is("thinking-over-cap")},
		{"sessions on nothink deployments", func(_ string, t loadgen.Target) bool { return strings.Contains(t.Slug, "nothink") }},
	}
}

// familyCounter counts ended and failed sessions per scaleFamily; add is a loadgen.SessionEndFunc.
type familyCounter struct {
	families []scaleFamily
	targets  map[string]loadgen.Target // by slug, over every profile (options of the first)

	mu             sync.Mutex
	ended, failed  []int64
	other, streams int64 // other default-mix sessions; scale-stream sessions
}

func newFamilyCounter(mix *loadgen.Mix) *familyCounter {
	c := &familyCounter{families: scaleFamilies(), targets: map[string]loadgen.Target{}}
	for _, p := range mix.Profiles {
		for _, t := range p.Targets {
			if _, seen := c.targets[t.Slug]; !seen {
				c.targets[t.Slug] = t
			}
		}
	}
	c.ended, c.failed = make([]int64, len(c.families)), make([]int64, len(c.families))
	return c
}

func (c *familyCounter) add(e loadgen.SessionEnd) {
	failed := e.Outcome.IsError() || len(e.Violations) > 0
	t, ok := c.targets[e.Target]
	if !ok {
		t = loadgen.Target{Slug: e.Target, Options: protocol.Options{}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.Scenario == scaleStreamName {
		c.streams++
		return
	}
	matched := false
	for i, f := range c.families {
		if f.match(e.Scenario, t) {
			matched = true
			c.ended[i]++
			if failed {
				c.failed[i]++
			}
		}
	}
	if !matched {
		c.other++
	}
}

// report adds the counts to rep; a family that never ran misses its target without failing (short runs).
func (c *familyCounter) report(rep *Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rep.add("scale-stream sessions", float64(c.streams), "sessions")
	for i, f := range c.families {
		rep.addTarget("sessions: "+f.name, float64(c.ended[i]), fmt.Sprintf("sessions (%d failed)", c.failed[i]), "> 0", c.ended[i] > 0)
	}
	rep.add("sessions: other default-mix scenarios", float64(c.other), "sessions")
}
