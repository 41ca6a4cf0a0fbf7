package leakcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestLeakGaugeClass: which gauges the check compares, and whether pools may keep some.
func TestLeakGaugeClass(t *testing.T) {
	t.Parallel()
	gauge, untyped, counter := dto.MetricType_GAUGE, dto.MetricType_UNTYPED, dto.MetricType_COUNTER
	for _, c := range []struct {
		name    string
		typ     dto.MetricType
		checked bool
		class   toleranceClass
	}{
		{"process_open_fds", gauge, true, pooled},                       // every process collector
		{"process_open_fds", untyped, true, pooled},                     // an exporter that writes no TYPE line
		{"go_goroutines", gauge, true, pooled},                          // Go client
		{"go_threads", gauge, false, exact},                             // Go never ends threads: a high-water mark, not a live count
		{"nodejs_active_requests", gauge, true, pooled},                 // prom-client's per-type family, like its _total
		{"jvm_threads_live_threads", gauge, true, pooled},               // Micrometer
		{"nodejs_active_handles_total", gauge, true, pooled},            // prom-client: a gauge despite _total
		{"nodejs_active_requests_total", gauge, true, pooled},           // prom-client
		{"nodejs_active_resources_total", gauge, true, pooled},          // prom-client
		{"http_server_active_requests", gauge, true, exact},             // OpenTelemetry: requests must all end
		{"streambench_runtime_client_streams_open", gauge, true, exact}, // our runtime: named for live streams
		{"streambench_mock_queue_depth", gauge, true, exact},            // our mock
		{"process_max_fds", gauge, false, exact},                        // a limit, not a count
		{"nodejs_eventloop_lag_seconds", gauge, false, exact},           // a duration
		{"queue_wait_seconds", gauge, false, exact},                     // a duration despite "queue"
		{"process_resident_memory_bytes", gauge, false, exact},          // a size
		{"streams_opened_total", counter, false, exact},                 // counters only grow
		{"some_untyped_open_thing", untyped, false, exact},              // unknown names need a gauge type
	} {
		class, checked := leakGaugeClass(c.name, c.typ)
		if checked != c.checked || (checked && class != c.class) {
			t.Errorf("%s (%v): checked %v class %v, want %v %v", c.name, c.typ, checked, class, c.checked, c.class)
		}
	}
}

// TestParseGaugesNodeExposition: prom-client's default metrics yield the gauges of live
// resources, summed over labels, and nothing else.
func TestParseGaugesNodeExposition(t *testing.T) {
	t.Parallel()
	g, err := parseGauges(readFixture(t, "node-before.prom"))
	if err != nil {
		t.Fatal(err)
	}
	want := gauges{
		"process_open_fds": 23, "nodejs_active_handles_total": 3, "nodejs_active_handles": 3,
		"nodejs_active_requests_total":  0, // its per-type family has no samples, so the parser drops it
		"nodejs_active_resources_total": 6, "nodejs_active_resources": 6,
	}
	if len(g) != len(want) {
		t.Errorf("gauges %v, want %v", g, want)
	}
	for n, v := range want {
		if g[n] != v {
			t.Errorf("%s = %g, want %g (all: %v)", n, g[n], v, g)
		}
	}
}

func TestParseGauges(t *testing.T) {
	t.Parallel()
	g, err := parseGauges(`# HELP go_goroutines Goroutines.
# TYPE go_goroutines gauge
go_goroutines 42
# TYPE streambench_runtime_client_streams_open gauge
streambench_runtime_client_streams_open{dialect="sim-chat"} 3
streambench_runtime_client_streams_open{dialect="compose"} 2
# TYPE process_max_fds gauge
process_max_fds 1024
# TYPE streambench_runtime_tools_cancelled_total counter
streambench_runtime_tools_cancelled_total 7
# TYPE go_memstats_alloc_bytes gauge
go_memstats_alloc_bytes 1e6
`)
	if err != nil {
		t.Fatal(err)
	}
	want := gauges{"go_goroutines": 42, "streambench_runtime_client_streams_open": 5}
	if len(g) != len(want) {
		t.Errorf("gauges %v, want %v (counters, limits and memory are not leak gauges)", g, want)
	}
	for k, v := range want {
		if g[k] != v {
			t.Errorf("%s = %v, want %v (summed over labels)", k, g[k], v)
		}
	}
	if _, err := parseGauges("go_goroutines{ 1"); err == nil {
		t.Errorf("malformed metrics text parsed without error")
	}
}

// TestVerifyFileMissing: a baseline file that is not there is an error before any gauge is
// read.
func TestVerifyFileMissing(t *testing.T) {
	t.Parallel()
	_, _, err := (&Probe{MockURL: "http://127.0.0.1:1"}).VerifyFile(t.Context(), filepath.Join(t.TempDir(), "none.json"))
	if err == nil || !strings.Contains(err.Error(), "leak baseline") {
		t.Fatalf("err = %v, want a leak baseline error", err)
	}
}

// FuzzParseGauges: arbitrary /metrics text never panics the leak check.
func FuzzParseGauges(f *testing.F) {
	f.Add("# TYPE go_goroutines gauge\ngo_goroutines 12\n")
	f.Add("# TYPE x_open gauge\nx_open{a=\"1\"} 1\nx_open{a=\"2\"} 2\n")
	f.Add("garbage {{{")
	f.Fuzz(func(t *testing.T, text string) {
		_, _ = parseGauges(text)
	})
}

// readFixture reads a Prometheus text fixture from testdata.
func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parseGauges reads the Prometheus text format and keeps the leak-relevant gauges.
func parseGauges(text string) (gauges, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	return gaugesOf(fams), nil
}
