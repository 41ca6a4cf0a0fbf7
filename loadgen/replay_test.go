package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// historyServer is a sim-chat runtime that keeps a conversation per session id, as a runtime
// with thread history does: the first request of an id gets a stream that breaks two rules
// (a wrong chunk, no terminal), a repeated id an HTTP 400, as a thread that already holds an
// answer would. It records the ids it saw, in order.
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
	// Two rules broken, so two samples replay the session: text off the script (R-converge)
	// and a frame that is not JSON (R-framing).
	_, _ = w.Write([]byte(`data: {"blockId":"b1","chunk":"nope"}` + "\n\n" + "data: {not json\n\n"))
}

func (h *historyServer) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ids)
}

// TestReplaysGetFreshIDs: every violation sample of a session is replayed under an id of its
// own, so a runtime keyed by the id never answers a replay with an earlier replay's history.
func TestReplaysGetFreshIDs(t *testing.T) {
	t.Parallel()
	hs := &historyServer{}
	srv := httptest.NewServer(hs)
	defer srv.Close()
	run, err := Run(context.Background(), Config{
		Target: srv.URL, Mix: stallMix(t, ""), MixName: "history", Rate: 50, Sessions: 1,
		RunID: "hist", Grace: 5 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Samples) < 2 {
		t.Fatalf("samples %+v: want one per broken rule, at least two replays of the session", run.Samples)
	}
	for _, s := range run.Samples {
		if slices.ContainsFunc(s.Frames, func(f string) bool { return strings.Contains(f, "HTTP 400") }) {
			t.Errorf("sample %s replayed into an earlier request's thread: %q", s.Rule, s.Frames)
		}
		if s.Rule == protocol.RTerminal && !strings.Contains(strings.Join(s.Frames, "\n"), "nope") {
			t.Errorf("sample %s frames %q: want the replayed stream", s.Rule, s.Frames)
		}
	}
	ids := hs.seen()
	if len(ids) != 1+len(run.Samples) || ids[0] != "hist-0" || !strings.HasPrefix(ids[1], "hist-0-replay") {
		t.Errorf("ids %q: want the session's, then one per replay, each named after the session", ids)
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			t.Errorf("id %s sent twice (ids %q)", id, ids)
		}
	}
}
