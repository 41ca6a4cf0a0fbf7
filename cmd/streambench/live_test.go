package main

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/live"
)

// TestLiveMetricsServer: --metrics-addr serves the Live fed by the config's hooks, after the
// hooks already set (both run), and a bad address is a usage error naming the flag.
func TestLiveMetricsServer(t *testing.T) {
	t.Parallel()
	var cfg loadgen.Config
	var earlier int
	cfg.OnProgress = func(loadgen.Progress) { earlier++ }
	addr, stop, err := startLiveMetrics("127.0.0.1:0", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cfg.OnProgress(loadgen.Progress{Active: 3})
	if earlier != 1 {
		t.Errorf("the hook set before ran %d times, want 1", earlier)
	}
	resp, err := http.Get("http://" + addr + live.Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\n"+live.OpenStreams+" 3\n") {
		t.Errorf("GET %s: no %s 3 in:\n%s", live.Path, live.OpenStreams, body)
	}

	_, _, err = startLiveMetrics("127.0.0.1:notaport", &loadgen.Config{})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "--metrics-addr 127.0.0.1:notaport") {
		t.Errorf("bad address: got %v, want a usage error naming --metrics-addr", err)
	}
	// No address, no server, and the hooks are left alone.
	var none loadgen.Config
	if _, stop, err := startLiveMetrics("", &none); err != nil || none.OnProgress != nil {
		t.Errorf("empty address: err %v, hooks set %v", err, none.OnProgress != nil)
	} else {
		stop()
	}
}
