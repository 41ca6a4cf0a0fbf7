package loadgen

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/langgraph"
)

// langGraphProfile is the langgraph dialect against both providers' deployments, with opts.
func langGraphProfile(opts protocol.Options) Profile {
	return Profile{Dialect: "langgraph", Options: opts, Weight: 1, Targets: []Target{{Slug: "openai-all"}, {Slug: "anthropic-all"}}}
}

// TestLangGraphAgainstTheRuntime: the langgraph dialect plays the default scenarios against the
// reference runtime's run stream (stateless and thread routes, on_disconnect cancel and
// continue) with no violation; each langgraph fault switch fails its rule and nothing else.
func TestLangGraphAgainstTheRuntime(t *testing.T) {
	t.Parallel()
	all := slices.Sorted(maps.Keys(DefaultMix().Scenarios))
	all = slices.DeleteFunc(all, func(s string) bool { return s == "long-answer" }) // too slow for a unit test
	for _, tc := range []struct {
		name      string
		fault     string
		scenarios []string
		opts      protocol.Options
		want      []protocol.Rule
	}{
		// A correct runtime, stateless runs cancelled on disconnect: every scenario, clean.
		{"clean", "", all, nil, nil},
		// Thread runs that go on when the client leaves: clean too, aborts judged turned round.
		{"clean-thread-continue", "", all, protocol.Options{"path": "/threads/{thread}/runs/stream", "onDisconnect": "continue"}, nil},
		// Event ids that go backwards.
		{"bad-id", "langgraph-bad-id", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{langgraph.REvent}},
		// No metadata event.
		{"no-metadata", "langgraph-no-metadata", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{langgraph.RLifecycle}},
		// States that do not hold what the chunks streamed.
		{"state-mismatch", "langgraph-state-mismatch", []string{"plain-answer", "preamble-tool"}, nil, []protocol.Rule{langgraph.RMessage}},
		// An error event without its fields, where the script fails.
		{"bad-error", "langgraph-bad-error", []string{"provider-error-midstream"}, nil, []protocol.Rule{langgraph.RError}},
		// A run cancelled although the request said continue.
		{"cancel-on-continue", "langgraph-cancel-on-continue", []string{"abort-mid-answer"}, protocol.Options{"onDisconnect": "continue"}, []protocol.Rule{protocol.RAbort}},
		// The runtime ignores disconnects: a cancel run runs on.
		{"no-cancel", "no-cancel", []string{"abort-mid-answer"}, nil, []protocol.Rule{protocol.RAbort}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			scale := testScale
			if tc.fault == "no-cancel" || tc.fault == "langgraph-cancel-on-continue" {
				scale = 0.25 // the rest of the answer must outlast the abort tolerance
			}
			var faults []string
			if tc.fault != "" {
				faults = append(faults, tc.fault)
			}
			s := newStack(t, scale, faults...)
			sessions := int64(16)
			if tc.fault == "" {
				sessions = 60
			}
			run := s.playNoLeakCheck(t, mixOf(t, tc.scenarios, langGraphProfile(tc.opts)), 4, sessions)
			got, want := slices.Sorted(maps.Keys(run.Summary.Violations)), slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("violations %v, want %v\n%s", run.Summary.Violations, tc.want, describe(run))
			}
			if run.Summary.Verdict.Pass != (tc.want == nil) {
				t.Errorf("verdict pass %v, want %v\n%s", run.Summary.Verdict.Pass, tc.want == nil, describe(run))
			}
			c := run.Summary.Counters
			if tc.want == nil {
				if c.SessionsStarted != sessions || c.Outcome(measure.OutcomeInBandError) != 0 {
					t.Errorf("counters: %s", describe(run))
				}
				ttft, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.TimeToFirstToken })
				if ttft.TotalCount() == 0 {
					t.Errorf("no time to first token measured: %s", describe(run))
				}
			}
		})
	}
}

// fakeLangGraph is a LangGraph server whose model is not the mock: a valid run stream whose
// answer is its own text, or (failing) one that ends in an error event.
func fakeLangGraph(failing bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		lw := langgraph.NewWriter(w, 1700000000000)
		human := langgraph.Message{Type: langgraph.TypeHuman, ID: "h1", Content: langgraph.TextContent("hi")}
		state := langgraph.State{Messages: []langgraph.Message{human}}
		_ = lw.Metadata("run-1", 1)
		_ = lw.Values(&state)
		meta := &langgraph.ChunkMetadata{Node: "agent", Step: 1}
		for _, piece := range []string{"Hello", " from", " a real", " model."} {
			_ = lw.Message(&langgraph.Message{Type: langgraph.TypeAIChunk, ID: "ai1", Content: langgraph.TextContent(piece)}, meta)
		}
		if failing {
			_ = lw.Error("ValueError", "the graph failed")
			return
		}
		ai := langgraph.Message{Type: langgraph.TypeAI, ID: "ai1", Content: langgraph.TextContent("Hello from a real model.")}
		state.Messages = append(state.Messages, ai)
		_ = lw.Updates("agent", []langgraph.Message{ai})
		_ = lw.Values(&state)
	})
}

// TestLangGraphOtherModel: a server whose model is not the mock passes with --no-ground-truth
// (structure only) and fails the content rule without it; an error event the script does not
// call for is the in_band_error outcome, and the run fails, with or without ground truth.
func TestLangGraphOtherModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		failing, ngt  bool
		wantRules     []protocol.Rule
		wantInBand    bool
		wantCompleted bool
	}{
		// Valid, other text, structure only: clean.
		{"no-ground-truth", false, true, nil, false, true},
		// Valid, other text, against the script: the content rule.
		{"ground-truth", false, false, []protocol.Rule{langgraph.RContent}, false, true},
		// An unscripted error event: in_band_error, and a failed run.
		{"error-no-ground-truth", true, true, nil, true, false},
		// Against the script the text before the error is not the script's either.
		{"error-ground-truth", true, false, []protocol.Rule{langgraph.RContent}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(fakeLangGraph(tc.failing))
			t.Cleanup(srv.Close)
			profile := Profile{Dialect: "langgraph", Weight: 1, Targets: []Target{{Slug: "agent"}}}
			run := runLoad(t, Config{
				Target: srv.URL, Mix: mixOf(t, []string{"plain-answer"}, profile), MixName: "langgraph-other",
				Clients: 2, Sessions: 4, NoGroundTruth: tc.ngt, NoLeakCheck: true, StreamTimeout: 10 * time.Second,
			})
			got, want := slices.Sorted(maps.Keys(run.Summary.Violations)), slices.Sorted(slices.Values(tc.wantRules))
			if !slices.Equal(got, want) {
				t.Errorf("violations %v, want %v\n%s", run.Summary.Violations, tc.wantRules, describe(run))
			}
			c := run.Summary.Counters
			if tc.wantInBand && c.Outcome(measure.OutcomeInBandError) != 4 {
				t.Errorf("want 4 in_band_error outcomes: %s", describe(run))
			}
			if tc.wantCompleted && c.Outcome(measure.OutcomeCompleted) != 4 {
				t.Errorf("want 4 completed sessions: %s", describe(run))
			}
			if pass := tc.wantRules == nil && !tc.wantInBand; run.Summary.Verdict.Pass != pass || c.SessionsStarted != 4 {
				t.Errorf("verdict pass %v, want %v\n%s", run.Summary.Verdict.Pass, pass, describe(run))
			}
		})
	}
}
