package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/scenarios"
)

func TestScenariosCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("name: mine\ntiming:\n  ttft: 10ms\nturns:\n  - text: {tokens: 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("name: broken\nturns:\n  - text: hi\n    colour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int      // exit code carried by the error (0: no error)
		want     []string // fragments of stdout, or of the error when wantCode != 0
	}{
		// The embedded library lists every scenario with its columns.
		{"list", []string{"list"}, 0, []string{"NAME", "DESCRIPTION", "tool-chain  ", "abort after 30 chunks", "http 429 @turn0"}},
		// A directory replaces the embedded library.
		{"list dir", []string{"list", "--scenarios", filepath.Join(dir, "only")}, exitUsage, []string{"no such file"}},
		// show prints the YAML and the rendered turns.
		{"show", []string{"show", "preamble-tool", "--seed", "3"}, 0, []string{"name: preamble-tool", "Rendered with seed 3", "## turn 1", "tool call call_", `"_sim":{"ms":`}},
		// A failing turn is shown as such.
		{"show http error", []string{"show", "provider-429"}, 0, []string{"HTTP 429"}},
		// Unknown names list the known ones.
		{"show unknown", []string{"show", "nope"}, exitUsage, []string{`unknown scenario "nope"`, "plain-answer"}},
		// show needs exactly one name.
		{"show no name", []string{"show"}, exitUsage, []string{"exactly one"}},
		// validate reports each file; one bad file makes it exit 2 with file:line.
		{"validate", []string{"validate", good, bad}, exitUsage, []string{"1 of 2"}},
		// All good files pass.
		{"validate ok", []string{"validate", good}, 0, []string{"ok   " + good + " (mine)"}},
		// validate needs files.
		{"validate none", []string{"validate"}, exitUsage, []string{"at least one FILE"}},
		// Unknown subcommands are usage errors.
		{"unknown", []string{"frobnicate"}, exitUsage, []string{`unknown subcommand "frobnicate"`}},
		// So is none at all.
		{"missing", nil, exitUsage, []string{"missing subcommand"}},
		// Bad flags are usage errors.
		{"bad flag", []string{"show", "plain-answer", "--seed", "x"}, exitUsage, []string{"seed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := scenariosMain(tt.args, &out)
			text := out.String()
			if tt.wantCode != 0 {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != tt.wantCode {
					t.Fatalf("error %v, want exit code %d", err, tt.wantCode)
				}
				text = err.Error()
			} else if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
		})
	}
}

func TestScenariosValidateOutput(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: broken\nturns:\n  - text: hi\n    colour: red\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_ = scenariosMain([]string{"validate", bad}, &out)
	if !strings.Contains(out.String(), "FAIL "+bad) || !strings.Contains(out.String(), bad+":4:") || !strings.Contains(out.String(), "turns[0].colour") {
		t.Errorf("validate output does not name file, line and field:\n%s", out.String())
	}
}

func TestScenariosShowJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := scenariosMain([]string{"show", "tool-chain", "--json", "--seed", "9"}, &out); err != nil {
		t.Fatal(err)
	}
	var got scenarios.Shown
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("--json output is not JSON: %v", err)
	}
	if got.Seed != 9 || got.Scenario.Name != "tool-chain" || len(got.Expected.Turns) != 3 || got.EstimatedDurationMillis <= 0 {
		t.Errorf("--json = %+v", got)
	}
}

func TestScenariosHelp(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"list", "show", "validate"} {
		if err := scenariosMain([]string{sub, "--help"}, &bytes.Buffer{}); !errors.Is(err, pflag.ErrHelp) {
			t.Errorf("%s --help returned %v, want pflag.ErrHelp (exit 0)", sub, err)
		}
	}
	if want := fmt.Sprintf("exit %d if any is invalid", exitUsage); !strings.Contains(scenariosUsage, want) {
		t.Errorf("scenarios usage does not say validate's exit code (%q):\n%s", want, scenariosUsage)
	}
}
