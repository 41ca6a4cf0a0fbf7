package loadgen

import (
	"errors"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// both is an output that takes two kinds: session ends and snapshots.
type both struct {
	calls *[]string
	err   error
}

func (b both) SessionEnded(e SessionEnd) { *b.calls = append(*b.calls, "both end "+e.Session) }
func (b both) Snapshot(*measure.Run) error {
	*b.calls = append(*b.calls, "both snapshot")
	return b.err
}

// TestOutputsFanOut: each kind goes to every output that takes it, in the order of
// Config.Outputs; a kind no output takes is nil (the run's fast path); with several
// SnapshotOutputs each is called and the first error counts.
func TestOutputsFanOut(t *testing.T) {
	t.Parallel()
	if o := outputsOf(nil); o.sessionEnd != nil || o.progress != nil || o.latencies != nil || o.records != nil || o.snapshot != nil {
		t.Error("no outputs: a kind is set")
	}
	var calls []string
	first, second := errors.New("first"), errors.New("second")
	o := outputsOf([]Output{
		ProgressFunc(func(Progress) { calls = append(calls, "progress") }),
		both{calls: &calls, err: first},
		SessionEndFunc(func(e SessionEnd) { calls = append(calls, "func end "+e.Session) }),
		SnapshotFunc(func(*measure.Run) error { calls = append(calls, "func snapshot"); return second }),
	})
	if o.latencies != nil {
		t.Error("no LatencyOutput, but latencies are taken")
	}
	o.sessionEnd(SessionEnd{Session: "s1"})
	o.progress(Progress{})
	if err := o.snapshot(&measure.Run{}); err != first {
		t.Errorf("snapshot error %v, want the first one's", err)
	}
	want := "both end s1,func end s1,progress,both snapshot,func snapshot"
	if got := strings.Join(calls, ","); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
}

// TestOutputsChecked: an output that takes nothing, or a nil one, makes the config invalid.
func TestOutputsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outs []Output
		want string
	}{
		{[]Output{ProgressFunc(func(Progress) {}), 42}, "Outputs[1] (int) takes nothing"},
		{[]Output{nil}, "Outputs[0] is nil"},
		{[]Output{LatencyFunc(func(session.Latencies) {})}, ""},
	} {
		err := checkOutputs(tc.outs)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: got %v, want %q", tc.outs, err, tc.want)
		}
	}
}

// LatencyFunc is a function as a LatencyOutput.
type LatencyFunc func(session.Latencies)

func (f LatencyFunc) Latencies(l session.Latencies) { f(l) }
