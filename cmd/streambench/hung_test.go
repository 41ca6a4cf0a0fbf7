package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/scenarios"
)

// stallingTarget is a sim-chat runtime that streams the first half of the answer and then
// never sends a terminal, until the client leaves.
func stallingTarget(t *testing.T) *httptest.Server {
	t.Helper()
	lib := scenarios.Embedded()
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		d, ok, err := scenarios.ParseDirective(body.Input)
		sc, known := lib.Get(d.Scenario)
		if !ok || err != nil || !known {
			http.Error(w, "bad directive in "+body.Input, http.StatusBadRequest)
			return
		}
		final := sc.Render(d.Seed).Expected().FinalText()
		chunk, _ := json.Marshal(final[:len(final)/2])
		simChatStream(w)
		_, _ = w.Write([]byte(`data: {"blockId":"b1","chunk":` + string(chunk) + "}\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return srv
}

// TestStalledRunFailsTheGate is the acceptance of unfinished streams end to end: `load`
// against a target that goes silent without a terminal fails its run, shows the sessions as
// stalled (an error outcome, not a violation), and `gate` on the saved run exits 99 on the
// default errors==0, even with R-terminal allowed and a threshold that says nothing about it;
// with the grace period shorter than the idle timeout the sessions are cut, and fail alike.
func TestStalledRunFailsTheGate(t *testing.T) {
	t.Parallel()
	srv := stallingTarget(t)
	dir := t.TempDir()
	mix := writeOptedInMix(t, dir, "stall", "stall")
	for _, tc := range []struct {
		name    string
		limits  []string
		outcome measure.Outcome
	}{
		// silent for the idle timeout, long before the grace period ends
		{"stalled", []string{"--idle-timeout", "300ms", "--grace", "20s"}, measure.OutcomeStalled},
		// the grace period ends first: cut by the run's end
		{"cut", []string{"--idle-timeout", "20s", "--grace", "300ms"}, measure.OutcomeCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := runLoad(append([]string{"--target", srv.URL, "--mix", mix, "--rate", "20", "--sessions", "2",
				"--no-leak-check", "--quiet", "--out", dir, "--run-id", tc.name}, tc.limits...))
			if code := exitCode(err); code != exitFailure || !strings.Contains(err.Error(), string(tc.outcome)+"×2") {
				t.Fatalf("load: exit %d (%v), want %d and %s×2 named", code, err, exitFailure, tc.outcome)
			}
			run := readRun(t, filepath.Join(dir, tc.name))
			var table bytes.Buffer
			if err := report.WriteSummary(&table, run, report.NewSessionTally()); err != nil {
				t.Fatal(err)
			}
			if c := run.Summary.Counters; c.Outcome(tc.outcome) != 2 || c.SessionsFailed != 2 || run.Summary.TotalViolations() != 0 ||
				!strings.Contains(table.String(), string(tc.outcome)+" 2 ERROR") {
				t.Errorf("counters %+v, violations %v: want 2 %s among 2 failed, no violation; summary:\n%s", c, run.Summary.Violations, tc.outcome, table.String())
			}
			for _, g := range []struct {
				name string
				args []string
			}{
				// the defaults
				{"defaults", nil},
				// a latency threshold alone, and R-terminal allowed: errors==0 still applies
				{"allowed R-terminal", []string{"--threshold", "duration.p99<1h", "--allow", "R-terminal"}},
			} {
				var out bytes.Buffer
				err := gateMain(append([]string{filepath.Join(dir, tc.name)}, g.args...), &out)
				if code := exitCode(err); code != exitThreshold || !strings.Contains(out.String(), "errors==0") || !strings.Contains(out.String(), string(tc.outcome)+"×2") {
					t.Errorf("gate %s: exit %d, want %d naming errors==0 and %s×2:\n%s", g.name, code, exitThreshold, tc.outcome, out.String())
				}
			}
		})
	}
}

// TestGateAllow: a run whose only findings are R-abort passes the gate with --allow R-abort,
// showing them as allowed, and fails it (exit 99) without.
func TestGateAllow(t *testing.T) {
	t.Parallel()
	run := savedRun(t, "aborts", 0, map[protocol.Rule]int64{protocol.RAbort: 12})
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		// the known finding declared: pass, and the count shown as allowed
		{"allowed", []string{run, "--allow", "R-abort"}, exitOK, []string{"gate: PASS", "allowed: R-abort×12", "allow R-abort"}},
		// the same in Markdown, where the comparison keeps its '<'
		{"markdown", []string{run, "--allow", "R-abort", "--markdown", "--threshold", "errors<1%"}, exitOK, []string{"Allowed (known findings): R-abort×12", "| allowed |", "| errors<1% |"}},
		// the same run without it
		{"not allowed", []string{run}, exitThreshold, []string{"violations==0"}},
		// a misspelt rule is bad input naming it
		{"typo", []string{run, "--allow", "R-abrot"}, exitUsage, []string{`unknown rule "R-abrot"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, text := runGateText(tc.args)
			if got != tc.wantCode {
				t.Errorf("exit %d, want %d:\n%s", got, tc.wantCode, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

// TestLoadAllowFlag: load --allow takes rule IDs and rejects anything else by name, before
// any session starts.
func TestLoadAllowFlag(t *testing.T) {
	t.Parallel()
	err := runLoad([]string{"--target", "http://127.0.0.1:1", "--sessions", "1", "--allow", "R-abrot"})
	if code := exitCode(err); code != exitUsage || !strings.Contains(err.Error(), `--allow: unknown rule "R-abrot"`) {
		t.Errorf("load --allow R-abrot: exit %d (%v), want %d naming the rule", code, err, exitUsage)
	}
	fs := newFlagSet("load", "")
	w := workload.Add(fs)
	if err := parseFlags(fs, []string{"--allow", "R-abort", "--allow", "R-terminal"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config(w)
	if err != nil || len(cfg.Allow) != 2 || cfg.Allow[0] != protocol.RAbort || cfg.Allow[1] != protocol.RTerminal {
		t.Errorf("config from --allow R-abort --allow R-terminal: allow %v, %v", cfg.Allow, err)
	}
}

// serveTest serves h until the test ends.
func serveTest(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// simChatStream sets the headers of an event stream that answers an opted-in sim-chat client.
func simChatStream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Sim-Stream-Protocol", "agent-events-v1")
}
