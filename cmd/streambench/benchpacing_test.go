package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBenchPacingSmall runs the pacing measurement small: the mock and the naive server each in
// a child process (this test binary as `mock` and `bench naive-server`), both measured by the
// same client, the ratios with their targets, both servers' CPU profiles, then the self-test.
func TestBenchPacingSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rep := benchReport(t, "pacing", "--streams", "20", "--duration", "500ms", "--profile", dir)
	noFailures(t, rep)
	for _, server := range []string{"mock", "naive"} {
		for _, name := range []string{"server CPU per token", "server peak RSS", "client CPU per token"} {
			if f := figure(t, rep, server+": "+name); f.Value <= 0 {
				t.Errorf("%s: %s = %v %s, want a measurement", server, name, f.Value, f.Unit)
			}
		}
		for _, name := range []string{"TTFT error p99", "gap error p99", "end of stream late by p50"} {
			figure(t, rep, server+": "+name)
		}
	}
	for _, name := range []string{"mock ÷ naive: server CPU per token", "mock ÷ naive: gap error p99", "mock ÷ naive: TTFT error p99", "mock: end of stream late by p50"} {
		if f := figure(t, rep, name); f.Target == "" || f.Met == nil {
			t.Errorf("%s has no target: %+v", name, f)
		}
	}
	if f := figure(t, rep, "self-test: streams completed"); f.Value != 20 {
		t.Errorf("self-test: %v streams completed, want 20", f.Value)
	}
	for _, file := range []string{"mock-cpu.pprof", "naive-cpu.pprof"} {
		if st, err := os.Stat(filepath.Join(dir, file)); err != nil || st.Size() == 0 {
			t.Errorf("CPU profile %s: %v", file, err)
		}
	}
}
