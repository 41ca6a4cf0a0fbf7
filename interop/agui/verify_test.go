// Package aguiinterop holds the AG-UI cross-checks against @ag-ui/client: verify.mjs runs the
// client's own pipeline (SSE parsing, the event schemas, verifyEvents) over recorded streams,
// and TestVerifyEventsAgrees compares its verdicts with the ag-ui checker's. run.sh installs
// the pinned packages; without node or them the test skips.
package aguiinterop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
)

// recordedDir holds the reference runtime's recorded streams (protocol/agui/testdata/README.md).
var recordedDir = filepath.Join("..", "..", "protocol", "agui", "testdata", "runtime")

// judgeFile is judge of the recording in path.
func judgeFile(t *testing.T, path string) string {
	t.Helper()
	rec, err := protocol.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := judge(rec)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sb
}

// judge is streambench's verdict on rec: the rules it breaks against its script, and
// "truncated" when it ends without RUN_FINISHED or RUN_ERROR (the truncated outcome, which
// fails a run). An empty verdict passes.
func judge(rec protocol.Recording) (string, error) {
	rules, end, err := agui.JudgeRecording(rec)
	if err != nil {
		return "", err
	}
	var names []string
	for _, r := range rules {
		names = append(names, string(r))
	}
	if end == "truncated" {
		names = append(names, "truncated")
	}
	slices.Sort(names)
	return strings.Join(names, ","), nil
}

// edit is a stream derived from a clean recording to reach what the runtime's faults do not.
type edit struct {
	name, from string
	apply      func(t *testing.T, f []string) []string
}

// frame is an SSE frame of one event's data, as a recording holds it.
func frame(data string) string { return "data: " + data + "\n\n" }

func index(t *testing.T, f []string, sub string) int {
	t.Helper()
	i := slices.IndexFunc(f, func(s string) bool { return strings.Contains(s, sub) })
	if i < 0 {
		t.Fatalf("no frame with %q", sub)
	}
	return i
}

var edits = []edit{
	// The connection drops before RUN_FINISHED.
	{"cut-before-run-finished", "plain-answer", func(t *testing.T, f []string) []string { return f[:len(f)-1] }},
	// A second run in the same response.
	{"second-run", "plain-answer", func(t *testing.T, f []string) []string {
		return append(f, frame(`{"type":"RUN_STARTED","threadId":"thread-agui-plain-answer","runId":"run-2"}`), frame(`{"type":"RUN_FINISHED","threadId":"thread-agui-plain-answer","runId":"run-2"}`))
	}},
	// An event after RUN_ERROR.
	{"event-after-run-error", "provider-error-midstream", func(t *testing.T, f []string) []string {
		return append(f, frame(`{"type":"CUSTOM","name":"late","value":1}`))
	}},
	// A tool result for a call never started.
	{"result-unknown-call", "preamble-tool", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TOOL_CALL_RESULT"`)
		f[i] = frame(`{"type":"TOOL_CALL_RESULT","messageId":"result_x","toolCallId":"call_unknown","content":"ok","role":"tool"}`)
		return f
	}},
	// The tool's result dropped (a relay that filters TOOL_CALL_RESULT).
	{"result-dropped", "preamble-tool", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TOOL_CALL_RESULT"`)
		return append(f[:i:i], f[i+1:]...)
	}},
	// The tool's result twice.
	{"result-twice", "preamble-tool", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TOOL_CALL_RESULT"`)
		dup := strings.Replace(f[i], `"messageId":"result_`, `"messageId":"again_`, 1)
		return slices.Insert(f, i+1, dup)
	}},
	// An empty text delta.
	{"empty-delta", "plain-answer", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TEXT_MESSAGE_CONTENT"`)
		id := f[i][strings.Index(f[i], `"messageId":`):strings.Index(f[i], `,"delta"`)]
		return slices.Insert(f, i+1, frame(`{"type":"TEXT_MESSAGE_CONTENT",`+id+`,"delta":""}`))
	}},
	// Text that is not the script's.
	{"wrong-text", "plain-answer", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TEXT_MESSAGE_CONTENT"`)
		f[i] = strings.Replace(f[i], `"delta":"`, `"delta":"X`, 1)
		return f
	}},
	// Tool arguments that are not JSON.
	{"args-not-json", "preamble-tool", func(t *testing.T, f []string) []string {
		i := index(t, f, `"TOOL_CALL_ARGS"`)
		f[i] = strings.Replace(f[i], `"delta":"`, `"delta":"}`, 1)
		return f
	}},
}

// disagreement is a file on which verifyEvents and streambench are known to differ.
type disagreement struct {
	streambench string // streambench's verdict: the rules broken, "truncated", or "" (passes)
	verify      string // verifyEvents: "PASS" or the start of its error
	right       string // which side is right, and why
}

// disagreements are every known difference; a new one, or one that went away, fails the test.
var disagreements = map[string]disagreement{
	"fault-agui-bad-state-delta.frames": {"R-agui-state", "PASS",
		"streambench: the first STATE_DELTA replaces /no-such-member, which RFC 6902 says fails; verifyEvents does not apply patches (the client's state reducer only logs the failure and keeps the old state)"},
	"cut-before-run-finished.frames": {"truncated", "PASS",
		"streambench: a run that never finished is not a success; verifyEvents judges order only and completes quietly on a stream without RUN_FINISHED"},
	"second-run.frames": {"R-agui-run", "PASS",
		"streambench, on purpose: one RunAgentInput asks for one run (its runId); verifyEvents lets a RUN_STARTED follow RUN_FINISHED, as a stream of several runs (a connect replay) may"},
	"result-unknown-call.frames": {"R-agui-content,R-agui-tool", "PASS",
		"streambench: the result answers no tool call of the run, and the call the script ran has none; verifyEvents does not judge TOOL_CALL_RESULT"},
	"result-dropped.frames": {"R-agui-content", "PASS",
		"streambench: the script ran the call, so its result is owed; verifyEvents does not judge TOOL_CALL_RESULT"},
	"result-twice.frames": {"R-agui-tool", "PASS",
		"streambench: one call, two results (the client appends two tool messages for one call); verifyEvents does not judge TOOL_CALL_RESULT"},
	"args-not-json.frames": {"R-agui-content,R-agui-tool", "PASS",
		"streambench: the call's arguments are not JSON when it ends (the client's legacy bridge throws on them later); verifyEvents does not parse arguments"},
	"wrong-text.frames": {"R-agui-content", "PASS",
		"streambench: the text is not the script's (a content rule; verifyEvents has no script to compare with)"},
}

// TestVerifyEventsAgrees runs @ag-ui/client's verifyEvents (verify.mjs) over every recorded
// stream and the edits above, and compares its verdict with the ag-ui checker's: where they
// differ the file must be in disagreements, with the same two verdicts.
func TestVerifyEventsAgrees(t *testing.T) {
	t.Parallel()
	node := needNode(t)
	paths, err := filepath.Glob(filepath.Join(recordedDir, "*.frames"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recordings in %s: %v", recordedDir, err)
	}
	dir := t.TempDir()
	for _, e := range edits {
		rec, err := protocol.ReadRecording(filepath.Join(recordedDir, e.from+".frames"))
		if err != nil {
			t.Fatal(err)
		}
		rec.Header = append(rec.Header, "# edited: "+e.name)
		rec.Frames = e.apply(t, slices.Clone(rec.Frames))
		path := filepath.Join(dir, e.name+".frames")
		if err := rec.Write(path); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}

	verdicts := verifyEvents(t, node, paths)

	t.Logf("%-36s %-28s %s", "file", "streambench", "verifyEvents")
	seen := map[string]bool{}
	for _, path := range paths {
		sb := judgeFile(t, path)
		ve, ok := verdicts[path]
		if !ok {
			t.Fatalf("verify.mjs said nothing of %s", path)
		}
		name := filepath.Base(path)
		t.Logf("%-36s %-28s %s", name, or(sb, "pass"), ve)
		d, known := disagreements[name]
		switch agree := (sb == "") == (ve == "PASS"); {
		case agree && !known:
		case agree:
			t.Errorf("%s: streambench %q and verifyEvents %q now agree; the table says %q (%s): remove the row", name, or(sb, "pass"), ve, d.verify, d.right)
		case !known:
			t.Errorf("%s: a new disagreement: streambench %q, verifyEvents %q; find out which is right and add a row", name, or(sb, "pass"), ve)
		case sb != d.streambench || !strings.HasPrefix(ve, d.verify):
			t.Errorf("%s: streambench %q, verifyEvents %q; the table says %q and %q", name, or(sb, "pass"), ve, d.streambench, d.verify)
		}
		seen[name] = true
	}
	for name := range disagreements {
		if !seen[name] {
			t.Errorf("disagreements names %s, which is neither recorded nor an edit", name)
		}
	}
}

// verifyEvents runs verify.mjs over paths and returns each file's verdict: "PASS" or the
// error verifyEvents (or the client's parsing) raised.
func verifyEvents(t *testing.T, node string, paths []string) map[string]string {
	t.Helper()
	cmd := exec.Command(node, append([]string{"verify.mjs"}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v\n%s", err, stderr.String())
	}
	verdicts := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, ok := strings.CutPrefix(line, "PASS "); ok {
			verdicts[path] = "PASS"
		} else if rest, ok := strings.CutPrefix(line, "FAIL "); ok {
			path, msg, _ := strings.Cut(rest, ": ")
			verdicts[path] = msg
		} else {
			t.Fatalf("verify.mjs: unexpected line %q", line)
		}
	}

	return verdicts
}

// needNode returns node's path, or skips the test when node or @ag-ui/client is missing.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the verifyEvents cross-check runs @ag-ui/client with node (run interop/agui/run.sh)")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@ag-ui", "client", "package.json")); err != nil {
		t.Skip("interop/agui/node_modules has no @ag-ui/client: run interop/agui/run.sh, which installs it with npm")
	}
	return node
}

// TestCapturedStreams judges the streams run.sh captured from a real AG-UI server
// (AGUI_CAPTURED names their directory; skipped without it) with both the checker and
// verifyEvents. It fails where the checker breaks a rule that is not a known finding of that
// server (AGUI_KNOWN, comma-separated rules, docs/INTEROP.md), and where verifyEvents fails a
// stream the checker passes (whatever verifyEvents catches, streambench must catch too).
func TestCapturedStreams(t *testing.T) {
	dir := os.Getenv("AGUI_CAPTURED")
	if dir == "" {
		t.Skip("AGUI_CAPTURED is not set: run.sh sets it to the streams it captured from the server")
	}
	node := needNode(t)
	paths, err := filepath.Glob(filepath.Join(dir, "*.frames"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captured streams in %s: %v", dir, err)
	}
	verdicts := verifyEvents(t, node, paths)
	known := strings.Split(os.Getenv("AGUI_KNOWN"), ",")
	for _, path := range paths {
		sb := judgeFile(t, path)
		t.Logf("%-28s streambench %-28s verifyEvents %s", filepath.Base(path), or(sb, "pass"), verdicts[path])
		var unknown []string
		for _, r := range strings.Split(sb, ",") {
			if r != "" && !slices.Contains(known, r) {
				unknown = append(unknown, r)
			}
		}
		if len(unknown) > 0 {
			t.Errorf("%s: streambench %s, of which %v are not known findings of this server (AGUI_KNOWN=%q)", filepath.Base(path), sb, unknown, os.Getenv("AGUI_KNOWN"))
		}
		if sb == "" && verdicts[path] != "PASS" {
			t.Errorf("%s: verifyEvents %s on a stream streambench passes", filepath.Base(path), verdicts[path])
		}
	}
}

func or(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
