package langgraph

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
)

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
	paths := dialecttest.Recordings(t, filepath.Join("testdata", "langgraph-dev", "*.sse.gz"), 0)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rec := dialecttest.ReadRecording(t, path)
			s, err := rec.Session("agent") // interop/langgraph/run.sh's agent graph
			if err != nil {
				t.Fatal(err)
			}
			rules, inBand := judge(t, s, false, rec.Stream(), nil)
			if len(rules) != 0 {
				t.Errorf("rules %v on the dev server's stream, want none", rules)
			}
			if fails := s.Expected.FailedTurn >= 0; (inBand != "") != fails {
				t.Errorf("in-band error %q, the script fails: %v", inBand, fails)
			}

			dropped, ok := dropTextChunk(rec.Stream())
			if !ok {
				t.Skip("no AI text chunk to drop")
			}
			s, _ = rec.Session("agent")
			rules, _ = judge(t, s, false, dropped, nil)
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
