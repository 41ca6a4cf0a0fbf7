package selfbench

import (
	"context"
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
		InterToken: 250 * time.Millisecond}, exe)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	_ = rep.WriteText(&text)
	t.Log(text.String())
	if len(rep.Failures) > 0 {
		t.Errorf("failures: %v; notes %v", rep.Failures, rep.Notes)
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
