package selfbench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScaleShards runs bench scale --shards 2 for real at a tiny size: the streambench binary
// built once, one mock, two runtimes and two `load --shard I/2` generators as child processes,
// their results merged. Both shards ran, the merged peak is every stream, nothing failed, and
// the report's command line says --shards 2.
func TestScaleShards(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs five child processes")
	}
	exe := filepath.Join(t.TempDir(), "streambench")
	build := exec.Command("go", "build", "-o", exe, "github.com/streambench/streambench/cmd/streambench")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep, err := scaleShards(ctx, Options{Shards: 2, Streams: 80, Ramp: time.Second, StreamLength: 3 * time.Second,
		InterToken: 250 * time.Millisecond, KeepDir: true}, exe)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	_ = rep.WriteText(&text)
	t.Log(text.String())
	if len(rep.Failures) > 0 {
		t.Errorf("failures: %v; notes %v", rep.Failures, rep.Notes)
	}
	// The children's output is kept: each runtime's log holds its whole standard error.
	var work string
	for _, n := range rep.Notes {
		if rest, ok := strings.CutPrefix(n, "children's logs, shard results and the scenario directory kept: "); ok {
			work, _, _ = strings.Cut(rest, " ")
			if _, scen, ok := strings.Cut(rest, "scenarios in "); ok {
				defer os.RemoveAll(strings.TrimSuffix(scen, ")"))
			}
		}
	}
	if work == "" {
		t.Fatalf("no note names the kept directory: %v", rep.Notes)
	}
	defer os.RemoveAll(work)
	for _, name := range []string{"mock", "runtime-0", "runtime-1"} {
		if b, err := os.ReadFile(filepath.Join(work, "logs", name+".log")); err != nil || !strings.Contains(string(b), "listening on") {
			t.Errorf("%s.log: %v, no listening line in %q", name, err, b)
		}
	}
	if !strings.Contains(rep.Command, "--shards 2") || !strings.Contains(rep.Command, "--streams 80") {
		t.Errorf("command %q lacks --shards 2 or --streams 80", rep.Command)
	}
	want := map[string]float64{"shards": 2, "peak concurrent streams": 80, "sessions ok": 80, "sessions failed": 0,
		"transport errors": 0, "other error outcomes": 0, "violations": 0}
	got := map[string]float64{}
	for _, f := range rep.Figures {
		got[f.Name] = f.Value
	}
	for name, v := range want {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (reported: %t), want %v", name, g, ok, v)
		}
	}
	if got["frames received"] < 80*10 {
		t.Errorf("frames received %v, want at least 10 per stream", got["frames received"])
	}
	if got["generators' RSS at peak (sum)"] <= 0 || got["runtimes' RSS at peak (sum)"] <= 0 || got["mock RSS at peak"] <= 0 {
		t.Errorf("RSS figures missing: %v", got)
	}
}
