package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/mockprovider"
)

// TestRunSizedToMachine: run with no shape gets clients from the machine's cores (40 a core,
// at most 1,000) and says so in one line; --clients, --rate or --stages shape the load
// themselves, and load keeps its fixed default.
func TestRunSizedToMachine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		cores   int
		clients int    // the config's clients
		note    string // in the line printed; "" for none
	}{
		{nil, 2, 80, "sized to this machine's 2 cores"},   // this VM
		{nil, 1, 40, "1 cores"},                           // one core still gets its share
		{nil, 8, 320, "8 cores"},                          // grows with the cores
		{nil, 64, loadgen.DefaultClients, "at most 1000"}, // capped at the fixed default
		{[]string{"--sessions", "10"}, 2, 80, "2 cores"},  // a length is not a shape
		{[]string{"--clients", "7"}, 2, 7, ""},            // explicit clients win
		{[]string{"--clients", "500"}, 2, 500, ""},        // even above the machine's size
		{[]string{"--rate", "5"}, 2, 0, ""},               // an open loop has no clients
		{[]string{"--stages", "1s:10,1s:0"}, 2, 0, ""},    // nor a ramp
	} {
		fs := newFlagSet("run", "test")
		w := workload.Add(fs)
		if err := parseFlags(fs, tc.args); err != nil {
			t.Fatal(err)
		}
		note := w.SizeToMachine(tc.cores)
		cfg, err := config(w)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Clients != tc.clients || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
			t.Errorf("run %q on %d cores: %d clients, line %q; want %d clients and a line with %q", tc.args, tc.cores, cfg.Clients, note, tc.clients, tc.note)
		}
	}
	// load is not sized: its target is elsewhere, its default stays DefaultClients.
	fs := newFlagSet("load", "test")
	w := workload.Add(fs)
	if err := parseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	if cfg, err := config(w); err != nil || cfg.Clients != loadgen.DefaultClients {
		t.Errorf("load with no shape: %d clients, %v; want %d", cfg.Clients, err, loadgen.DefaultClients)
	}
}

// TestRunEveryDialect: run --dialect D, without --slug, passes for each dialect the
// reference runtime serves, and for each provider wire, played on the mock alone (they once
// 404'd every session at the runtime); one the default mix has no profile for (ag-ui, langgraph) plays
// the runtime's openai-all and anthropic-all agents (it once 404'd every session at the
// preflight, its one target named after the dialect), while load keeps that name.
func TestRunEveryDialect(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"sim-chat", "sim-canvas", "compose", "ag-ui", "langgraph", "openai-chat", "anthropic-messages", "openai-responses"} {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			code, out := runMain(t, "run", "--dialect", d, "--sessions", "30", "--clients", "6", "--time-scale", "0.2", "--quiet", "--out", "-")
			if code != exitOK || !strings.Contains(out, "verdict: PASS") {
				t.Errorf("run --dialect %s: exit %d\n%s", d, code, out)
			}
		})
	}
	for _, tc := range []struct {
		cmd     string
		targets []string
	}{{"run", []string{"openai-all", "anthropic-all"}}, {"load", []string{"ag-ui"}}} {
		fs := newFlagSet(tc.cmd, "test")
		w := workload.Add(fs)
		if err := parseFlags(fs, []string{"--dialect", "ag-ui"}); err != nil {
			t.Fatal(err)
		}
		if tc.cmd == "run" {
			w.DefaultTargets = []string{"openai-all", "anthropic-all"}
		}
		cfg, err := config(w)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tg := range cfg.Mix.Profiles[0].Targets {
			got = append(got, tg.Slug)
		}
		if strings.Join(got, ",") != strings.Join(tc.targets, ",") {
			t.Errorf("%s --dialect ag-ui: targets %q, want %q", tc.cmd, got, tc.targets)
		}
	}
}

// TestMockBanner: the mock's start-up line names every provider wire it serves, the
// Responses API's too (it once listed only the chat and messages routes).
func TestMockBanner(t *testing.T) {
	t.Parallel()
	b := mockBanner(3)
	for _, path := range []string{mockprovider.PathOpenAI, mockprovider.PathAnthropic, mockprovider.PathResponses, mockprovider.PathModels} {
		if !strings.Contains(b, path) {
			t.Errorf("banner %q does not name %s", b, path)
		}
	}
}

// TestRunRefusesWhatNoStackServes: run refuses, before starting anything (exit 104, naming
// what), runtime switches for a run on the mock alone and a mix of provider wires and runtime
// dialects, which no one stack serves (the wires' sessions 404'd at the runtime).
func TestRunRefusesWhatNoStackServes(t *testing.T) {
	t.Parallel()
	mix := filepath.Join(t.TempDir(), "mix.yaml")
	if err := os.WriteFile(mix, []byte("name: both\nseed: 3\nscenarios: {plain-answer: 1}\nprofiles:\n"+
		"  - {name: a, dialect: openai-chat, weight: 1, targets: [{slug: s}]}\n  - {name: b, dialect: sim-chat, weight: 1, targets: [{slug: s}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dialect", "openai-chat", "--fault", "no-reset"}, "--fault configures the reference runtime"},
		{[]string{"--dialect", "anthropic-messages", "--tls"}, "--tls configures the reference runtime"},
		{[]string{"--mix", mix}, "provider wires (openai-chat), which the mock alone serves, and runtime dialects (sim-chat)"},
	} {
		code, out := runMain(t, append([]string{"run", "--sessions", "2", "--out", "-"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(out, tc.want) || strings.Contains(out, "mock http") {
			t.Errorf("run %v: exit %d, want %d saying %q before starting a stack:\n%s", tc.args, code, exitUsage, tc.want, out)
		}
	}
}
