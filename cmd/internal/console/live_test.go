package console

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/live"
	"github.com/streambench/streambench/measure"
)

// TestLiveMetricsServer: --metrics-addr serves the Live added to the config's outputs, after
// the outputs already set, and a bad address is bad input naming the flag.
func TestLiveMetricsServer(t *testing.T) {
	t.Parallel()
	earlier := loadgen.ProgressFunc(func(loadgen.Progress) {})
	cfg := loadgen.Config{Outputs: []loadgen.Output{earlier}}
	addr, stop, err := ServeMetrics("127.0.0.1:0", &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if len(cfg.Outputs) != 2 {
		t.Fatalf("outputs %v, want the one set before and the Live", cfg.Outputs)
	}
	exp, ok := cfg.Outputs[1].(loadgen.ProgressOutput)
	if !ok {
		t.Fatalf("the output added is a %T, not a ProgressOutput", cfg.Outputs[1])
	}
	exp.Progress(loadgen.Progress{Active: 3})
	resp, err := http.Get("http://" + addr + live.Path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\n"+measure.OpenStreams.Live()+" 3\n") {
		t.Errorf("GET %s: no %s 3 in:\n%s", live.Path, measure.OpenStreams.Live(), body)
	}

	_, _, err = ServeMetrics("127.0.0.1:notaport", &loadgen.Config{}, io.Discard)
	var bad *BadInput
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "--metrics-addr 127.0.0.1:notaport") {
		t.Errorf("bad address: got %v, want bad input naming --metrics-addr", err)
	}
	// No address, no server, and the outputs are left alone.
	var none loadgen.Config
	if _, stop, err := ServeMetrics("", &none, io.Discard); err != nil || none.Outputs != nil {
		t.Errorf("empty address: err %v, outputs %v", err, none.Outputs)
	} else {
		stop()
	}
}
