package agentruntime

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      []string
		want    Faults
		wantErr string
	}{
		// No switch is a correct runtime.
		{"none", nil, Faults{}, ""},
		// Switches combine.
		{"two", []string{"no-reset", "missing-done"}, Faults{NoReset: true, MissingDone: true}, ""},
		// The only valued switch parses a Go duration.
		{"slow", []string{"slow-first-chunk=250ms"}, Faults{SlowFirstChunk: 250 * time.Millisecond}, ""},
		// An unknown name lists the valid ones.
		{"unknown", []string{"no-resets"}, Faults{}, "unknown fault \"no-resets\" (valid: no-reset, reset-in-final"},
		// A valued switch without a value says what it needs.
		{"slow without value", []string{"slow-first-chunk"}, Faults{}, "needs a positive duration"},
		// A flag switch given a value is a mistake, not silently accepted.
		{"flag with value", []string{"no-cancel=1"}, Faults{}, "takes no value"},
	} {
		got, err := ParseFaults(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got err %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestFaultNamesRoundTrip(t *testing.T) {
	t.Parallel()
	var all []string
	for _, s := range FaultSwitches() {
		name := s.Name
		if s.field == nil {
			name += "=1.5s"
		}
		all = append(all, name)
		f, err := ParseFaults([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Names(); !slices.Equal(got, []string{name}) {
			t.Errorf("%s: Names() = %v", name, got)
		}
		if !strings.Contains(FaultHelp(), s.Name) {
			t.Errorf("FaultHelp lacks %s", s.Name)
		}
	}
	f, err := ParseFaults(all)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); !slices.Equal(got, all) {
		t.Errorf("all: Names() = %v, want %v", got, all)
	}
}
