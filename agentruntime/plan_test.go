package agentruntime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// liveCompose is one compose stream read as it arrives, with everything read kept.
type liveCompose struct {
	s    *protocol.Session
	resp *http.Response
	r    *bufio.Reader
	seen *bytes.Buffer
}

// openCompose opens a compose stream of scenario on anthropic-all and returns it unread.
func (e *env) openCompose(t *testing.T, scenario string, seed uint64, session string) *liveCompose {
	t.Helper()
	s := &protocol.Session{ID: session, Target: "anthropic-all", Input: directive(scenario, seed, session)}
	sc, _ := scenarios.Embedded().Get(scenario)
	s.Expected = sc.Render(seed).Expected()
	req, err := compose.NewClient().NewRequest(ctxTimeout(t, 20*time.Second), e.url, s)
	resp := e.send(t, req, err)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	seen := &bytes.Buffer{}
	return &liveCompose{s: s, resp: resp, r: bufio.NewReader(io.TeeReader(resp.Body, seen)), seen: seen}
}

// approve posts an approval for the stream's run and returns the status and body.
func (e *env) approve(t *testing.T, lc *liveCompose, body string) (int, string) {
	t.Helper()
	resp, b := e.post("/agent/anthropic-all/runs/"+lc.resp.Header.Get(compose.RunIDHeader)+"/approval", nil, body)
	var msg struct {
		Error string `json:"error"`
	}
	if resp.StatusCode != http.StatusOK && json.Unmarshal(b, &msg) == nil {
		return resp.StatusCode, msg.Error // the error decoded, so tests can quote it as written
	}
	return resp.StatusCode, string(b)
}

// check runs the compose checker over everything the stream sent.
func (lc *liveCompose) check(t *testing.T) []protocol.Violation {
	t.Helper()
	ch := compose.NewChecker(lc.s)
	if err := replay(ch, lc.seen.Bytes()); err != nil {
		t.Fatal(err)
	}
	return ch.Finish(nil)
}

var proposalIDRe = regexp.MustCompile(`"proposalId":"(proposal_[A-Z2-7]+)"`)

// TestComposeApproval: the approval endpoint refuses what does not answer the pending request
// (400 for a bad body, 409 for another proposal, a stale version or nothing pending) and takes
// the one that does; changes_requested brings plan.feedback_requested and version 2, whose
// approval lets the run go on to its tasks and answer. The checker finds nothing wrong, and the
// finished run is a 404.
func TestComposeApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.1, Options{ToolTimeScale: 0.1})
	lc := e.openCompose(t, "plan-request-changes", 1, "approval-endpoint")
	readUntil(t, lc.r, `"type":"approval.requested"`)
	m := proposalIDRe.FindStringSubmatch(lc.seen.String())
	if m == nil {
		t.Fatalf("no proposalId in %s", lc.seen.String())
	}
	id := m[1]
	body := func(id string, version int, decision, reason string) string {
		b, _ := json.Marshal(compose.ApprovalRequest{ProposalID: id, Version: version, Decision: decision, Reason: reason})
		return string(b)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		says       string
	}{
		// Not JSON at all.
		{"not json", `{"proposalId":`, http.StatusBadRequest, "not valid JSON"},
		// No proposal named.
		{"no proposal", `{"version":1,"decision":"approved"}`, http.StatusBadRequest, `missing "proposalId"`},
		// Version 0 cannot be pending.
		{"version 0", body(id, 0, "approved", ""), http.StatusBadRequest, `"version" 0`},
		// A decision outside the three.
		{"bad decision", body(id, 1, "maybe", ""), http.StatusBadRequest, `"decision" "maybe"`},
		// Another proposal's decision.
		{"other proposal", body("proposal_OTHER", 1, "approved", ""), http.StatusConflict, "not the pending proposal"},
		// A version that is not pending.
		{"stale version", body(id, 2, "approved", ""), http.StatusConflict, "version 2 is not the pending version 1"},
		// The scripted answer: taken.
		{"changes", body(id, 1, "changes_requested", "Add a peer review step"), http.StatusOK, `"accepted":true`},
		// The same answer again: version 1 is no longer pending (nothing is, or already version 2).
		{"twice", body(id, 1, "changes_requested", "Add a peer review step"), http.StatusConflict, "run_"},
	} {
		if status, got := e.approve(t, lc, tc.body); status != tc.status || !strings.Contains(got, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, status, got, tc.status, tc.says)
		}
	}
	readUntil(t, lc.r, `"type":"plan.feedback_requested"`)
	readUntil(t, lc.r, `"type":"approval.requested"`)
	if status, got := e.approve(t, lc, body(id, 2, "approved", "Good with the review")); status != http.StatusOK {
		t.Fatalf("approving version 2: %d %s", status, got)
	}
	if _, err := io.ReadAll(lc.r); err != nil {
		t.Fatal(err)
	}
	out := lc.seen.String()
	for _, want := range []string{`"version":2,"state":"awaiting_approval"`, `"type":"task.completed"`, `"taskId":"review"`, `"type":"done"`, "data: [DONE]"} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %s", want)
		}
	}
	if vs := lc.check(t); len(vs) > 0 {
		t.Errorf("violations: %+v", vs)
	}
	if status, got := e.approve(t, lc, body(id, 2, "approved", "")); status != http.StatusNotFound || !strings.Contains(got, "no open run") {
		t.Errorf("approval after the run: %d %s, want 404", status, got)
	}
}

// TestComposeApprovalOutcomes: a rejection with onReject error ends the run with error, one
// with onReject done lets the agent answer, and an approval nobody decides times out into
// error within its bound; each as the checker expects.
func TestComposeApprovalOutcomes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.1, Options{ToolTimeScale: 0.1})
	for _, tc := range []struct {
		scenario string
		// decision is sent on approval.requested ("" sends none).
		decision, reason string
		want             []string
	}{
		// Rejected, onReject error: the plan tool settles failed and the run errors.
		{"plan-reject", "rejected", "Not during the billing run", []string{`"decision":"rejected"`, `"failed":true`, `"type":"error","error":"plan ended the run: plan proposal_`}},
		// Rejected, onReject done: the model's next turn answers.
		{"plan-reject-answer", "rejected", "Too expensive", []string{`"decision":"rejected"`, `"failed":false`, `"type":"done"`}},
		// Nobody answers: error after the 500ms timeout.
		{"plan-no-decision", "", "", []string{`"type":"error","error":"plan ended the run: approval of proposal_`, "not decided within 500ms"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			lc := e.openCompose(t, tc.scenario, 2, "outcome-"+tc.scenario)
			readUntil(t, lc.r, `"type":"approval.requested"`)
			asked := time.Now()
			if tc.decision != "" {
				id := proposalIDRe.FindStringSubmatch(lc.seen.String())[1]
				b, _ := json.Marshal(compose.ApprovalRequest{ProposalID: id, Version: 1, Decision: tc.decision, Reason: tc.reason})
				if status, got := e.approve(t, lc, string(b)); status != http.StatusOK {
					t.Fatalf("approval: %d %s", status, got)
				}
			}
			if _, err := io.ReadAll(lc.r); err != nil {
				t.Fatal(err)
			}
			if tc.decision == "" {
				if took := time.Since(asked); took < 400*time.Millisecond || took > 5*time.Second {
					t.Errorf("undecided approval ended after %v, want about 500ms", took)
				}
			}
			out := lc.seen.String()
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("stream lacks %s:\n%s", want, out)
				}
			}
			if strings.Contains(out, `"type":"task.`) {
				t.Errorf("a plan that was not approved ran tasks")
			}
			if vs := lc.check(t); len(vs) > 0 {
				t.Errorf("violations: %+v", vs)
			}
		})
	}
}

// TestComposeSideEvents: the scripted conclave operations carry per-key versions that only
// move on (write and delete), actions a status, traces their source and tasks the approved
// proposal's id.
func TestComposeSideEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.1, Options{ToolTimeScale: 0.1})
	lc := e.openCompose(t, "compose-side-events", 3, "side-events")
	readUntil(t, lc.r, `"type":"approval.requested"`)
	id := proposalIDRe.FindStringSubmatch(lc.seen.String())[1]
	b, _ := json.Marshal(compose.ApprovalRequest{ProposalID: id, Version: 1, Decision: "approved", Reason: "Go"})
	if status, got := e.approve(t, lc, string(b)); status != http.StatusOK {
		t.Fatalf("approval: %d %s", status, got)
	}
	if _, err := io.ReadAll(lc.r); err != nil {
		t.Fatal(err)
	}
	var conclave []string
	for _, line := range strings.Split(lc.seen.String(), "\n") {
		if !strings.Contains(line, `"type":"conclave"`) {
			continue
		}
		var c compose.ConclaveEvent
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c); err != nil {
			t.Fatal(err)
		}
		v := "-"
		if c.Version != nil {
			v = string(rune('0' + *c.Version))
		}
		conclave = append(conclave, c.Action+" "+c.Key+" "+v)
	}
	want := []string{"write plan.md 1", "write plan.md 2", "read plan.md 2", "write notes.md 1", "list  -", "delete notes.md 2", "write plan.md 3"}
	if strings.Join(conclave, "|") != strings.Join(want, "|") {
		t.Errorf("conclave operations %q, want %q", conclave, want)
	}
	out := lc.seen.String()
	for _, want := range []string{`"type":"action","action":"goal","source":"runtime","status":"completed"`, `"type":"trace","source":"capability"`, `"planId":"` + id + `","taskId":"checklist"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stream lacks %s", want)
		}
	}
	if vs := lc.check(t); len(vs) > 0 {
		t.Errorf("violations: %+v", vs)
	}
}

// FuzzComposeApproval: an approval body for the one run with a pending approval is answered
// 200 (and delivered) only when it names the pending proposal and version with one of the
// three decisions; 400 when it is not such a JSON object, lacks the proposal, has a version
// below 1 or another decision; 409 for another proposal or version. Errors are JSON.
func FuzzComposeApproval(f *testing.F) {
	rt, err := New(Options{ProviderURL: "http://127.0.0.1:1", Heartbeat: -1})
	if err != nil {
		f.Fatal(err)
	}
	const agent, run, pending = "openai-none", "run_ABCDEFGHIJKLMNOPQRST", "proposal_PENDING"
	gate := &planGate{}
	rt.runs.add(run, &runEntry{agentID: agent, stop: func(error) {}, plan: gate})
	h := rt.Handler()
	for _, seed := range []string{
		`{"proposalId":"proposal_PENDING","version":2,"decision":"approved","reason":"ok"}`,
		`{"proposalId":"proposal_PENDING","version":1,"decision":"approved"}`,
		`{"proposalId":"proposal_PENDING","version":2,"decision":"nope"}`,
		`{"proposalId":"","version":2,"decision":"rejected"}`,
		`{"proposalId":"proposal_PENDING","version":"2","decision":"rejected"}`,
		`{"proposalId":"proposal_PENDING","version":2.5,"decision":"rejected"}`,
		`[]`, `null`, ``, "{\"proposalId\":\"\xff\"}", `{"version":-1}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		decided := gate.open(pending, 2)
		defer gate.close()
		w := serveBounded(t, h, httptest.NewRequest(http.MethodPost, "/agent/"+url.PathEscape(agent)+"/runs/"+run+"/approval", strings.NewReader(body)))
		var req compose.ApprovalRequest
		want := http.StatusOK
		switch {
		case len(bytes.TrimSpace([]byte(body))) == 0 || json.Unmarshal([]byte(body), &req) != nil || !jsonObject(body):
			want = http.StatusBadRequest
		case req.ProposalID == "" || req.Version < 1:
			want = http.StatusBadRequest
		case req.Decision != "approved" && req.Decision != "rejected" && req.Decision != "changes_requested":
			want = http.StatusBadRequest
		case req.ProposalID != pending || req.Version != 2:
			want = http.StatusConflict
		}
		if w.Code != want {
			t.Fatalf("body %q: status %d, want %d: %s", body, w.Code, want, w.Body)
		}
		select {
		case got := <-decided:
			if want != http.StatusOK || got != req {
				t.Fatalf("body %q: delivered %+v with status %d", body, got, w.Code)
			}
		default:
			if want == http.StatusOK {
				t.Fatalf("body %q: 200 but nothing delivered", body)
			}
		}
		if want != http.StatusOK {
			jsonErrorMessage(t, w)
		}
	})
}

// jsonObject reports whether body is valid UTF-8 JSON whose top level is an object (what the
// runtime's body reader accepts).
func jsonObject(body string) bool {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return false
	}
	_, ok := v.(map[string]any)
	return ok && strings.ToValidUTF8(body, "\x00") == body
}
