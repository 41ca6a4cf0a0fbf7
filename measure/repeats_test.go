package measure

import (
	"os"
	"testing"
)

// TestRepeats: each figure's median (the middle value, or the mean of the two middle ones),
// range and spread; a figure some run lacks is left out; the file reads back, and one whose
// figures do not have a value a run is refused.
func TestRepeats(t *testing.T) {
	t.Parallel()
	run := func(id string, ttftP50 int64, tokensPerS float64) *Summary {
		s := &Summary{RunID: id, Tokens: &TokenSummary{OutputTokensPerSecond: tokensPerS}}
		if ttftP50 > 0 {
			s.Overall = []MetricSummary{{Key: Key{Metric: TimeToFirstToken}, Count: 10, P50: ttftP50, P99: 2 * ttftP50}}
		}
		return s
	}
	r := NewRepeats([]*Summary{run("a", 100_000, 90), run("b", 120_000, 110), run("c", 110_000, 100), run("d", 130_000, 100)})
	byName := map[string]Spread{}
	for _, f := range r.Figures {
		byName[f.Figure] = f
	}
	if f := byName["ttft p50"]; f.Median != 115 || f.Min != 100 || f.Max != 130 || f.Spread != 30.0/115 || f.Unit != "ms" {
		t.Errorf("ttft p50: %+v, want median 115 (even count), 100 – 130", f)
	}
	if f := byName["tokens/s"]; f.Median != 100 || f.Spread != 0.2 || len(f.Values) != 4 {
		t.Errorf("tokens/s: %+v", f)
	}
	if _, ok := byName["itl p50"]; ok {
		t.Error("itl p50 listed, but no run measured it")
	}
	partial := NewRepeats([]*Summary{run("a", 100_000, 90), run("b", 0, 90)})
	for _, f := range partial.Figures {
		if f.Figure == "ttft p50" {
			t.Errorf("ttft p50 listed though run b lacks it: %+v", f)
		}
	}
	dir := t.TempDir()
	if err := WriteRepeats(dir, r); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRepeats(dir)
	if err != nil || len(back.Figures) != len(r.Figures) || back.Runs[3] != "d" {
		t.Fatalf("read back: %+v, %v", back, err)
	}
	os.WriteFile(dir+"/"+RepeatsFile, []byte(`{"runs":["a","b"],"figures":[{"figure":"ttft p50","values":[1]}]}`), 0o644)
	if _, err := ReadRepeats(dir); err == nil {
		t.Error("a figure with 1 value for 2 runs was read")
	}
}
