package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
)

// inBandErrors is each client dialect's error frame: HTTP 200, a valid event stream, and one
// error where the answer should be (what a gateway sends when its upstream fails).
var inBandErrors = map[string]string{
	"sim-chat":           "data: {\"event\":\"error\",\"error\":\"upstream provider failed\"}\n\ndata: \"[DONE]\"\n\n",
	"sim-canvas":         "data: {\"type\":\"execution:error\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"executionId\":\"x\",\"workflowId\":\"w\",\"data\":{\"error\":\"upstream provider failed\"}}\n\ndata: [DONE]\n\n",
	"compose":            "data: {\"type\":\"error\",\"error\":\"upstream provider failed\"}\n\n",
	"ai-sdk":             "data: {\"type\":\"start\"}\n\ndata: {\"type\":\"error\",\"errorText\":\"upstream provider failed\"}\n\ndata: [DONE]\n\n",
	"openai-chat":        "data: {\"error\":{\"message\":\"upstream provider failed\",\"type\":\"server_error\"}}\n\ndata: [DONE]\n\n",
	"anthropic-messages": "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"upstream provider failed\"}}\n\n",
	"ag-ui": "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t\",\"runId\":\"r\"}\n\n" +
		"data: {\"type\":\"RUN_ERROR\",\"message\":\"upstream provider failed\"}\n\n",
	"openai-responses": "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"server_error\",\"message\":\"upstream provider failed\",\"param\":null}\n\n" +
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"upstream provider failed\"}}}\n\ndata: [DONE]\n\n",
}

// brokenTarget answers every request the way one broken target does.
type brokenTarget struct {
	name    string
	outcome measure.Outcome // every session's outcome
	handler func(dialect string) http.Handler
}

var brokenTargets = []brokenTarget{
	// a gateway whose upstream is down: 200 and one in-band error, every time
	{"in-band error", measure.OutcomeInBandError, func(dialect string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			simChatStream(w)
			w.Header().Set("x-vercel-ai-ui-message-stream", "v1")
			_, _ = w.Write([]byte(inBandErrors[dialect]))
		})
	}},
	// a wrong route: 404 for everything, which no scenario scripts
	{"404", measure.OutcomeHTTPError, func(string) http.Handler { return http.NotFoundHandler() }},
	// a stream that ends before anything: 200, the right type, an empty body
	{"empty stream", measure.OutcomeTruncated, func(string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			simChatStream(w)
			w.WriteHeader(http.StatusOK)
		})
	}},
}

// TestBrokenTargetsFailLoadAndGate is the proof that nothing broken passes: for every client
// dialect, with and without ground truth, a target that is broken one way makes `load` exit 1
// with every session of that outcome (none ok, no goodput), and `gate` on the saved run, with
// no flags, exit 99. The clean side: TestGateCatchesRuntimeFaults ("clean, no flags": every
// dialect of the default mix against the reference stack passes the run and the gate).
func TestBrokenTargetsFailLoadAndGate(t *testing.T) {
	t.Parallel()
	for dialect := range inBandErrors {
		for _, b := range brokenTargets {
			for _, noTruth := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/no-ground-truth=%v", dialect, b.name, noTruth)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					srv := serveTest(t, b.handler(dialect).ServeHTTP)
					dir := t.TempDir()
					args := []string{"--target", srv.URL, "--dialect", dialect, "--mix", writePlainMix(t, dir, dialect),
						"--rate", "50", "--sessions", "4", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "broken"}
					if noTruth {
						args = append(args, "--no-ground-truth")
					}
					if b.name == "404" {
						// The preflight stops a wrong route before the load (TestDeadTargetFailsFast);
						// here the run itself must classify it.
						args = append(args, "--no-preflight")
					}
					err := runLoad(args)
					if code := exitCode(err); code != exitFailure {
						t.Fatalf("load: exit %d (%v), want %d", code, err, exitFailure)
					}
					run := readRun(t, filepath.Join(dir, "broken"))
					c := run.Summary.Counters
					if c.Outcome(b.outcome) != 4 || c.SessionsOK != 0 || c.GoodputSessions != 0 {
						t.Errorf("outcomes %v, ok %d, goodput %d: want 4 %s, none ok, no goodput (first errors %q)",
							c.Outcomes, c.SessionsOK, c.GoodputSessions, b.outcome, run.Summary.Judging.FirstErrors)
					}
					var out bytes.Buffer
					err = gateMain([]string{filepath.Join(dir, "broken")}, &out)
					if code := exitCode(err); code != exitThreshold || !strings.Contains(out.String(), string(b.outcome)+"×4") {
						t.Errorf("gate (no flags): exit %d, want %d naming %s×4:\n%s", code, exitThreshold, b.outcome, out.String())
					}
				})
			}
		}
	}
}

// writePlainMix writes a mix of the plain-answer scenario alone on dialect (no scripted abort
// or error: every session is the target's to complete) and returns its path.
func writePlainMix(t *testing.T, dir, dialect string) string {
	t.Helper()
	path := filepath.Join(dir, "mix.yaml")
	mix := fmt.Sprintf("name: plain\nseed: 3\nscenarios: {plain-answer: 1}\nprofiles:\n  - {name: p, dialect: %s, weight: 1, targets: [{slug: s}]}\n", dialect)
	if err := os.WriteFile(path, []byte(mix), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeOptedInMix writes dir/mix.yaml: mix name plays plain-answer as opted-in sim-chat clients of the slugs.
func writeOptedInMix(t *testing.T, dir, name string, slugs ...string) string {
	t.Helper()
	targets := make([]string, len(slugs))
	for i, s := range slugs {
		targets[i] = "{slug: " + s + "}"
	}
	path := filepath.Join(dir, "mix.yaml")
	mix := "name: " + name + "\nseed: 3\nscenarios: {plain-answer: 1}\nprofiles:\n" +
		"  - {name: opted-in, dialect: sim-chat, options: {optedIn: true}, weight: 1, targets: [" +
		strings.Join(targets, ", ") + "]}\n"
	if err := os.WriteFile(path, []byte(mix), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
