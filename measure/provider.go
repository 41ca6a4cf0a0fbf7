package measure

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ProviderRequests is the provider requests the mock saw of one scenario's sessions, and the
// retries among them: a turn asked for again (an SDK retrying a 429 the client never sees).
type ProviderRequests struct {
	Scenario string `json:"scenario"`
	Sessions int64  `json:"sessions"` // with at least one provider request
	Requests int64  `json:"requests"`
	Retries  int64  `json:"retries"`
	// RetriesByStatus counts retries by the status of the attempt they repeated (200: cut).
	RetriesByStatus map[int]int64 `json:"retries_by_status,omitempty"`
}

// MergeProviderRequests returns a and b added up per scenario, sorted by scenario.
func MergeProviderRequests(a, b []ProviderRequests) []ProviderRequests {
	by := map[string]ProviderRequests{}
	for _, list := range [][]ProviderRequests{a, b} {
		for _, p := range list {
			sum := by[p.Scenario]
			sum.Scenario = p.Scenario
			sum.Sessions += p.Sessions
			sum.Requests += p.Requests
			sum.Retries += p.Retries
			sum.RetriesByStatus = addMaps(sum.RetriesByStatus, p.RetriesByStatus)
			by[p.Scenario] = sum
		}
	}
	return slices.SortedFunc(maps.Values(by), func(x, y ProviderRequests) int { return cmp.Compare(x.Scenario, y.Scenario) })
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
