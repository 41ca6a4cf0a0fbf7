package measure

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ProviderRequests is what the mock provider saw of one scenario's sessions in a run (its
// session records, read when the run names the mock, `--mock`): how many provider requests the
// target made for them, and how many of those were retries. A retry is a request for a turn
// (of the conversation, or of one swarm child) the session had already asked the provider
// for: a target whose SDK retries a 429 or 503 (Anthropic's and OpenAI's SDKs twice, LangChain
// six times) makes three requests for the one scripted error, which the client does not see.
type ProviderRequests struct {
	Scenario string `json:"scenario"`
	// Sessions are the run's sessions of the scenario with at least one provider request.
	Sessions int64 `json:"sessions"`
	// Requests are every provider request of those sessions, retries included.
	Requests int64 `json:"requests"`
	// Retries are the requests that repeated a turn already asked for.
	Retries int64 `json:"retries"`
	// RetriesByStatus counts the retries by the HTTP status of the attempt they repeated
	// (429, 503; 200 for a stream that failed or was cut after its head).
	RetriesByStatus map[int]int64 `json:"retries_by_status,omitempty"`
}

// MergeProviderRequests returns a and b added up per scenario, sorted by scenario: the
// figures of a run split over shards (each counts its own sessions).
func MergeProviderRequests(a, b []ProviderRequests) []ProviderRequests {
	by := map[string]*ProviderRequests{}
	for _, list := range [][]ProviderRequests{a, b} {
		for _, p := range list {
			sum, ok := by[p.Scenario]
			if !ok {
				sum = &ProviderRequests{Scenario: p.Scenario}
				by[p.Scenario] = sum
			}
			sum.Sessions += p.Sessions
			sum.Requests += p.Requests
			sum.Retries += p.Retries
			for status, n := range p.RetriesByStatus {
				if sum.RetriesByStatus == nil {
					sum.RetriesByStatus = map[int]int64{}
				}
				sum.RetriesByStatus[status] += n
			}
		}
	}
	if len(by) == 0 {
		return nil
	}
	out := make([]ProviderRequests, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(x, y ProviderRequests) int { return cmp.Compare(x.Scenario, y.Scenario) })
	return out
}

// RetriesText says which statuses were retried how often, "429 ×2, 503 ×1" ("" for none).
func RetriesText(byStatus map[int]int64) string {
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		if n := byStatus[status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d ×%d", status, n))
		}
	}
	return strings.Join(parts, ", ")
}

// TotalProviderRequests sums the figures of every scenario (Scenario empty).
func TotalProviderRequests(list []ProviderRequests) ProviderRequests {
	var total ProviderRequests
	for _, p := range list {
		p.Scenario = ""
		total = MergeProviderRequests([]ProviderRequests{total}, []ProviderRequests{p})[0]
	}
	return total
}
