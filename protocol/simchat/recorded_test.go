package simchat

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
)

// simRecordings is where the streams recorded from simstudioai/sim v0.8.9 (commit 0b232eb) are
// kept (testdata/sim-0b232eb/README.md).
const simRecordings = "testdata/sim-0b232eb"

// recordedClient is the sim-chat client the load generator had for a recording, configured
// through the dialect's options as `load --option` configures it: opted in or legacy as the
// header says, the chat's policy (bench-all: all; bench-none: none), every tool name with
// Sim's custom_ prefix, and the vLLM chat's provider running its tools settled.
func recordedClient(t testing.TB, rec *protocol.Recording) (protocol.Client, protocol.Options) {
	t.Helper()
	says := func(s string) bool { return strings.Contains(strings.Join(rec.Header, "\n"), s) } // a header line has s
	opts := protocol.Options{"optedIn": says("client opted in"), "toolPrefix": "custom_"}
	switch {
	case says("chat bench-all"), says("chat vllm-all"):
		opts["policy"] = "all"
	case says("chat bench-none"):
		opts["policy"] = "none"
	default:
		t.Fatalf("recording names no chat (bench-all, bench-none or vllm-all): %q", rec.Header)
	}
	if says("vLLM provider") {
		opts["liveTools"] = false
	}
	c, err := New().Configure("bench", opts)
	if err != nil {
		t.Fatalf("configure %v: %v", opts, err)
	}
	return c, opts
}

// replay judges a recording's frames (or edited ones) as the load generator judged the live
// stream: the scenario's ground truth, aborted where the script aborts.
func replay(t testing.TB, rec *protocol.Recording, frames []string) []protocol.Violation {
	t.Helper()
	c, _ := recordedClient(t, rec)
	sc := dialecttest.Script(t, rec.Scenario, rec.Seed)
	s := dialecttest.Session(sc)
	s.Aborted = sc.Client.Abort != nil
	return dialecttest.Check(t, frames, s, func() protocol.Checker { return c.NewChecker(s) })
}

// TestRecordedSimStreams replays every stream recorded from the real Sim (v0.8.9, 0b232eb)
// through the sim-chat checker with the deployment's settings: real Sim broke no rule, so 0
// violations. Edited copies of the same streams still fail with their rules.
func TestRecordedSimStreams(t *testing.T) {
	t.Parallel()
	paths := dialecttest.Recordings(t, filepath.Join(simRecordings, "*.frames"), 14)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".frames"), func(t *testing.T) {
			t.Parallel()
			rec := dialecttest.ReadRecording(t, path)
			if vs := replay(t, &rec, rec.Frames); len(vs) != 0 {
				_, opts := recordedClient(t, &rec)
				t.Errorf("%s (%s seed %d, options %v): unexpected violations %v", path, rec.Scenario, rec.Seed, opts, vs)
			}
		})
	}
}

// TestRecordedSimStreamsEdited: each recording, edited the way a broken runtime would send it,
// fails with its rule: the replay judges these streams, it does not wave them through.
func TestRecordedSimStreamsEdited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file string
		edit       func(t *testing.T, f []string) []string
		want       []protocol.Rule
	}{
		// The intermediate turn's preamble never reset: the client ends with it before the answer.
		{"no reset", "preamble-tool", func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"event":"chunk_reset"`, 0))
		}, []protocol.Rule{protocol.RConverge}},
		// One parallel call's frames without Sim's prefix: not the tool the model was shown.
		{"tool name unprefixed", "parallel-tools", func(t *testing.T, f []string) []string {
			for _, phase := range []string{"start", "end"} {
				i := dialecttest.Index(t, f, `"phase":"`+phase+`"`, 0)
				f = dialecttest.Replace(f, i, strings.Replace(f[i], `"name":"custom_`, `"name":"`, 1))
			}
			return f
		}, []protocol.Rule{RToolGate}},
		// The tool that fails reported as a success.
		{"tool status flipped", "tool-error", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"status":"error"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"status":"error"`, `"status":"success"`, 1))
		}, []protocol.Rule{RToolGate}},
		// The settled-tools provider sending a live tool frame.
		{"vllm live tool", "vllm-preamble-tool", func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"ca3edd9c-c071-4a6f-b1b7-4899201ef57b","event":"tool","phase":"start","id":"call_1","name":"custom_get_weather"}`),
				dialecttest.Raw(`{"blockId":"ca3edd9c-c071-4a6f-b1b7-4899201ef57b","event":"tool","phase":"end","id":"call_1","name":"custom_get_weather","status":"success"}`))
		}, []protocol.Rule{RSettledTools}},
		// The settled-tools provider's answer in two chunks (together still the final text).
		{"vllm answer split", "vllm-preamble-tool", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"chunk":`, 0)
			head, tail, _ := strings.Cut(f[i], " fugiat") // tail ends with the frame's `"}` and blank line
			second := `data: {"blockId":"ca3edd9c-c071-4a6f-b1b7-4899201ef57b","chunk":" fugiat` + tail
			return dialecttest.Insert(dialecttest.Replace(f, i, head+"\"}\n\n"), i+1, second)
		}, []protocol.Rule{RSettledTools}},
		// A legacy client's settled answer in two chunks.
		{"legacy answer split", "plain-answer-legacy", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"chunk":`, 0)
			return dialecttest.Insert(f, i+1, dialecttest.Raw(`{"blockId":"6dea086a-5483-4dc9-a670-95768753f849","chunk":" more"}`))
		}, []protocol.Rule{RLegacySettled}},
		// Thinking that is not the scripted thinking.
		{"thinking altered", "thinking-answer", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"event":"thinking"`, 3)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"data":"`, `"data":"x`, 1))
		}, []protocol.Rule{RThinkingGate}},
		// Thinking to a chat whose policy is none.
		{"thinking through policy none", "thinking-answer-policy-none", func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"68169efc-63b2-4139-b846-bd181c75f8e0","event":"thinking","data":"ex;"}`))
		}, []protocol.Rule{RThinkingGate}},
		// The scripted 429 reported as a success.
		{"429 as success", "provider-429", func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, dialecttest.Index(t, f, `"event":"error"`, 0), dialecttest.Raw(`{"event":"final","data":{"success":true,"output":{}}}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// The aborted stream's text so far is not the script's.
		{"aborted text altered", "abort-mid-answer", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"chunk":" ea"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `" ea"`, `" eh"`, 1))
		}, []protocol.Rule{protocol.RConverge}},
		// No end marker.
		{"no [DONE]", "plain-answer", func(t *testing.T, f []string) []string {
			return f[:len(f)-1]
		}, []protocol.Rule{protocol.RTerminal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := dialecttest.ReadRecording(t, filepath.Join(simRecordings, tc.file+".frames"))
			frames := tc.edit(t, append([]string(nil), rec.Frames...))
			dialecttest.WantRules(t, replay(t, &rec, frames), tc.want, frames)
		})
	}
}
