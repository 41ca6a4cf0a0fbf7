package measure

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestProviderRequestsMerge: shards' provider requests add up per scenario, sorted, retries by
// status too; a run without them merges to none; the JSON names the fields summary.json
// documents.
func TestProviderRequestsMerge(t *testing.T) {
	t.Parallel()
	a := []ProviderRequests{{Scenario: "provider-429", Sessions: 1, Requests: 3, Retries: 2, RetriesByStatus: map[int]int64{429: 2}}}
	b := []ProviderRequests{
		{Scenario: "plain-answer", Sessions: 2, Requests: 2},
		{Scenario: "provider-429", Sessions: 2, Requests: 6, Retries: 4, RetriesByStatus: map[int]int64{429: 3, 503: 1}},
	}
	got := MergeProviderRequests(a, b)
	if len(got) != 2 || got[0].Scenario != "plain-answer" || got[1].Requests != 9 || got[1].Retries != 6 || got[1].Sessions != 3 ||
		got[1].RetriesByStatus[429] != 5 || got[1].RetriesByStatus[503] != 1 || got[0].RetriesByStatus != nil {
		t.Errorf("merged %+v", got)
	}
	if a[0].RetriesByStatus[429] != 2 {
		t.Error("the merge changed its input")
	}
	if MergeProviderRequests(nil, nil) != nil {
		t.Error("no figures merged to some")
	}
	total := TotalProviderRequests(got)
	if total.Scenario != "" || total.Requests != 11 || total.Sessions != 5 || RetriesText(total.RetriesByStatus) != "429 ×5, 503 ×1" {
		t.Errorf("total %+v (%s)", total, RetriesText(total.RetriesByStatus))
	}
	// Shards merge their figures.
	shards, _ := shardRuns(t, 2)
	shards[0].Run.Summary.ProviderRequests, shards[1].Run.Summary.ProviderRequests = a, b
	run, err := Merge(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Summary.ProviderRequests) != 2 || run.Summary.ProviderRequests[1].Requests != 9 {
		t.Errorf("merged run: %+v", run.Summary.ProviderRequests)
	}
	j, _ := json.Marshal(Summary{ProviderRequests: a})
	if !strings.Contains(string(j), `"provider_requests":[{"scenario":"provider-429","sessions":1,"requests":3,"retries":2,"retries_by_status":{"429":2}}]`) {
		t.Errorf("JSON %s", j)
	}
}
