package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// myScenario writes a scenario of its own (a name the library lacks) and returns its path.
func myScenario(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(p, []byte("name: my-answer\ndescription: a user's own scenario\ntiming: {ttft: 20ms, itl: 2ms}\nturns:\n  - thinking: {tokens: 6}\n    text: {tokens: 12}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunScenarioFile: `run --scenario FILE` plays the file's scenario alone, through the mock
// it starts, in process and as a child process (which is handed the file), and passes.
func TestRunScenarioFile(t *testing.T) {
	t.Parallel()
	file := myScenario(t)
	for _, inProcess := range []string{"--in-process", "--in-process=false"} {
		code, output := runMain(t, "run", inProcess, "--scenario", file, "--dialect", "sim-chat", "--clients", "2", "--sessions", "6",
			"--out", "-", "--no-leak-check")
		if code != 0 || !strings.Contains(output, "verdict: PASS") {
			t.Fatalf("run %s --scenario: exit %d:\n%s", inProcess, code, output)
		}
		if !strings.Contains(output, "my-answer") || strings.Contains(output, "plain-answer") {
			t.Errorf("run %s: want my-answer played, and no scenario of the default mix:\n%s", inProcess, output)
		}
	}
}

// TestLoadScenarioFileAgainstAMock: `load --scenario FILE` against a mock given the same file
// passes; against a mock that was not given it, the sessions fail with the mock's "unknown
// scenario" error, which the run quotes; `mock --scenario` with a bad file names the file and
// the field, exit 104.
func TestLoadScenarioFileAgainstAMock(t *testing.T) {
	t.Parallel()
	file := myScenario(t)
	lib, _, err := scenarios.Embedded().WithFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		lib      *scenarios.Library
		wantCode int
		want     string
	}{
		// the mock was given the file (mock --scenario FILE)
		{"given", lib, 0, "verdict: PASS"},
		// the mock knows only its library
		{"not given", scenarios.Embedded(), exitFailure, `unknown scenario \"my-answer\"`},
	} {
		mock, err := mockprovider.New(mockprovider.Options{Library: tc.lib, TimeScale: 1})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mock)
		code, output := runMain(t, "load", "--target", srv.URL, "--mock", srv.URL, "--dialect", "openai-chat", "--scenario", file,
			"--clients", "2", "--sessions", "4", "--runtime-metrics", "-", "--out", "-", "--no-leak-check", "--replay-budget", "0")
		srv.Close()
		if code != tc.wantCode || !strings.Contains(output, tc.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", tc.name, code, tc.wantCode, tc.want, output)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ntiming: {ttft: 20ms, itl: 2ms}\nturns:\n  - text: {tokenz: 3}\n"), 0o600)
	code, output := runMain(t, "mock", "--addr", "127.0.0.1:0", "--scenario", bad)
	if code != exitUsage || !strings.Contains(output, bad+":4") || !strings.Contains(output, "tokenz") {
		t.Errorf("mock --scenario with a bad file: exit %d, want %d naming %s:4 and tokenz:\n%s", code, exitUsage, bad, output)
	}
}
