package scenarios

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestOpen: no directory is the embedded library; a directory that is not there is an error.
func TestOpen(t *testing.T) {
	t.Parallel()
	lib, err := Open("")
	if err != nil || len(lib.Names()) != len(Embedded().Names()) {
		t.Fatalf("Open(\"\") = %v scenarios, %v; want the embedded library", lib, err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Open of a missing directory: no error")
	}
}

// TestWriteJSON: show --json carries the scenario, the seed and its rendering's expectations.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	s, ok := Embedded().Get("tool-chain")
	if !ok {
		t.Fatal("no tool-chain scenario")
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf, 9); err != nil {
		t.Fatal(err)
	}
	var got Shown
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Seed != 9 || got.Scenario.Name != "tool-chain" || len(got.Expected.Turns) != len(s.Turns) || got.EstimatedDurationMillis <= 0 {
		t.Errorf("WriteJSON = %+v", got)
	}
}
