package agentruntime

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
)

// TestComposeStop: a stop request ends the run with stopped (then receipt and [DONE]); during
// the answer the provider stream is cancelled, during a tool the tool settles cancelled and
// its tool_end still closes the lifecycle. The compose checker, told the client stopped,
// finds nothing wrong.
func TestComposeStop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, scenario string
		// marker is the frame after which the client sends the stop request.
		marker string
		// want must appear in the stream after the stop.
		want string
	}{
		// Mid-answer: the provider stream is cancelled.
		{"mid-answer", "stop-mid-answer", `"choices"`, `"type":"stopped","reason":"user_stop"`},
		// During a tool: the tool settles cancelled before the stopped terminal.
		{"during-tool", "abort-during-tool", `"type":"tool_start"`, `"failed":true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Real-time pacing and tools, so the run is still going when the stop arrives.
			e := newEnv(t, 1, Options{ToolTimeScale: 1})
			session := "stop-" + tc.name
			lc := e.openCompose(t, tc.scenario, 1, session)
			if lc.resp.Header.Get(compose.RunIDHeader) == "" {
				t.Fatalf("no %s header", compose.RunIDHeader)
			}
			readUntil(t, lc.r, tc.marker)
			d := compose.NewClient()
			stopReq, err := d.NewStopRequest(ctxTimeout(t, 5*time.Second), e.url, lc.s, lc.resp)
			if err != nil {
				t.Fatal(err)
			}
			stopResp, stopBody := e.do(stopReq)
			if stopResp.StatusCode != http.StatusOK || !strings.Contains(stopBody, `"stopped":true`) {
				t.Fatalf("stop: %d %s", stopResp.StatusCode, stopBody)
			}
			if _, err := io.ReadAll(lc.r); err != nil {
				t.Fatal(err)
			}
			body := lc.seen.String()
			for _, want := range []string{tc.want, `"type":"stopped"`, "event: receipt", "data: [DONE]"} {
				if !strings.Contains(body, want) {
					t.Errorf("stream lacks %s:\n%s", want, body)
				}
			}
			if strings.Contains(body, `"type":"done"`) {
				t.Errorf("a stopped run also sent done")
			}
			ch := d.NewChecker(lc.s)
			ch.(protocol.StopObserver).StopSent()
			if err := replay(ch, []byte(body)); err != nil {
				t.Fatal(err)
			}
			if vs := ch.Finish(nil); len(vs) > 0 {
				t.Errorf("violations: %+v", vs)
			}
			// The run is gone from the registry: stopping it again is a 404.
			again, _ := d.NewStopRequest(ctxTimeout(t, 5*time.Second), e.url, lc.s, lc.resp)
			againResp, _ := e.do(again)
			if againResp.StatusCode != http.StatusNotFound {
				t.Errorf("second stop: %d, want 404", againResp.StatusCode)
			}
			m := e.rt.metrics.registry
			eventually(t, 5*time.Second, "nothing left running", func() bool {
				return gauge(t, m, MetricProviderStreams) == 0 && gauge(t, m, MetricToolsRunning) == 0 && gauge(t, m, MetricClientStreamsOpen) == 0
			})
			if want := map[string]float64{"mid-answer": 0, "during-tool": 1}[tc.name]; gauge(t, m, MetricToolsCancelled) != want {
				t.Errorf("tools cancelled = %v, want %v", gauge(t, m, MetricToolsCancelled), want)
			}
			if recs := e.mock.Sessions(session); tc.name == "mid-answer" && (len(recs) != 1 || recs[0].ClientGone.IsZero()) {
				t.Errorf("the stop did not cancel the provider stream: %+v", recs)
			}
		})
	}
}
