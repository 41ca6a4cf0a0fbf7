package console

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// TestTally: each ended session counts once for its scenario × dialect, its error outcome as
// an error, its violations one each, and a violation found after the load counts with them.
func TestTally(t *testing.T) {
	t.Parallel()
	tally := NewTally()
	k := measure.Key{Scenario: "plain-answer", Dialect: "sim-chat"}
	tally.SessionEnded(loadgen.SessionEnd{Scenario: k.Scenario, Dialect: k.Dialect, Outcome: measure.OutcomeCompleted,
		Violations: []protocol.Violation{{Rule: "R-a"}, {Rule: "R-b"}}})
	tally.SessionEnded(loadgen.SessionEnd{Scenario: k.Scenario, Dialect: k.Dialect, Outcome: measure.OutcomeTransportError, Err: errors.New("refused")})
	// R-abort, judged from the mock's records after the load: a violation, not a session
	tally.LateViolation(loadgen.SessionEnd{Scenario: k.Scenario, Dialect: k.Dialect, Violations: []protocol.Violation{{Rule: "R-abort"}}})
	if tally.Sessions[k] != 2 || tally.Errors[k] != 1 || tally.Violations[k] != 3 {
		t.Errorf("sessions %d errors %d violations %d, want 2, 1, 3", tally.Sessions[k], tally.Errors[k], tally.Violations[k])
	}
}

// TestProgressLines: off a terminal, progress is a plain line every 5 seconds of the run.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	f, err := os.Create(filepath.Join(t.TempDir(), "progress"))
	if err != nil {
		t.Fatal(err)
	}
	v := NewProgress(f)
	for s := 1; s <= 10; s++ {
		v.Update(loadgen.Progress{Elapsed: time.Duration(s) * time.Second, Active: int64(s), Started: 7, Completed: 5, Draining: s == 10})
	}
	v.Close()
	f.Close()
	out, _ := os.ReadFile(f.Name())
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "[5s] active 5  sessions 5/7") || !strings.HasSuffix(lines[1], "(draining)") {
		t.Errorf("progress lines %q, want one at 5s and one at 10s (draining)", lines)
	}
}
