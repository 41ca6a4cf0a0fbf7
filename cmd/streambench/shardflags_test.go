package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLeaksCommand: the baseline step writes a file the verify step reads; verify passes when
// the gauges came back, fails (exit 1) when one grew or the runtime can no longer be read, and
// refuses another runtime's URL.
func TestLeaksCommand(t *testing.T) {
	t.Parallel()
	var open atomic.Int64
	rt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE demo_streams_open gauge\ndemo_streams_open %d\n", open.Load())
	}))
	t.Cleanup(rt.Close)
	file := filepath.Join(t.TempDir(), "baseline.json")
	var out bytes.Buffer
	if err := leaksMain([]string{"baseline", "--runtime-metrics", rt.URL, "--out", file}, &out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "demo_streams_open") {
		t.Fatalf("baseline file: %v %s", err, b)
	}
	verify := []string{"verify", "--baseline", file, "--runtime-metrics", rt.URL, "--leak-grace", "200ms"}
	out.Reset()
	if err := leaksMain(verify, &out); err != nil || !strings.Contains(out.String(), "ok   runtime demo_streams_open") {
		t.Fatalf("clean: %v\n%s", err, out.String())
	}
	open.Store(3)
	out.Reset()
	if err := leaksMain(verify, &out); exitCode(err) != exitFailure || !strings.Contains(out.String(), "LEAK runtime demo_streams_open: 0 → 3") {
		t.Fatalf("leaked: exit %d %v\n%s", exitCode(err), err, out.String())
	}
	// The runtime gone between baseline and verify (it crashed, or restarted elsewhere): not a
	// clean check, which it passed as "not checked".
	open.Store(0)
	rt.Close()
	out.Reset()
	if err := leaksMain(verify, &out); exitCode(err) != exitFailure || !strings.Contains(out.String(), "LOST runtime") ||
		!strings.Contains(err.Error(), "1 of the processes read at the baseline could not be read after the load") {
		t.Fatalf("runtime gone: exit %d %v\n%s", exitCode(err), err, out.String())
	}
	err := leaksMain([]string{"verify", "--baseline", file, "--runtime-metrics", rt.URL + "/other"}, &out)
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "the baseline read "+rt.URL) {
		t.Fatalf("another URL: %v", err)
	}
	if err := leaksMain([]string{"verify", "--runtime-metrics", rt.URL}, &out); exitCode(err) != exitUsage {
		t.Fatalf("no --baseline: %v", err)
	}
	if err := leaksMain([]string{"verify", "--baseline", filepath.Join(t.TempDir(), "none.json"), "--runtime-metrics", rt.URL}, &out); exitCode(err) != exitUsage {
		t.Fatalf("missing baseline file: %v", err)
	}
}
