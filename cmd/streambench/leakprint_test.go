package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestPrintLeakCheck: the console names the gauges compared per process, each leak, and each
// source or gauge not checked with its reason.
func TestPrintLeakCheck(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printLeakCheck(&b, &measure.Summary{
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

// TestParseProviderHeaders: 'Name: value' flags become a header; a value without a name or
// colon is refused naming the flag and the value.
func TestParseProviderHeaders(t *testing.T) {
	t.Parallel()
	h, err := parseProviderHeaders("--provider-header", []string{"x-portkey-provider: openai", "x-portkey-custom-host:http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("X-Portkey-Provider") != "openai" || h.Get("X-Portkey-Custom-Host") != "http://127.0.0.1:1/v1" {
		t.Errorf("parsed %v", h)
	}
	for _, bad := range []string{"no colon", ": value", "two words: v"} {
		if _, err := parseProviderHeaders("--provider-header", []string{bad}); err == nil || !strings.Contains(err.Error(), "--provider-header") || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: error %v, want one naming the flag and the value", bad, err)
		}
	}
}
