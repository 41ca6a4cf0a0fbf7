package agui_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

var update = flag.Bool("update", false, "record testdata/runtime/*.frames again from the reference runtime")

// recordedDir holds the streams the reference runtime served (testdata/README.md).
var recordedDir = filepath.Join("testdata", "runtime")

// recordedScenarios are the default mix's scenarios that differ in what they send: the
// scripted aborts, stops, stalls and slow starts are left out (played to their end they are
// long answers and tool runs like these; their timing is not in a recording), and long-answer
// (2,000 tokens of deltas).
var recordedScenarios = []string{
	"batched-frames", "parallel-tools", "plain-answer", "preamble-tool", "provider-429",
	"provider-503-after-tool", "provider-error-midstream", "thinking-answer", "tool-chain",
	"tool-error", "unicode-answer",
}

// faultScenario is the scenario each ag-ui fault switch is recorded with: one that has what the
// fault breaks (a text message, reasoning, a tool call, a state delta), the smallest such.
var faultScenario = map[string]string{
	"agui-no-run-started":  "unicode-answer",
	"agui-open-message":    "unicode-answer",
	"agui-open-reasoning":  "thinking-answer",
	"agui-open-tool":       "preamble-tool",
	"agui-open-step":       "unicode-answer",
	"agui-bad-state-delta": "preamble-tool",
}

// aguiFaults are the reference runtime's ag-ui fault switches with the rule each breaks.
func aguiFaults(t *testing.T) map[string]protocol.Rule {
	t.Helper()
	out := map[string]protocol.Rule{}
	for _, f := range agentruntime.FaultSwitches() {
		if strings.HasPrefix(f.Name, "agui-") {
			if len(f.Rules) != 1 {
				t.Fatalf("fault %s breaks %v: want one rule", f.Name, f.Rules)
			}
			out[f.Name] = f.Rules[0]
		}
	}
	return out
}

// scriptFails reports whether the recording's script ends in a provider error (RUN_ERROR).
func scriptFails(rec protocol.Recording) bool {
	s, err := rec.Session("")
	return err == nil && s.Expected.FailedTurn >= 0
}

// TestRecordedRealServerStreams: streams a real AG-UI server sent, @ag-ui/langgraph 0.0.43 in
// front of the LangGraph dev server and the mock (interop/agui/run.sh with OUT set keeps them;
// testdata/agui-langgraph, gzipped), break the rules of its known findings and no other
// (docs/INTEROP.md, "AG-UI"): RUN_FINISHED carries LangGraph's own run id, not the request's
// (R-agui-run, every stream; after RUN_ERROR it also goes on), and a failing tool's call is
// never streamed (R-agui-content, tool-error). A checker that stopped seeing them, or saw
// more, fails this test.
func TestRecordedRealServerStreams(t *testing.T) {
	t.Parallel()
	paths := dialecttest.Recordings(t, filepath.Join("testdata", "agui-langgraph", "*.frames.gz"), 0)
	for _, path := range paths {
		rec := dialecttest.ReadRecording(t, path)
		got, _, err := agui.JudgeRecording(rec)
		if err != nil {
			t.Fatal(err)
		}
		want := []protocol.Rule{agui.RRun}
		if rec.Scenario == "tool-error" {
			want = []protocol.Rule{agui.RContent, agui.RRun}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rules %v, want %v", filepath.Base(path), got, want)
		}
	}
}

// TestRecordedRuntimeStreams: the streams the reference runtime served pass every rule, the
// content rules included; each ag-ui fault switch's stream breaks its rule and no other.
// -update records them again first.
func TestRecordedRuntimeStreams(t *testing.T) {
	t.Parallel()
	faults := aguiFaults(t)
	if *update {
		record(t, faults)
	}
	paths, err := filepath.Glob(filepath.Join(recordedDir, "*.frames"))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(recordedScenarios) + len(faults); len(paths) != want {
		t.Fatalf("%s: %d recordings, want %d (%d scenarios, %d faults): run with -update", recordedDir, len(paths), want, len(recordedScenarios), len(faults))
	}
	seen := map[string]bool{}
	for _, path := range paths {
		rec := dialecttest.ReadRecording(t, path)
		got, end, err := agui.JudgeRecording(rec)
		if err != nil {
			t.Fatal(err)
		}
		// The end the script calls for: RUN_ERROR where the provider fails, else RUN_FINISHED.
		if fails := scriptFails(rec); end == "truncated" || (end != "") != fails {
			t.Errorf("%s: ended %q, the script fails: %v", path, end, fails)
		}
		var want []protocol.Rule
		fault := "" // the header line "# fault NAME"
		for _, h := range rec.Header {
			if v, ok := strings.CutPrefix(h, "# fault "); ok {
				fault = v
				break
			}
		}
		if fault != "" {
			rule, ok := faults[fault]
			if !ok {
				t.Fatalf("%s: fault %s is not an ag-ui fault switch", path, fault)
			}
			want = []protocol.Rule{rule}
			seen[fault] = true
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rules %v, want %v", path, got, want)
		}
	}
	for name := range faults {
		if !seen[name] {
			t.Errorf("fault %s has no recording in %s: run with -update", name, recordedDir)
		}
	}
}

// record plays every recorded scenario once on a clean runtime and each fault's scenario on a
// runtime with that fault, and writes the streams to recordedDir.
func record(t *testing.T, faults map[string]protocol.Rule) {
	const scale = 0.05 // the mock's and the tools' time: the frames do not depend on it
	lib := scenarios.Embedded()
	mock, err := mockprovider.New(mockprovider.Options{Library: lib, TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	mts := httptest.NewUnstartedServer(mock)
	mts.Config.Protocols = mockprovider.Protocols() // h2c, as the runtime talks to it
	mts.Start()
	t.Cleanup(mts.Close)
	runtime := func(fault string) string {
		var names []string
		if fault != "" {
			names = []string{fault}
		}
		f, err := agentruntime.ParseFaults(names)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := agentruntime.New(agentruntime.Options{ProviderURL: mts.URL, Faults: f, ToolTimeScale: scale, Heartbeat: -1})
		if err != nil {
			t.Fatal(err)
		}
		rts := httptest.NewServer(rt.Handler())
		t.Cleanup(func() { rts.Close(); _ = rt.Close() })
		return rts.URL
	}
	if err := os.RemoveAll(recordedDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(recordedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	clean := runtime("")
	for _, name := range recordedScenarios {
		recordOne(t, clean, name, "", name+".frames")
	}
	for _, fault := range slices.Sorted(maps.Keys(faults)) {
		name, ok := faultScenario[fault]
		if !ok {
			t.Fatalf("fault %s: no scenario in faultScenario", fault)
		}
		recordOne(t, runtime(fault), name, fault, "fault-"+fault+".frames")
	}
}

// recordOne plays scenario name at seed 1 to its end (a scripted abort or stop is not acted
// on) against the runtime's /agui/openai-all and writes the frames to file.
func recordOne(t *testing.T, runtimeURL, name, fault, file string) {
	t.Helper()
	s, err := (&protocol.Recording{Scenario: name, Seed: 1}).Session("")
	if err != nil {
		t.Fatal(err)
	}
	d, err := agui.New(agui.Options{}).Configure("openai-all", protocol.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := d.NewRequest(ctx, runtimeURL, s)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: HTTP %d: %s", name, resp.StatusCode, body)
	}
	rec := protocol.Recording{Header: []string{
		"# streambench's reference runtime, POST /agui/openai-all, in front of the streambench mock (protocol/agui/recorded_test.go -update)",
		"# scenario " + name + " seed 1",
	}}
	if fault != "" {
		rec.Header = append(rec.Header, "# fault "+fault)
	}
	dec := sse.NewDecoder(resp.Body)
	var ev sse.Event
	for {
		if err := dec.Next(&ev); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: %v", name, err)
			}
			break
		}
		if ev.Type != "" || strings.Contains(string(ev.Data), "\n") {
			t.Fatalf("%s: a frame verify.mjs cannot read (data: lines only): event %q data %q", name, ev.Type, ev.Data)
		}
		rec.Frames = append(rec.Frames, "data: "+string(ev.Data)+"\n\n")
	}
	if err := rec.Write(filepath.Join(recordedDir, file)); err != nil {
		t.Fatal(err)
	}
}
