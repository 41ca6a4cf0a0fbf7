package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// validHeader is a minimal timing block reused by the error cases.
const validHeader = "name: t\ntiming:\n  ttft: 300ms\n  itl: 20ms\n"

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		line int    // expected line of the first error
		path string // expected field path ("" for errors not tied to a field)
		want string // expected fragment of the problem
	}{
		// An unknown key must not silently fall back to a default.
		{"unknown field", validHeader + "turns:\n  - text: hi\n    bogus: 1\n", 7, "turns[0].bogus", `unknown field "bogus"`},
		// Unknown keys inside a distribution mapping too.
		{"unknown dist field", "name: t\ntiming:\n  ttft: {kind: uniform, min: 1ms, max: 2ms, mdian: 3ms}\nturns:\n  - text: hi\n", 3, "timing.ttft.mdian", "unknown field"},
		// A bare string that is not a duration.
		{"bad duration", "name: t\ntiming:\n  ttft: soon\nturns:\n  - text: hi\n", 3, "timing.ttft", `"soon" is not a duration`},
		// A number where a duration string is needed.
		{"number as duration", "name: t\ntiming:\n  ttft: {kind: constant, value: 300}\nturns:\n  - text: hi\n", 3, "timing.ttft.value", ""},
		// Wrong scalar type for tokens.
		{"tokens not a number", validHeader + "turns:\n  - text: {tokens: many}\n", 6, "turns[0].text.tokens", "cannot unmarshal"},
		// The name is required; reported at the document root.
		{"missing name", "timing:\n  ttft: 1ms\nturns:\n  - text: hi\n", 1, "name", "missing"},
		// Names must fit in a directive.
		{"name with space", "name: two words\nturns:\n  - text: hi\n", 1, "name", "no whitespace"},
		// A scenario needs turns.
		{"no turns", "name: t\ntiming:\n  ttft: 1ms\n", 1, "turns", "at least one turn"},
		// Lognormal needs median <= p99.
		{"lognormal p99 below median", "name: t\ntiming:\n  ttft: {kind: lognormal, median: 300ms, p99: 100ms}\nturns:\n  - text: hi\n", 3, "timing.ttft.p99", "median <= p99"},
		// Lognormal needs a median.
		{"lognormal without median", "name: t\ntiming:\n  itl: {kind: lognormal, p99: 100ms}\nturns:\n  - text: hi\n", 3, "timing.itl", "median > 0"},
		// Uniform needs min <= max.
		{"uniform min above max", "name: t\ntiming:\n  itl: {kind: uniform, min: 50ms, max: 10ms}\nturns:\n  - text: hi\n", 3, "timing.itl.max", "min <= max"},
		// Negative durations are meaningless.
		{"negative constant", "name: t\ntiming:\n  itl: -5ms\nturns:\n  - text: hi\n", 3, "timing.itl.value", "negative"},
		// Unknown distribution kind.
		{"unknown kind", "name: t\ntiming:\n  itl: {kind: pareto}\nturns:\n  - text: hi\n", 3, "timing.itl.kind", "unknown distribution"},
		// A field the kind ignores is a mistake, not a no-op.
		{"field unused by kind", "name: t\ntiming:\n  itl: {kind: uniform, min: 1ms, max: 2ms, median: 3ms}\nturns:\n  - text: hi\n", 3, "timing.itl.median", "not used"},
		// tokensPerFrame cannot be negative.
		{"negative tokensPerFrame", "name: t\ntiming:\n  tokensPerFrame: -1\nturns:\n  - text: hi\n", 3, "timing.tokensPerFrame", "negative"},
		// A non-final turn must end in tool calls.
		{"middle turn without tools", validHeader + "turns:\n  - text: hi\n  - text: bye\n", 6, "turns[0]", "must end in tool calls"},
		// The final turn must be the answer.
		{"last turn with tools", validHeader + "turns:\n  - text: hi\n    toolCalls:\n      - name: x\n", 8, "turns[0].toolCalls", "expected none"},
		// A turn with nothing in it.
		{"empty turn", validHeader + "turns:\n  - thinking: {tokens: 0}\n", 6, "turns[0]", "empty turn"},
		// One text beyond what any stream could hold (a run of it once died out of memory).
		{"text too long", validHeader + "turns:\n  - text: {tokens: 100000000000}\n", 6, "turns[0].text.tokens", "at most 131072"},
		// Texts each within the bound, too many together.
		{"script too long", validHeader + "turns:\n  - thinking: {tokens: 131072}\n    text: {tokens: 131072}\n    toolCalls:\n      - name: x\n  - text: {tokens: 10}\n", 6, "turns", "at most 262144"},
		// Literal and generated text at once.
		{"literal and tokens", validHeader + "turns:\n  - text: {literal: hi, tokens: 3}\n", 6, "turns[0].text", "both literal and tokens"},
		// Tool outcome must be success or error.
		{"bad outcome", validHeader + "turns:\n  - toolCalls:\n      - name: x\n        outcome: maybe\n  - text: done\n", 8, "turns[0].toolCalls[0].outcome", "success or error"},
		// Tools need a name.
		{"tool without name", validHeader + "turns:\n  - toolCalls:\n      - duration: 1ms\n  - text: done\n", 7, "turns[0].toolCalls[0]", "missing"},
		// _sim is reserved for the rendered directive.
		{"reserved _sim", validHeader + "turns:\n  - toolCalls:\n      - name: x\n        arguments: {_sim: 1}\n  - text: done\n", 8, "turns[0].toolCalls[0].arguments._sim", "reserved"},
		// Only 429, 500 and 503 are scriptable.
		{"bad status", validHeader + "turns:\n  - text: hi\nfaults:\n  httpError: {turn: 0, status: 404}\n", 8, "faults.httpError.status", "429, 500 or 503"},
		// Fault turns must exist.
		{"fault turn out of range", validHeader + "turns:\n  - text: hi\nfaults:\n  midStreamError: {turn: 2, afterTokens: 3}\n", 8, "faults.midStreamError.turn", "out of range"},
		// A mid-stream error needs at least one token before it.
		{"midstream afterTokens zero", validHeader + "turns:\n  - text: hi\nfaults:\n  midStreamError: {turn: 0, afterTokens: 0}\n", 8, "faults.midStreamError", ">= 1"},
		// A stall needs a positive duration.
		{"stall without duration", validHeader + "turns:\n  - text: hi\nfaults:\n  stall: {turn: 0, afterTokens: 1}\n", 8, "faults.stall", "positive duration"},
		// Turns after a failing turn can never play.
		{"turn after fault", validHeader + "turns:\n  - toolCalls:\n      - name: x\n  - text: hi\nfaults:\n  httpError: {turn: 0, status: 500}\n", 8, "turns[1]", "unreachable"},
		// A trigger needs exactly one condition.
		{"empty trigger", validHeader + "turns:\n  - text: hi\nclient:\n  abort: {}\n", 8, "client.abort", "exactly one"},
		// Two conditions are ambiguous.
		{"two triggers", validHeader + "turns:\n  - text: hi\nclient:\n  stop: {afterChunks: 3, duringTool: true}\n", 8, "client.stop", "exactly one"},
		// Abort and stop at once.
		{"abort and stop", validHeader + "turns:\n  - text: hi\nclient:\n  abort: {afterChunks: 3}\n  stop: {afterChunks: 4}\n", 9, "client.stop", "at most one"},
		// Aborting during thinking needs a turn that thinks.
		{"trigger never fires", validHeader + "turns:\n  - text: hi\nclient:\n  abort: {duringThinking: true}\n", 8, "client.abort.duringThinking", "never fires"},
		// A stop needs the run id of the response head, so it cannot come before it.
		{"stop before headers", validHeader + "turns:\n  - text: hi\nclient:\n  stop: {beforeHeaders: true}\n", 8, "client.stop.beforeHeaders", "needs the run id"},
		// beforeHeaders is one more condition: with another it is ambiguous.
		{"before headers and after", validHeader + "turns:\n  - text: hi\nclient:\n  abort: {beforeHeaders: true, after: 5ms}\n", 8, "client.abort", "exactly one"},
		// Stopping during a tool needs a tool call.
		{"tool trigger never fires", validHeader + "turns:\n  - text: hi\nclient:\n  stop: {duringTool: true}\n", 8, "client.stop.duringTool", "never fires"},
		// YAML syntax errors keep their position.
		{"syntax error", "name: [t\n", 1, "", "']'"},
		// A file that is not a mapping.
		{"not a mapping", "- a\n- b\n", 1, "", "expected a mapping"},
		// Several documents in one file.
		{"two documents", validHeader + "turns:\n  - text: hi\n---\nname: u\n", 1, "", "exactly one scenario"},
		// Nothing at all.
		{"empty file", "  \n", 0, "", "empty file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("bad.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", tt.yaml)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			msg := fe.Error()
			if !strings.HasPrefix(msg, "bad.yaml:") {
				t.Errorf("message %q does not start with the file name", msg)
			}
			if fe.Line != tt.line {
				t.Errorf("line = %d, want %d (%s)", fe.Line, tt.line, msg)
			}
			if tt.line > 0 && !strings.Contains(msg, "bad.yaml:"+strconv.Itoa(tt.line)+":") {
				t.Errorf("message %q does not name bad.yaml:%d", msg, tt.line)
			}
			if tt.path != "" && !strings.HasPrefix(fe.Path, tt.path) {
				t.Errorf("path = %q, want prefix %q (%s)", fe.Path, tt.path, msg)
			}
			if tt.path != "" && !strings.Contains(msg, "field "+fe.Path) {
				t.Errorf("message %q does not name the field", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q", msg, tt.want)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	t.Parallel()
	src := "name: t\ntiming:\n  ttft: {kind: uniform, min: 5ms, max: 1ms}\nturns:\n  - text: hi\nfaults:\n  httpError: {turn: 0, status: 404}\n"
	_, err := Parse("multi.yaml", []byte(src))
	if err == nil {
		t.Fatal("Parse accepted an invalid scenario")
	}
	for _, want := range []string{"multi.yaml:3:", "timing.ttft.max", "multi.yaml:7:", "faults.httpError.status"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if i, j := strings.Index(err.Error(), ":3:"), strings.Index(err.Error(), ":7:"); i > j {
		t.Errorf("problems not in file order: %q", err)
	}
}

func TestParseShorthands(t *testing.T) {
	t.Parallel()
	src := `name: short
timing:
  ttft: 300ms
  itl: {kind: lognormal, median: 20ms, p99: 80ms}
turns:
  - text: "Checking."
    toolCalls:
      - name: search
        duration: 250ms
        arguments: {q: café, n: 3, nested: {deep: [1, 2]}}
  - thinking: {tokens: 4}
    text: {tokens: 9}
client:
  stop: {after: 1500ms}
`
	s, err := Parse("short.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := s.Timing.TimeToFirstToken; got != Constant(300*time.Millisecond) {
		t.Errorf("ttft = %+v, want constant 300ms", got)
	}
	if got := s.Timing.InterToken; got.Kind != DistLognormal || got.Median != 20*time.Millisecond || got.P99 != 80*time.Millisecond {
		t.Errorf("itl = %+v", got)
	}
	if got := s.Turns[0].Text; got != (Text{Literal: "Checking."}) {
		t.Errorf("turn 0 text = %+v, want literal", got)
	}
	if got := s.Turns[1].Text; got != (Text{Tokens: 9}) {
		t.Errorf("turn 1 text = %+v, want 9 generated tokens", got)
	}
	if got := s.Turns[0].ToolCalls[0].Duration; got != Constant(250*time.Millisecond) {
		t.Errorf("tool duration = %+v", got)
	}
	if s.Client.Stop == nil || s.Client.Stop.After != 1500*time.Millisecond {
		t.Errorf("client = %+v", s.Client)
	}
	// Nested arguments must survive into JSON.
	args := s.Render(1).Turns[0].ToolCalls[0].Arguments
	if !strings.Contains(args, `"nested":{"deep":[1,2]}`) || !strings.Contains(args, `"q":"café"`) {
		t.Errorf("arguments = %s", args)
	}
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(validHeader+"turns:\n  - text: hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadFile(good); err != nil || s.Name != "t" {
		t.Fatalf("LoadFile(good) = %v, %v", s, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(validHeader+"turns: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(bad); err == nil || !strings.Contains(err.Error(), bad+":5:") {
		t.Errorf("LoadFile(bad) error = %v, want it to name %s:5", err, bad)
	}
	if _, err := LoadFile(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("LoadFile(missing) error = %v", err)
	}
}

func TestValidateHandBuilt(t *testing.T) {
	t.Parallel()
	s := handBuilt()
	s.Turns[0].ToolCalls[0].Outcome = "maybe"
	err := s.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "turns[0].toolCalls[0].outcome" || fe.File != "" || fe.Line != 0 {
		t.Fatalf("Validate = %v, want a position-less FieldError at turns[0].toolCalls[0].outcome", err)
	}
	if !strings.HasPrefix(err.Error(), "field turns[0]") {
		t.Errorf("message %q should start with the field", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(validHeader + "turns:\n  - text: hi\n"))
	f.Add([]byte("name: [x\n"))
	f.Add([]byte("name: t\ntiming: {ttft: {kind: lognormal, median: 1ms, p99: 2ms}}\nturns:\n  - {text: {tokens: 3}, toolCalls: [{name: x}]}\n  - text: ok\nfaults: {stall: {turn: 0, afterTokens: 1, duration: 1s}}\n"))
	entries, _ := embeddedFS.ReadDir("library")
	for _, e := range entries {
		data, _ := embeddedFS.ReadFile("library/" + e.Name())
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatal("Parse returned a scenario with an error")
			}
			if !strings.Contains(err.Error(), "fuzz.yaml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		// A scenario Parse accepts must render without panicking, and consistently. Keep the
		// fuzzer away from absurd sizes that are valid but slow.
		for _, turn := range s.Turns {
			if turn.Thinking.Tokens > 10000 || turn.Text.Tokens > 10000 {
				return
			}
		}
		checkConsistent(t, s.Render(7))
	})
}
