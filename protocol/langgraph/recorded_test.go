package langgraph

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// devServerStream is one stream the LangGraph dev server sent (testdata/langgraph-dev): the
// scenario and seed its first comment line names, and the SSE as it arrived.
type devServerStream struct {
	path     string
	scenario string
	seed     uint64
	raw      string
}

func readDevServerStream(t *testing.T, path string) devServerStream {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var name, seed string
	if _, err := fmt.Sscanf(first, ": scenario %s seed %s", &name, &seed); err != nil {
		t.Fatalf("%s: first line %q: want ': scenario NAME seed N ...'", path, first)
	}
	n, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		t.Fatalf("%s: seed %q: %v", path, seed, err)
	}
	return devServerStream{path: path, scenario: name, seed: n, raw: string(b)}
}

// session is the session the capture played: interop/langgraph/run.sh sends the directive
// with the prompt "go" to the agent graph.
func (r devServerStream) session(t *testing.T) *protocol.Session {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(r.scenario)
	if !ok {
		t.Fatalf("%s: unknown scenario %s", r.path, r.scenario)
	}
	id := "capture-" + r.scenario
	return &protocol.Session{
		ID:       id,
		Target:   "agent",
		Input:    scenarios.Directive{Scenario: r.scenario, Seed: r.seed, Session: id}.String() + " go",
		Expected: sc.Render(r.seed).Expected(),
	}
}

// TestRecordedDevServerStreams: streams the real LangGraph dev server sent
// (@langchain/langgraph-cli's in-memory server running interop/langgraph/graph.mjs, a ReAct
// agent whose model is the streambench mock; captured by `OUT=DIR bash
// interop/langgraph/run.sh`, testdata/langgraph-dev, gzipped) pass every rule, the content
// rules included, and end as their scripts do: an in-band error event where the provider
// fails, a clean close elsewhere. Each stream with one of its AI text chunks dropped breaks
// R-langgraph-content (the text is not the script's) and R-langgraph-message (the chunks no
// longer add up to the state's message; not where the error ends the run before a state holds
// it), so the checker does read what the server sent.
func TestRecordedDevServerStreams(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("testdata", "langgraph-dev", "*.sse.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recordings in testdata/langgraph-dev: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rec := readDevServerStream(t, path)
			s := rec.session(t)
			rules, inBand := judge(t, s, false, rec.raw, nil)
			if len(rules) != 0 {
				t.Errorf("rules %v on the dev server's stream, want none", rules)
			}
			if fails := s.Expected.FailedTurn >= 0; (inBand != "") != fails {
				t.Errorf("in-band error %q, the script fails: %v", inBand, fails)
			}

			dropped, ok := dropTextChunk(rec.raw)
			if !ok {
				t.Skip("no AI text chunk to drop")
			}
			rules, _ = judge(t, rec.session(t), false, dropped, nil)
			want := []protocol.Rule{RContent, RMessage}
			if s.Expected.FailedTurn >= 0 {
				// The error ends the run before a state holds the message: only the script
				// tells what is missing.
				want = want[:1]
			}
			if !slices.Equal(rules, want) {
				t.Errorf("a text chunk dropped: rules %v, want %v", rules, want)
			}
		})
	}
}

// dropTextChunk removes the first messages event whose chunk carries AI text.
func dropTextChunk(raw string) (string, bool) {
	events := strings.SplitAfter(raw, "\n\n")
	for i, e := range events {
		if strings.HasPrefix(e, "event: messages\n") && strings.Contains(e, `"type":"ai"`) &&
			strings.Contains(e, `data: [{"content":"`) && !strings.Contains(e, `data: [{"content":"",`) {
			return strings.Join(append(events[:i:i], events[i+1:]...), ""), true
		}
	}
	return "", false
}
