package loadgen_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
	"github.com/streambench/streambench/verdict"
)

// echo is a throwaway dialect defined here, outside loadgen, agentruntime and cmd: POST
// /echo/{target} with the user's input, answered by `data: {"text": …}` frames and `data: end`.
// Registering it with Registry.With is all the generator needs to drive it, and to know its
// rule.
type echo struct{}

// rEchoText is the throwaway dialect's one content rule.
const rEchoText protocol.Rule = "R-echo-text"

func (echo) Name() string { return "echo" }
func (echo) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{{ID: rEchoText, Kind: protocol.RuleContent, Text: "the echoed text is the script's"}}
}
func (echo) Options() []protocol.OptionSpec {
	return []protocol.OptionSpec{{Key: "shout", Help: "label the client echo-shout"}}
}
func (e echo) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	if err := o.Check("echo", e.Options()); err != nil {
		return nil, err
	}
	shout, err := o.Bool("shout", false)
	return echoClient{shout: shout}, err
}

type echoClient struct{ shout bool }

func (c echoClient) Label() string {
	if c.shout {
		return "echo-shout"
	}
	return "echo"
}
func (echoClient) Sees(protocol.FrameKind) bool { return true }
func (echoClient) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	return http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/echo/"+s.Target, strings.NewReader(s.Input))
}
func (echoClient) CheckHeaders(http.Header, *protocol.Session) []protocol.Violation { return nil }
func (echoClient) NewChecker(s *protocol.Session) protocol.Checker {
	return &echoChecker{want: s.Expected.FinalText()}
}

type echoChecker struct {
	want, got string
	ended     bool
}

func (c *echoChecker) Observe(ev *sse.Event) protocol.Observation {
	if string(ev.Data) == "end" {
		c.ended = true
		return protocol.Observation{Kind: protocol.FrameTerminal}
	}
	var f struct{ Text string }
	if json.Unmarshal(ev.Data, &f) != nil {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	c.got += f.Text
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(f.Text)}
}

func (c *echoChecker) Finish(err error) []protocol.Violation {
	var vs []protocol.Violation
	if c.got != c.want {
		vs = append(vs, protocol.Violation{Rule: rEchoText, Detail: fmt.Sprintf("text %q, want %q", c.got, c.want)})
	}
	if !c.ended && err == nil {
		vs = append(vs, protocol.Violation{Rule: protocol.RTerminal, Detail: "no end"})
	}
	return vs
}

// echoServer answers POST /echo/{target} with the scripted final text of the directive in the
// body, word by word; wrong replaces the last word.
func echoServer(t *testing.T, wrong bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d, ok, err := scenarios.ParseDirective(string(body))
		sc, found := scenarios.Embedded().Get(d.Scenario)
		if !ok || err != nil || !found || !strings.HasPrefix(r.URL.Path, "/echo/") {
			http.Error(w, "no directive", http.StatusBadRequest)
			return
		}
		words := strings.SplitAfter(sc.Render(d.Seed).Expected().FinalText(), " ")
		if wrong {
			words[len(words)-1] = "WRONG"
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range words {
			b, _ := json.Marshal(map[string]string{"text": word})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: end\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestThrowawayDialect: a dialect registered by a test is driven by the generator like the
// built-in ones: options from the mix configure its client and label, every session is judged
// by its checker, its latencies are measured under its label, a broken target fails with its
// own rule, and that rule is known (its kind, an allow list naming it) through the dialect
// alone.
func TestThrowawayDialect(t *testing.T) {
	t.Parallel()
	reg, err := dialects.Default().With(echo{})
	if err != nil {
		t.Fatal(err)
	}
	mix, err := loadgen.NewMix("echo", 1, map[string]float64{"plain-answer": 1, "unicode-answer": 1}, []loadgen.Profile{
		{Dialect: "echo", Options: protocol.Options{"shout": true}, Weight: 1, Targets: []loadgen.Target{{Slug: "a"}, {Slug: "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		wrong bool
		want  int64 // R-echo-text violations
	}{
		{"faithful", false, 0}, // the scripted text: every session ok
		{"wrong", true, 6},     // the last word replaced: every session fails with the dialect's rule
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := echoServer(t, tc.wrong)
			run, err := loadgen.Run(context.Background(), loadgen.Config{
				Target: srv.URL, Mix: mix, MixName: "echo.yaml", Dialects: reg,
				Clients: 2, Sessions: 6, NoLeakCheck: true,
			})
			if err != nil {
				t.Fatal(err)
			}
			c := run.Summary.Counters
			if c.SessionsStarted != 6 || run.Summary.Violations[rEchoText] != tc.want || c.Outcome(measure.OutcomeTransportError) != 0 {
				t.Fatalf("started %d, violations %v, transport errors %d: want 6 sessions and %d %s", c.SessionsStarted, run.Summary.Violations, c.Outcome(measure.OutcomeTransportError), tc.want, rEchoText)
			}
			if tc.want == 0 && c.SessionsOK != 6 {
				t.Errorf("ok %d of 6", c.SessionsOK)
			}
			ttfc, n := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk && k.Dialect == "echo-shout" })
			if n == 0 || ttfc.TotalCount() != 6 {
				t.Errorf("time to first chunk under the label echo-shout: %d histograms, %d values; want all 6 sessions", n, ttfc.TotalCount())
			}
		})
	}
	// The dialect's rule is in the registry's list with the kind it declares, and an allow
	// list may name it: the run counts it as allowed, and the gate, given the registry's rules,
	// takes the results file. Without the registration the rule is unknown to both.
	if k := reg.Rules().Kind(rEchoText); k != protocol.RuleContent {
		t.Errorf("the registry says %s is %s, want content", rEchoText, k)
	}
	if _, err := dialects.Default().Rules().Parse(string(rEchoText)); err == nil {
		t.Errorf("%s known without the echo dialect", rEchoText)
	}
	allowed, err := loadgen.Run(context.Background(), loadgen.Config{
		Target: echoServer(t, true).URL, Mix: mix, MixName: "echo.yaml", Dialects: reg, Allow: []protocol.Rule{rEchoText},
		Clients: 1, Sessions: 2, NoLeakCheck: true,
	})
	if err != nil {
		t.Fatalf("allow [%s] with the echo dialect registered: %v", rEchoText, err)
	}
	if allowed.Summary.Violations[rEchoText] != 2 || !slices.Contains(allowed.Summary.Config.Allow, rEchoText) {
		t.Errorf("allowed run: violations %v, allow %v; want 2 %s, allowed", allowed.Summary.Violations, allowed.Summary.Config.Allow, rEchoText)
	}
	if res, err := verdict.Judge(allowed, verdict.Config{Rules: reg.Rules()}); err != nil || !slices.Contains(res.Allowed(), string(rEchoText)+"×2") {
		t.Errorf("gate with the registry's rules: %v, %v; want %s×2 allowed", res, err, rEchoText)
	}
	if _, err := verdict.Judge(allowed, verdict.Config{Rules: dialects.Default().Rules()}); err == nil || !strings.Contains(err.Error(), `unknown rule "R-echo-text"`) {
		t.Errorf("gate without the echo dialect: %v, want the rule unknown", err)
	}
	_, err = loadgen.Run(context.Background(), loadgen.Config{Target: "http://127.0.0.1:1", Mix: mix, MixName: "echo.yaml", Dialects: dialects.Default(), Allow: []protocol.Rule{rEchoText}, Clients: 1, Sessions: 1, NoLeakCheck: true})
	if err == nil || !strings.Contains(err.Error(), `unknown rule "R-echo-text"`) {
		t.Errorf("allow [%s] without the registration: %v, want the rule unknown", rEchoText, err)
	}
	// An option the dialect does not know is an error naming the profile, the target and the
	// option, before anything is sent.
	bad, _ := loadgen.NewMix("bad", 1, map[string]float64{"plain-answer": 1}, []loadgen.Profile{
		{Name: "e", Dialect: "echo", Options: protocol.Options{"whisper": true}, Weight: 1, Targets: []loadgen.Target{{Slug: "a"}}},
	})
	_, err = loadgen.Run(context.Background(), loadgen.Config{Target: "http://127.0.0.1:1", Mix: bad, MixName: "bad.yaml", Dialects: reg, Clients: 1, Sessions: 1, NoLeakCheck: true})
	if err == nil || !strings.Contains(err.Error(), "profiles[0] (e).targets[0] (a)") || !strings.Contains(err.Error(), "whisper") {
		t.Errorf("unknown option: %v, want an error naming the profile, target and option", err)
	}
	// Without the registration the dialect is unknown, and the error lists the known ones.
	_, err = loadgen.Run(context.Background(), loadgen.Config{Target: "http://127.0.0.1:1", Mix: mix, MixName: "echo.yaml", Dialects: dialects.Default(), Clients: 1, Sessions: 1, NoLeakCheck: true})
	if err == nil || !strings.Contains(err.Error(), `dialect "echo" unknown`) || !strings.Contains(err.Error(), "sim-chat") {
		t.Errorf("unregistered dialect: %v", err)
	}
}
