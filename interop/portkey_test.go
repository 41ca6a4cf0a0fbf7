package interop

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestPortkey runs the standing interop scripts that use Portkey when STREAMBENCH_INTEROP is
// set: they install a gateway from npm (once, into a cache) and take ~1.5–3 minutes each, so
// `go test ./...` skips them. CI runs the scripts themselves when node and npm exist.
func TestPortkey(t *testing.T) {
	if os.Getenv("STREAMBENCH_INTEROP") == "" {
		t.Skip("set STREAMBENCH_INTEROP=1 to run the Portkey interop tests (needs node, npm and ~7 minutes)")
	}
	for _, c := range []struct {
		script string
		pass   string // the line a passing run prints
	}{
		// The runtime's provider hop: mock → Portkey → runtime → load (openai wire).
		{"portkey/run.sh", "\nPASS\n"},
		// The load generator as the gateway's client, on both provider wires.
		{"portkey/gateway-wires.sh", "\n== all wires PASS"},
		// The openai npm SDK on the mock's Responses wire, its faults, and the load through
		// Portkey's /v1/responses.
		{"openai-responses/run.sh", "\n== openai-responses interop PASS"},
	} {
		t.Run(c.script, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", c.script)
			cmd.WaitDelay = 30 * time.Second
			out, err := cmd.CombinedOutput()
			t.Logf("%s:\n%s", c.script, out)
			if strings.HasPrefix(string(out), "SKIP:") {
				t.Skip(strings.TrimSpace(string(out)))
			}
			if err != nil {
				t.Fatalf("%s: %v", c.script, err)
			}
			if !strings.Contains(string(out), c.pass) {
				t.Errorf("%s exited 0 without %q", c.script, strings.TrimSpace(c.pass))
			}
		})
	}
}
