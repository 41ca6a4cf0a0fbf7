package loadgen

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
)

// historyServer is a sim-chat runtime that keeps a conversation per session id, as a runtime
// with thread history does: the first request of an id gets a stream that breaks two rules
// (a wrong chunk, a frame that is not JSON, no terminal), a repeated id an HTTP 400, as a
// thread that already holds an answer would. It records the ids it saw, in order.
type historyServer struct {
	mu  sync.Mutex
	ids []string
}

func (h *historyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Input string `json:"input"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	d, ok, err := scenarios.ParseDirective(body.Input)
	if !ok || err != nil || d.Session == "" {
		http.Error(w, "no session in "+body.Input, http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	seen := slices.Contains(h.ids, d.Session)
	h.ids = append(h.ids, d.Session)
	h.mu.Unlock()
	if seen {
		http.Error(w, "thread "+d.Session+" already holds an assistant message", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Sim-Stream-Protocol", "agent-events-v1")
	// Rules broken: text off the script (R-converge) and a frame that is not JSON (R-framing).
	_, _ = w.Write([]byte(`data: {"blockId":"b1","chunk":"nope"}` + "\n\n" + "data: {not json\n\n"))
}

func (h *historyServer) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

// TestSamplesFromTheRun: a session that breaks rules leaves the frames its stream carried as
// each rule's sample, and nothing is sent to the target again: a runtime keyed by the session
// id sees each id once (a second request of an id would be answered from the thread's
// history, HTTP 400 here).
func TestSamplesFromTheRun(t *testing.T) {
	t.Parallel()
	hs := &historyServer{}
	srv := httptest.NewServer(hs)
	defer srv.Close()
	var mu sync.Mutex
	var records []measure.Record
	run := runLoad(t, Config{
		Target: srv.URL, Mix: stallMix(t, ""), MixName: "history", Rate: 50, Sessions: 3,
		RunID: "hist", Grace: 5 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-",
		Outputs: []Output{recordsFunc(func(r *measure.Record) {
			mu.Lock()
			records = append(records, *r)
			mu.Unlock()
		})},
	})
	if len(run.Samples) < 2 {
		t.Fatalf("samples %+v: want one per broken rule", run.Samples)
	}
	for _, s := range run.Samples {
		frames := strings.Join(s.Frames, "\n")
		if !strings.Contains(frames, `"chunk":"nope"`) || !strings.Contains(frames, "data: {not json") || strings.Contains(frames, "HTTP 400") {
			t.Errorf("sample %s frames %q: want the run's own stream, both frames", s.Rule, s.Frames)
		}
	}
	// Each session's record names the rules its samples show.
	var sampled []string
	for _, s := range run.Samples {
		sampled = append(sampled, string(s.Rule))
	}
	slices.Sort(sampled)
	sampled = slices.Compact(sampled)
	mu.Lock()
	defer mu.Unlock()
	if len(records) != 3 {
		t.Errorf("%d records, want one per session: %+v", len(records), records)
	}
	for _, r := range records {
		if !slices.Equal(r.Rules, sampled) || r.Outcome == "" || r.Start.IsZero() {
			t.Errorf("record %+v: want the rules %v and an outcome", r, sampled)
		}
	}
	ids := hs.seen()
	slices.Sort(ids)
	if want := []string{"hist-0", "hist-1", "hist-2"}; !slices.Equal(ids, want) {
		t.Errorf("the target saw ids %q, want the run's sessions once each: %q", ids, want)
	}
}

// recordsFunc is a function as a RecordOutput.
type recordsFunc func(*measure.Record)

func (f recordsFunc) Record(r *measure.Record) { f(r) }
