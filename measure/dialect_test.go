package measure

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
)

// TestDialectMeasures: a count records as itself, a latency in microseconds; measure lists
// merge by name; summary.json keeps them.
func TestDialectMeasures(t *testing.T) {
	t.Parallel()
	h := NewHistograms()
	k := Key{Metric: "children_per_run", Scenario: "s", Dialect: "compose"}
	if err := h.Record(k, MeasureValue(protocol.Measure{Name: "children_per_run", Kind: protocol.MeasureCount, Count: 3})); err != nil {
		t.Fatal(err)
	}
	if got := h.Get(k).Max(); got != 3 {
		t.Errorf("a count of 3 stored as %d", got)
	}
	if got := MeasureValue(protocol.Measure{Kind: protocol.MeasureLatency, Duration: 250 * time.Millisecond}); got != 250*time.Millisecond {
		t.Errorf("latency value %v", got)
	}
	a := []MeasureInfo{{Name: "child_ttfd", Kind: MeasureKindLatency}}
	b := []MeasureInfo{{Name: "approval_rtt", Kind: MeasureKindLatency}, {Name: "child_ttfd", Kind: MeasureKindCount}}
	want := []MeasureInfo{{Name: "approval_rtt", Kind: MeasureKindLatency}, {Name: "child_ttfd", Kind: MeasureKindLatency}}
	if got := MergeMeasureInfos(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	s := Summary{Measures: []MeasureInfo{{Name: "children_per_run", Kind: MeasureKindCount}}}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Measures, s.Measures) {
		t.Errorf("kinds lost in summary.json: %s", raw)
	}
}
