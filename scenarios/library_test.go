package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestEmbeddedLibrary(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	required := []string{
		"plain-answer", "thinking-answer", "preamble-tool", "parallel-tools", "tool-chain",
		"tool-error", "long-answer", "slow-ttft", "provider-error-midstream", "provider-429",
		"abort-mid-answer", "abort-during-tool", "abort-during-thinking", "stop-mid-answer",
		"stall-mid-answer",
	}
	for _, name := range required {
		s, ok := lib.Get(name)
		if !ok {
			t.Errorf("embedded library lacks %s", name)
			continue
		}
		if s.Name != name || s.Description == "" || lib.File(name) != name+".yaml" || len(lib.Source(name)) == 0 {
			t.Errorf("%s: name %q, description %q, file %q", name, s.Name, s.Description, lib.File(name))
		}
	}
	names := lib.Names()
	if !slices.IsSorted(names) || len(names) != lib.Len() {
		t.Errorf("Names() = %v, want sorted with %d entries", names, lib.Len())
	}
	names[0] = "mutated"
	if lib.Names()[0] == "mutated" {
		t.Error("Names() exposes the library's own slice")
	}
	if Embedded() != lib {
		t.Error("Embedded() parsed the library twice")
	}
}

// TestLibraryShapes pins the properties other packages rely on.
func TestLibraryShapes(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	get := func(name string) *Scenario { s, _ := lib.Get(name); return s }
	if s := get("parallel-tools"); len(s.Turns[0].ToolCalls) != 2 {
		t.Error("parallel-tools must have two calls in one turn")
	}
	if s := get("tool-chain"); len(s.Turns) != 3 {
		t.Error("tool-chain must have three turns")
	}
	if s := get("tool-error"); s.Turns[0].ToolCalls[0].Outcome != OutcomeError {
		t.Error("tool-error's tool must fail")
	}
	if s := get("long-answer"); s.Turns[0].Text.Tokens != 2000 {
		t.Error("long-answer must be 2,000 tokens")
	}
	// Abort scenarios must leave the client time to act mid-way.
	for _, name := range []string{"abort-mid-answer", "stop-mid-answer"} {
		s := get(name)
		trigger := s.Client.Abort
		if trigger == nil {
			trigger = s.Client.Stop
		}
		if trigger.AfterChunks*3 > s.Turns[0].Text.Tokens {
			t.Errorf("%s triggers after %d of %d chunks; want well before the end", name, trigger.AfterChunks, s.Turns[0].Text.Tokens)
		}
	}
	if s := get("abort-during-thinking"); s.Turns[0].Thinking.Tokens < 100 {
		t.Error("abort-during-thinking needs a long thinking phase")
	}
	for _, seed := range testSeeds {
		if d := get("abort-during-tool").Render(seed).Turns[0].ToolCalls[0].Duration; d.Seconds() < 1 {
			t.Errorf("abort-during-tool tool runs only %v with seed %d", d, seed)
		}
	}
	// Tool durations stay in the realistic 200ms-1.5s band.
	for _, name := range lib.Names() {
		for _, seed := range testSeeds {
			for _, st := range get(name).Render(seed).Turns {
				for _, c := range st.ToolCalls {
					if c.Name == DelegateTool {
						continue // a swarm delegation lasts as long as its children (TestSwarmLibrary)
					}
					if c.Duration.Milliseconds() < 200 || c.Duration.Milliseconds() > 1500 {
						t.Errorf("%s seed %d: tool %s runs %v", name, seed, c.Name, c.Duration)
					}
				}
			}
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDir(t *testing.T) {
	t.Parallel()
	one := func(name string) string { return "name: " + name + "\nturns:\n  - text: hi\n" }
	tests := []struct {
		name    string
		files   map[string]string
		want    []string
		wantErr []string
	}{
		// Both extensions load; other files are ignored.
		{"yaml and yml", map[string]string{"a.yaml": one("a"), "b.yml": one("b"), "notes.txt": "x"}, []string{"a", "b"}, nil},
		// Duplicate names name both files.
		{"duplicate", map[string]string{"a.yaml": one("same"), "b.yaml": one("same")}, nil, []string{"b.yaml", "a.yaml", `"same"`}},
		// An invalid file is reported with its line.
		{"invalid", map[string]string{"a.yaml": one("a"), "bad.yaml": "name: x\nturns: []\n"}, nil, []string{"bad.yaml:2:"}},
		// An empty directory is an error, not an empty library.
		{"empty", map[string]string{}, nil, []string{"no *.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeFiles(t, tt.files)
			lib, err := LoadDir(dir)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("LoadDir accepted %v", tt.files)
				}
				for _, w := range append(tt.wantErr, dir) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := lib.Names(); !slices.Equal(got, tt.want) {
				t.Errorf("names %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := LoadDir(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("LoadDir of a missing directory succeeded")
	}
}

func TestLibraryConcurrentUse(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for _, name := range lib.Names() {
				s, _ := lib.Get(name)
				_ = s.Render(uint64(i)).Expected()
			}
		})
	}
	wg.Wait()
}
