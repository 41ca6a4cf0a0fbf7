package main

import (
	"testing"
)

// TestBenchFloorSmall runs the floor through the command: the naive server and the relay as
// child processes of this binary (`bench floor-server`, `bench floor-relay`), every event
// delivered over one hop and two.
func TestBenchFloorSmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "floor", "--streams", "20", "--duration", "1s")
	for _, hop := range []string{"one-hop", "two-hop"} {
		if f := figure(t, rep, "20 streams, "+hop+": events delivered"); f.Value != 20*20 {
			t.Errorf("%s: %v events delivered, want 20 streams × 20", hop, f.Value)
		}
		if f := figure(t, rep, "20 streams, "+hop+": CPU per event, all processes"); f.Value <= 0 {
			t.Errorf("%s: CPU per event %v", hop, f.Value)
		}
	}
	if f := figure(t, rep, "20 streams, two-hop: relay CPU per event"); f.Value <= 0 {
		t.Errorf("relay CPU per event %v: the relay's CPU was not read", f.Value)
	}
}

// TestBenchPathSmall runs the path beside its floor and checks the ratio carries a verdict.
func TestBenchPathSmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "path", "--streams", "20", "--duration", "1s")
	noFailures(t, rep)
	if f := figure(t, rep, "20 streams: answer chunks delivered"); f.Value != 20*20 {
		t.Errorf("%v answer chunks, want 20 streams × 20 tokens", f.Value)
	}
	if f := figure(t, rep, "20 streams: path ÷ two-hop floor, CPU"); f.Value <= 0 || f.Met == nil || f.Target == "" {
		t.Errorf("path ÷ floor: %+v", f)
	}
	// The minimal client played the same streams through the same mock and runtime, before
	// and after the generator: its answer chunks, not the final frames.
	if f := figure(t, rep, "20 streams: minimal client on the same path, answer chunks delivered (two runs)"); f.Value != 2*20*20 {
		t.Errorf("%v answer chunks to the minimal client, want 2 runs × 20 streams × 20 tokens", f.Value)
	}
	if f := figure(t, rep, "20 streams: generator ÷ minimal client on the same path, CPU"); f.Value <= 0 || f.Met == nil || f.Target == "" {
		t.Errorf("generator ÷ minimal client: %+v", f)
	}
	// So did the client written on net/http, whose ratio is reported without a target.
	if f := figure(t, rep, "20 streams: net/http client on the same path, answer chunks delivered (two runs)"); f.Value != 2*20*20 {
		t.Errorf("%v answer chunks to the net/http client, want 2 runs × 20 streams × 20 tokens", f.Value)
	}
	if f := figure(t, rep, "20 streams: generator ÷ net/http client on the same path, CPU"); f.Value <= 0 || f.Met != nil {
		t.Errorf("generator ÷ net/http client: %+v", f)
	}
}
