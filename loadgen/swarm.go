package loadgen

import (
	"fmt"
)

// swarmMixErrors rejects a profile that would play a swarm scenario its dialect cannot.
func swarmMixErrors(cfg *Config) []error {
	var errs []error
	for i, p := range cfg.Mix.Profiles {
		if cfg.Dialects.PlaysSwarm(p.Dialect) || p.Weight <= 0 {
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
