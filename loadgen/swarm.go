package loadgen

import (
	"fmt"

	"github.com/streambench/streambench/protocol/compose"
)

// swarmMixErrors rejects a mix whose non-compose profile would play a swarm scenario: swarm
// children are a compose dialect feature, so they belong in a compose profile's own scenarios.
func swarmMixErrors(cfg *Config) []error {
	var errs []error
	for i, p := range cfg.Mix.Profiles {
		if p.Dialect == compose.Name || p.Weight <= 0 {
			continue
		}
		for _, name := range p.scenarioNames {
			if sc, ok := cfg.Library.Get(name); ok && sc.HasSwarm() {
				errs = append(errs, fmt.Errorf("mix %s: profiles[%d] (%s, dialect %s) plays swarm scenario %q: swarm children are compose only; give it a weight in the compose profile's own scenarios, not the shared ones",
					cfg.MixName, i, p.Name, p.Dialect, name))
			}
		}
	}
	return errs
}
