package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestWriteLeakCheck: the console names the gauges compared per process, each leak, and each
// source or gauge not checked with its reason.
func TestWriteLeakCheck(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeLeakCheck(&b, &measure.Summary{
		Leaks: []measure.Leak{
			{Source: "runtime", Name: "nodejs_active_handles_total", Before: 3, After: 203, Delta: 200, Tolerance: 16},
			{Source: "runtime", Name: "process_open_fds", Before: 23, After: 23, Tolerance: 16, OK: true},
			{Source: "generator", Name: "go_goroutines", Before: 5, After: 5, Tolerance: 8, OK: true},
		},
		LeaksNotChecked: []measure.LeakNotChecked{{Source: "mock", Reason: "no metrics: GET http://127.0.0.1:9/metrics: HTTP 404"}},
	})
	want := []string{
		"leak check runtime: 2 gauges (nodejs_active_handles_total, process_open_fds)",
		"leak check generator: 1 gauges (go_goroutines)",
		"LEAK runtime nodejs_active_handles_total: 3 → 203 (tolerance 16)",
		"leak check mock: not checked — no metrics: GET http://127.0.0.1:9/metrics: HTTP 404",
	}
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), strings.Join(want, "\n"))
	}
}
