package selfbench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/streambench/streambench/sse"
)

// codecFrame is a typical ~60-byte sim-chat answer frame.
const codecFrame = "data: {\"blockId\":\"b1\",\"chunk\":\"Hello there, general\"}\n\n"

// repeatReader serves block over and over, so b.N events need no b.N-sized input.
type repeatReader struct {
	block []byte
	off   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.block[r.off:])
	r.off = (r.off + n) % len(r.block)
	return n, nil
}

// Codec decodes ~60-byte data frames with testing.Benchmark: events/s per core of process CPU time.
func Codec(ctx context.Context, o Options) (*Report, error) {
	rep := &Report{
		Name:    "codec: SSE decode of ~60-byte data: frames",
		Command: "streambench bench codec",
		Method: "testing.Benchmark over sse.Decoder.Next with a reused Event, frames of " +
			fmt.Sprint(len(codecFrame)) + " bytes from large reads; CPU from getrusage (one goroutine, so CPU time is the loop's)",
	}
	block := []byte(strings.Repeat(codecFrame, 64<<10/len(codecFrame)+1))
	var cpuNanos, events int64
	var decodeErr error
	res := testing.Benchmark(func(b *testing.B) {
		d := sse.NewDecoder(&repeatReader{block: block})
		var ev sse.Event
		b.ReportAllocs()
		before := roleCPU(0)
		b.ResetTimer()
		for range b.N {
			if err := d.Next(&ev); err != nil {
				decodeErr = err
				b.FailNow()
			}
		}
		b.StopTimer()
		cpuNanos, events = (roleCPU(0) - before).Nanoseconds(), int64(b.N)
	})
	if decodeErr != nil {
		return nil, fmt.Errorf("decode: %w", decodeErr)
	}
	if events == 0 || res.N == 0 {
		return nil, fmt.Errorf("the benchmark decoded nothing")
	}
	cpuPerEvent := float64(cpuNanos) / float64(events)
	wallPerEvent := float64(res.T.Nanoseconds()) / float64(res.N)
	perCore := 1e9 / max(cpuPerEvent, 1e-3) / 1e6
	rep.addTarget("events/s per core", perCore, "M events/s", "≥ 10 M", perCore >= 10)
	rep.addTarget("CPU per event", cpuPerEvent, "ns", "≤ 100 ns", cpuPerEvent <= 100)
	rep.add("wall time per event", wallPerEvent, "ns")
	// The read buffer grows during the first reads: a few allocations, 0 per event rounded.
	allocs := float64(res.MemAllocs) / float64(res.N)
	rep.addTarget("allocations per event", allocs, "allocs", "0 (rounded, as -benchmem)", res.AllocsPerOp() == 0)
	rep.add("events decoded", float64(res.N), "events")
	if wallPerEvent > 1.5*cpuPerEvent {
		rep.note("wall time exceeds CPU time by %.1fx: other processes were using the cores", wallPerEvent/cpuPerEvent)
	}
	return rep, nil
}
