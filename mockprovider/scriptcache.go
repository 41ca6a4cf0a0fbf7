package mockprovider

import (
	"sync"

	"github.com/streambench/streambench/scenarios"
)

// Bounds of the script cache (a step is ~56 bytes plus its text, so a few MiB). Past either,
// the cache starts over: a load test plays a few (scenario, seed) pairs over and over, and one
// with a fresh seed per session gains nothing from any eviction policy.
const (
	maxCachedScripts = 1024
	maxCachedSteps   = 1 << 16
)

// scriptCache keeps each (scenario, seed)'s read-only script for every request of the pair, keyed
// by *Scenario so a replaced scenario's script is never played. Safe for concurrent use.
type scriptCache struct {
	mu      sync.Mutex
	scripts map[scriptKey]*scenarios.Script
	steps   int
}

type scriptKey struct {
	scenario *scenarios.Scenario
	seed     uint64
}

func (c *scriptCache) render(sc *scenarios.Scenario, seed uint64) *scenarios.Script {
	key := scriptKey{sc, seed}
	c.mu.Lock()
	script, ok := c.scripts[key]
	c.mu.Unlock()
	if ok {
		return script
	}
	// Outside the lock: two requests for a new pair may both render it, identically.
	script = sc.Render(seed)
	steps := turnSteps(script.Turns)
	if steps > maxCachedSteps {
		return script
	}
	c.mu.Lock()
	if c.scripts == nil || len(c.scripts) >= maxCachedScripts || c.steps+steps > maxCachedSteps {
		c.scripts, c.steps = make(map[scriptKey]*scenarios.Script), 0
	}
	if old, ok := c.scripts[key]; ok {
		c.steps -= turnSteps(old.Turns)
	}
	c.scripts[key] = script
	c.steps += steps
	c.mu.Unlock()
	return script
}

// turnSteps counts the steps of turns, their swarm children's included.
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
