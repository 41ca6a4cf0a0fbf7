package selfbench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol/simchat"
)

// figure returns the named figure of rep, failing the test when it is missing.
func figure(t *testing.T, rep *Report, name string) Figure {
	t.Helper()
	for _, f := range rep.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("%s: no figure %q in %+v", rep.Name, name, rep.Figures)
	return Figure{}
}

func TestBenchCodec(t *testing.T) {
	t.Parallel()
	rep, err := Codec(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := figure(t, rep, "events/s per core"); f.Value <= 0 || f.Unit != "M events/s" {
		t.Errorf("events/s per core: %+v", f)
	}
	if f := figure(t, rep, "CPU per event"); f.Value <= 0 {
		t.Errorf("CPU per event: %+v", f)
	}
	// The decoder promises zero allocations per event with a reused Event; a regression shows
	// here whatever the machine's load.
	if f := figure(t, rep, "allocations per event"); f.Met == nil || !*f.Met {
		t.Errorf("allocations per event: %+v", f)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"events/s per core", "M events/s", "ns", "allocations per event", "result: clean"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("printed report lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestPacedFrames(t *testing.T) {
	t.Parallel()
	frames, tail, err := pacedFrames("hello big world\n")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range frames {
		var v struct{ BlockID, Chunk string }
		if err := json.Unmarshal(bytes.TrimSuffix(bytes.TrimPrefix(f, []byte("data: ")), []byte("\n\n")), &v); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		if v.Chunk == "" {
			t.Errorf("empty chunk in %q", f)
		}
		text.WriteString(v.Chunk)
	}
	if len(frames) != 3 || text.String() != "hello big world" {
		t.Errorf("chunks %d joining to %q", len(frames), text.String())
	}
	if !bytes.Contains(tail, []byte(`"content":"hello big world"`)) || !bytes.HasSuffix(tail, []byte("data: \"[DONE]\"\n\n")) {
		t.Errorf("tail %q", tail)
	}
	if _, _, err := pacedFrames("  \n"); err == nil {
		t.Error("an empty answer was accepted")
	}
}

// TestPacedServerKeepsItsSchedule serves a three-word answer with a 50 ms TTFT: the headers
// come at once, the first chunk no earlier than TTFT after the request, the body ends with
// [DONE].
func TestPacedServerKeepsItsSchedule(t *testing.T) {
	t.Parallel()
	srv, err := NewPacedServer("hello big world", 50*time.Millisecond, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	url := serveFloor(t, srv)
	sent := time.Now()
	resp, err := http.Post(url, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get(simchat.ProtocolHeader) != simchat.ProtocolToken || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("headers %v", resp.Header)
	}
	first := make([]byte, 1)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(sent); took < 50*time.Millisecond {
		t.Errorf("first byte after %s, before the 50ms TTFT", took)
	}
	rest, _ := io.ReadAll(resp.Body)
	if body := string(first) + string(rest); !strings.Contains(body, `"chunk":"hello"`) || !strings.HasSuffix(body, "data: \"[DONE]\"\n\n") {
		t.Errorf("body %q", body)
	}
	if _, err := NewPacedServer(" ", 0, 0); err == nil {
		t.Error("an empty answer was accepted")
	}
	if _, err := NewPacedServer("x", -time.Second, 0); err == nil {
		t.Error("a negative TTFT was accepted")
	}
}

// TestReportWriteText prints a clean report and a failed one: figures with their targets,
// notes, and the verdict.
func TestReportWriteText(t *testing.T) {
	t.Parallel()
	rep := &Report{Name: "n", Command: "c", Method: "m"}
	rep.addTarget("met", 0.5, "ms", "≤ 1 ms", true)
	rep.addTarget("missed", 3, "ms", "≤ 1 ms", false)
	rep.add("plain", 1234.5678, "µs")
	rep.note("a %s", "note")
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== n\n   command: c\n   method: m\n", "target ≤ 1 ms: met", "target ≤ 1 ms: MISSED", "1234.6", "note: a note", "result: clean"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("lacks %q:\n%s", want, buf.String())
		}
	}
	rep.fail("%d leaks", 2)
	buf.Reset()
	_ = rep.WriteText(&buf)
	if !strings.Contains(buf.String(), "FAILED: 2 leaks") || strings.Contains(buf.String(), "result: clean") {
		t.Errorf("failed report:\n%s", buf.String())
	}
}

func TestFormatFigure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{42, "42"},          // integers as integers
		{0.0004, "4.0e-04"}, // tiny values in exponent form
		{123.456, "123.5"},  // large: one decimal
		{1.23456, "1.23"},   // units: two
		{0.123456, "0.123"}, // fractions: three
		{-2.5, "-2.50"},     // the sign does not change the form
	} {
		if got := formatFigure(tc.v); got != tc.want {
			t.Errorf("formatFigure(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestProcReadsThisProcess reads this process's own /proc files: RSS is positive, CPU time
// does not go backwards, and a missing field or process is an error naming it.
func TestProcReadsThisProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	rss, err := procStatusKiB(0, "VmRSS")
	if err != nil || rss <= 0 {
		t.Errorf("VmRSS %d, %v", rss, err)
	}
	if own, err := procStatusKiB(os.Getpid(), "VmRSS"); err != nil || own <= 0 {
		t.Errorf("VmRSS by pid %d, %v", own, err)
	}
	if _, err := procStatusKiB(0, "NoSuchField"); err == nil || !strings.Contains(err.Error(), "NoSuchField") {
		t.Errorf("missing field: %v", err)
	}
	a, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
	}
	if b, err := procCPU(os.Getpid()); err != nil || b < a {
		t.Errorf("CPU %s then %s (%v)", a, b, err)
	}
	if _, err := procCPU(1 << 30); err == nil {
		t.Error("a process that does not exist has a CPU time")
	}
}

// TestMachineCPUSteal reads /proc/stat's totals, which only grow, and takes steal's share of
// their growth.
func TestMachineCPUSteal(t *testing.T) {
	t.Parallel()
	a, ok := machineCPU()
	if !ok {
		t.Skip("no /proc/stat")
	}
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
	}
	b, ok := machineCPU()
	if !ok || b.total <= a.total || b.steal < a.steal || a.steal > a.total {
		t.Errorf("CPU times %+v then %+v: want totals that grow, steal within them", a, b)
	}
	if s := stealShare(a, b); s < 0 || s > 1 {
		t.Errorf("steal share %v: want 0–1", s)
	}
	if s := stealShare(cpuTimes{total: 100, steal: 10}, cpuTimes{total: 300, steal: 60}); s != 0.25 {
		t.Errorf("steal share %v, want 50 of 200 ticks = 0.25", s)
	}
	if s := stealShare(b, a); s != 0 {
		t.Errorf("steal share backwards %v, want 0", s)
	}
}

// TestStreamStartLatency takes first byte − arrival of one scenario's records, skipping other
// scenarios and records without a first byte.
func TestStreamStartLatency(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := []mockrecords.Record{
		{Scenario: "s", Start: t0, FirstByte: t0.Add(2 * time.Millisecond)},
		{Scenario: "s", Start: t0, FirstByte: t0.Add(4 * time.Millisecond)},
		{Scenario: "s", Start: t0},                                     // never answered
		{Scenario: "other", Start: t0, FirstByte: t0.Add(time.Second)}, // another scenario
	}
	h := streamStartLatency(recs, "s")
	if h.TotalCount() != 2 || !h.ValuesAreEquivalent(h.Max(), 4000) || quantileMs(h, 50, 0) != 2 {
		t.Errorf("count %d, max %d µs, p50 %v ms", h.TotalCount(), h.Max(), quantileMs(h, 50, 0))
	}
}

// TestSelect: bench WHAT's measurements, and what is wrong with a bad name or --part.
func TestSelect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, what   string
		parts, wires []string
		shards       int
		want         int // measurements selected
		wantErr      string
	}{
		// every measurement
		{"all", "all", nil, nil, 0, len(Measurements()), ""},
		// one by name
		{"one", "codec", nil, nil, 0, 1, ""},
		// abuse with one of its parts
		{"part", "abuse", []string{"bad-input"}, nil, 0, 1, ""},
		// fidelity on one provider wire
		{"wire", "fidelity", nil, []string{"anthropic"}, 0, 1, ""},
		// no such measurement
		{"unknown", "nope", nil, nil, 0, 0, `unknown measurement "nope"`},
		// parts of another measurement than abuse
		{"part of codec", "codec", []string{"bad-input"}, nil, 0, 0, "--part selects parts of the abuse"},
		// no such part
		{"unknown part", "abuse", []string{"nope"}, nil, 0, 0, `--part "nope"`},
		// wires of another measurement than fidelity
		{"wire of rate", "rate", nil, []string{"openai"}, 0, 0, "--wire selects the provider wires"},
		// no such wire
		{"unknown wire", "fidelity", nil, []string{"grpc"}, 0, 0, `--wire "grpc"`},
		// scale over generator shards
		{"shards", "scale", nil, nil, 2, 1, ""},
		// shards of another measurement than scale
		{"shards of rate", "rate", nil, nil, 2, 0, "--shards is for scale alone (got rate)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Select(tc.what, Options{Parts: tc.parts, Wires: tc.wires, Shards: tc.shards})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != tc.want {
				t.Fatalf("%d measurements, err %v; want %d", len(got), err, tc.want)
			}
		})
	}
}

// Every figure file says which machine it was measured on: the CPU model where Linux names it.
func TestEnvironmentNamesTheMachine(t *testing.T) {
	t.Parallel()
	env := Environment()
	if _, err := os.Stat("/proc/cpuinfo"); err == nil && env["cpu"] == "" {
		t.Errorf("environment %v lacks the CPU model /proc/cpuinfo names", env)
	}
	if env["cpus"] == "" || env["go"] == "" {
		t.Errorf("environment %v lacks the CPU count or the Go version", env)
	}
}
