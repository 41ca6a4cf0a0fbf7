package loadgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWorkloadConfig: the workload's defaults, its dialect options and each bad setting,
// named by its flag.
func TestWorkloadConfig(t *testing.T) {
	t.Parallel()
	// ok is a workload that resolves: the flags' defaults that are not zero.
	ok := Workload{TimeScale: 1, SnapshotEvery: time.Second}
	with := func(f func(*Workload)) Workload { w := ok; f(&w); return w }
	for _, tc := range []struct {
		name    string
		w       Workload
		check   func(Config) bool
		wantErr string
	}{
		// no shape and no length: the default mix's clients for the default duration
		{"defaults", ok, func(c Config) bool {
			return c.Clients == DefaultClients && c.Duration == DefaultDuration && c.MixName == "default" && c.Options == nil
		}, ""},
		// a rate is the shape, sessions the length: no defaults added
		{"open loop", with(func(w *Workload) { w.Rate, w.Sessions = 5, 10 }), func(c Config) bool {
			return c.Clients == 0 && c.Duration == 0
		}, ""},
		// --option and the shorthands become one option set
		{"options", with(func(w *Workload) {
			w.Options, w.Dialect, w.Slug, w.Path = []string{"k=v", "optedIn=true", "policy=tools"}, "sim-chat", "s", "/p/{slug}"
		}), func(c Config) bool {
			return c.Options["k"] == "v" && c.Options["optedIn"] == "true" && c.Options["policy"] == "tools" && c.Options["path"] == "/p/{slug}"
		}, ""},
		// a time scale that is no factor
		{"time scale", with(func(w *Workload) { w.TimeScale = 0 }), nil, "--time-scale 0"},
		// an option without a value
		{"option", with(func(w *Workload) { w.Options = []string{"k"} }), nil, `--option "k"`},
		// an unknown dialect
		{"dialect", with(func(w *Workload) { w.Dialect = "nope" }), nil, "--dialect:"},
		// a path for a mix of several dialects
		{"path", with(func(w *Workload) { w.Path = "/x" }), nil, "--path"},
		// a mix file that is not there
		{"mix", with(func(w *Workload) { w.Mix = "testdata/no-such-mix.yaml" }), nil, "--mix:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tc.w.Config()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Fatalf("config %+v, err %v", cfg, err)
			}
		})
	}
}

// TestConfigSmall: which runs play the mock and runtime in process.
func TestConfigSmall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want bool
	}{
		// few sessions, whatever the clients
		{"sessions", Config{Sessions: 200, Clients: 1000}, true},
		// a low rate
		{"low rate", Config{Rate: 20}, true},
		// a high rate
		{"high rate", Config{Rate: 21}, false},
		// a ramp is never small
		{"stages", Config{Stages: []Stage{{Duration: time.Second, Target: 1}}}, false},
		// few clients
		{"clients", Config{Clients: 50}, true},
		// many clients
		{"many clients", Config{Clients: 51}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.cfg.Small(); got != tc.want {
				t.Fatalf("Small() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWorkloadScenarioFiles: --scenario files are the whole mix, equally weighted, through
// the mix's profiles (here the one of --dialect), and join the library; beside an endpoint
// workload, or when a file is bad, the error names the flag and the file.
func TestWorkloadScenarioFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.yaml")
	os.WriteFile(file, []byte("name: my-answer\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: {tokens: 5}\n"), 0o600)
	w := Workload{ScenarioFiles: []string{file}, Dialect: "sim-chat", TimeScale: 1, SnapshotEvery: 1}
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Mix.ScenarioNames(); len(got) != 1 || got[0] != "my-answer" {
		t.Errorf("the mix plays %v, want only my-answer", got)
	}
	if _, ok := cfg.Library.Get("my-answer"); !ok {
		t.Error("the library lacks the file's scenario")
	}
	for _, p := range cfg.Mix.Profiles {
		if p.Dialect != "sim-chat" || len(p.Scenarios) != 0 {
			t.Errorf("profile %s (%s) keeps scenarios of its own: %v", p.Name, p.Dialect, p.Scenarios)
		}
	}
	cfg.Target = "http://127.0.0.1:1"
	if err := cfg.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: {tokens: -3}\n"), 0o600)
	for _, tc := range []struct {
		w    Workload
		want string
	}{
		// a bad file: the flag, the file and its line
		{Workload{ScenarioFiles: []string{bad}}, "--scenario: " + bad + ":4"},
		// a script and a real model's requests
		{Workload{ScenarioFiles: []string{file}, Dialect: "openai-chat", OutputTokens: "8"}, "--scenario and the endpoint workload"},
	} {
		tc.w.TimeScale, tc.w.SnapshotEvery = 1, 1
		if _, err := tc.w.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
}
