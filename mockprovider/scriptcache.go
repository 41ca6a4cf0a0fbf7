package mockprovider

import (
	"sync"

	"github.com/streambench/streambench/scenarios"
)

// Bounds of the script cache: at most maxCachedScripts scripts holding at most
// maxCachedSteps steps between them (a step is ~56 bytes plus its text, so a few MiB). Past
// either, the cache starts over empty: a load test plays a handful of (scenario, seed) pairs
// over and over, and one that plays a fresh seed per session gains nothing from a cache
// anyway, so a smarter eviction would buy nothing.
const (
	maxCachedScripts = 1024
	maxCachedSteps   = 1 << 16
)

// scriptCache keeps the script each (scenario, seed) renders, so that a request renders only
// the first time its pair is asked for: every turn of a session, every swarm child and every
// session of a load test that shares a seed plays the script already rendered. A script is
// read-only once rendered (the server never writes into one: FaultTextDiffers changes a copy
// of its step), so concurrent requests share it. The key holds the *Scenario, not its name,
// so a library that replaces a scenario never plays the old one's script. Safe for
// concurrent use.
type scriptCache struct {
	mu      sync.Mutex
	scripts map[scriptKey]*scenarios.Script
	steps   int
}

type scriptKey struct {
	scenario *scenarios.Scenario
	seed     uint64
}

// render returns sc's script for seed, from the cache or rendered now and kept.
func (c *scriptCache) render(sc *scenarios.Scenario, seed uint64) *scenarios.Script {
	key := scriptKey{sc, seed}
	c.mu.Lock()
	script, ok := c.scripts[key]
	c.mu.Unlock()
	if ok {
		return script
	}
	// Rendered outside the lock: two requests for a new pair may both render it, and the
	// second's identical script replaces the first's.
	script = sc.Render(seed)
	steps := scriptSteps(script)
	if steps > maxCachedSteps {
		return script
	}
	c.mu.Lock()
	if c.scripts == nil || len(c.scripts) >= maxCachedScripts || c.steps+steps > maxCachedSteps {
		c.scripts, c.steps = make(map[scriptKey]*scenarios.Script), 0
	}
	if old, ok := c.scripts[key]; ok {
		c.steps -= scriptSteps(old)
	}
	c.scripts[key] = script
	c.steps += steps
	c.mu.Unlock()
	return script
}

// scriptSteps counts a script's steps, its swarm children's included.
func scriptSteps(s *scenarios.Script) int {
	return turnSteps(s.Turns)
}

func turnSteps(turns []scenarios.ScriptTurn) int {
	n := 0
	for i := range turns {
		n += len(turns[i].Steps)
		for j := range turns[i].Swarm {
			n += turnSteps(turns[i].Swarm[j].Turns)
		}
	}
	return n
}
