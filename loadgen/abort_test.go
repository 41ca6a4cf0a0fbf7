package loadgen

import (
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/mockrecords"
)

func TestJudgeCancel(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	abort := session.Abort{Session: "s", At: t0}
	const tol = 2 * time.Second
	cases := []struct {
		name        string
		recs        []mockrecords.Record
		now         time.Time
		wantLatency time.Duration
		wantViol    string // substring; "" means none
	}{
		// The in-flight stream saw the client leave 40 ms after the abort.
		{"cancelled", []mockrecords.Record{{Start: *at(-500), End: *at(40), ClientGone: *at(40), Outcome: "client-cancelled"}}, *at(5000), 40 * time.Millisecond, ""},
		// A stream that finished before the abort has nothing to cancel.
		{"finished before", []mockrecords.Record{{Start: *at(-900), End: *at(-100), Outcome: "completed"}}, *at(5000), 0, ""},
		// A stream that finished on its own 30 ms after the abort raced it: fine.
		{"raced", []mockrecords.Record{{Start: *at(-900), End: *at(30), Outcome: "completed"}}, *at(5000), 0, ""},
		// A stream that ran 5 s past the abort was never cancelled.
		{"ran on", []mockrecords.Record{{Start: *at(-900), End: *at(5000), Outcome: "completed"}}, *at(6000), 0, "ran on 5s"},
		// Seen too late.
		{"late cancel", []mockrecords.Record{{Start: *at(-900), End: *at(3000), ClientGone: *at(3000)}}, *at(6000), 0, "after the abort"},
		// Still open long after.
		{"still open", []mockrecords.Record{{Start: *at(-900)}}, *at(6000), 0, "still open"},
		// Still open, but the tolerance has not passed yet at fetch time.
		{"open within tolerance", []mockrecords.Record{{Start: *at(-900)}}, *at(1000), 0, ""},
		// The runtime went on to the next turn for a client that left.
		{"next turn after abort", []mockrecords.Record{{Start: *at(-900), End: *at(-10), Outcome: "completed"}, {Turn: 1, Start: *at(2500), End: *at(2600)}}, *at(6000), 0, "turn 1 started"},
	}
	for _, c := range cases {
		f := judgeCancel(abort, c.recs, tol, c.now)
		if f.latency != c.wantLatency {
			t.Errorf("%s: latency %v, want %v", c.name, f.latency, c.wantLatency)
		}
		if (c.wantViol == "") != (f.violation == "") || !strings.Contains(f.violation, c.wantViol) {
			t.Errorf("%s: violation %q, want one containing %q", c.name, f.violation, c.wantViol)
		}
	}
}
