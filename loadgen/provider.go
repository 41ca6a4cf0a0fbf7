package loadgen

import (
	"strconv"
	"strings"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockrecords"
)

// providerRequests counts, per scenario, the provider requests the mock recorded for this
// shard's sessions, and the retries among them (a turn's requests after the first) by the
// status of the attempt repeated. Records are oldest first.
func providerRequests(recs []mockrecords.Record, runID string, shard Shard) []measure.ProviderRequests {
	type turnKey struct {
		session, child string
		turn           int
	}
	last := map[turnKey]int{} // the status of the turn's latest attempt
	sessions := map[string]bool{}
	by := map[string]*measure.ProviderRequests{}
	for _, rec := range recs {
		if !runSession(rec.Session, runID, shard) || rec.Scenario == "" {
			continue
		}
		p, ok := by[rec.Scenario]
		if !ok {
			p = &measure.ProviderRequests{Scenario: rec.Scenario}
			by[rec.Scenario] = p
		}
		p.Requests++
		if !sessions[rec.Session] {
			sessions[rec.Session] = true
			p.Sessions++
		}
		k := turnKey{rec.Session, rec.Child, rec.Turn}
		if status, again := last[k]; again {
			p.Retries++
			if p.RetriesByStatus == nil {
				p.RetriesByStatus = map[int]int64{}
			}
			p.RetriesByStatus[status]++
		}
		last[k] = rec.Status
	}
	list := make([]measure.ProviderRequests, 0, len(by))
	for _, p := range by {
		list = append(list, *p)
	}
	return measure.MergeProviderRequests(list, nil)
}

// runSession reports whether session id is one of this run's and shard's.
func runSession(id, runID string, shard Shard) bool {
	rest, ok := strings.CutPrefix(id, runID+"-")
	if !ok {
		return false
	}
	index, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return false // a suffix, or another run's id that shares the prefix
	}
	return !shard.Sharded() || index%uint64(shard.Count) == uint64(shard.Index)
}

// retriesWarning says which provider requests the target retried, invisibly to its client.
func retriesWarning(list []measure.ProviderRequests) string {
	total := measure.TotalProviderRequests(list)
	if total.Retries == 0 {
		return ""
	}
	var scen []string
	for _, p := range list {
		if p.Retries > 0 {
			scen = append(scen, p.Scenario)
		}
	}
	return "the target retried " + strconv.FormatInt(total.Retries, 10) + " of its " + strconv.FormatInt(total.Requests, 10) +
		" provider requests (after HTTP " + measure.RetriesText(total.RetriesByStatus) + "; scenarios " + strings.Join(scen, ", ") +
		"): its client saw only the delay (summary.json provider_requests)"
}
