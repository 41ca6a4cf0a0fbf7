package scenarios

import (
	"slices"
	"time"
)

// EndpointScenario is the name of the scenario the mock plays (Endpoint) for a request without
// a directive that asks for max_tokens, as an application sends it.
const EndpointScenario = "endpoint"

// DefaultTiming is the library's baseline pacing (plain-answer's).
func DefaultTiming() Timing {
	return Timing{
		TimeToFirstToken: Dist{Kind: DistLognormal, Median: 300 * time.Millisecond, P99: 1200 * time.Millisecond},
		InterToken:       Dist{Kind: DistUniform, Min: 20 * time.Millisecond, Max: 40 * time.Millisecond},
	}
}

// Endpoint is the scenario of an endpoint request asking for maxTokens output tokens.
func Endpoint(timing Timing, maxTokens int) *Scenario {
	return &Scenario{
		Name:        EndpointScenario,
		Description: "An inference endpoint's request without a directive: max_tokens generated tokens.",
		Timing:      timing,
		Turns:       []Turn{{Text: Text{Tokens: max(maxTokens, 1)}}},
	}
}

// With returns a copy of l with sc added (replacing one of the same name).
func (l *Library) With(sc *Scenario) *Library {
	n := l.clone()
	if _, ok := n.byName[sc.Name]; !ok {
		n.names = append(n.names, sc.Name)
		slices.Sort(n.names)
	}
	n.byName[sc.Name] = sc
	return n
}
