package sse

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// repeatReader serves block over and over, so benchmarks decode b.N events without building a
// b.N-sized input. If chunk > 0 each Read returns at most chunk bytes.
type repeatReader struct {
	block []byte
	off   int
	chunk int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.chunk > 0 && len(p) > r.chunk {
		p = p[:r.chunk]
	}
	n := copy(p, r.block[r.off:])
	r.off = (r.off + n) % len(r.block)
	return n, nil
}

// dataFrame is a typical ~60-byte sim-chat answer frame.
const dataFrame = "data: {\"blockId\":\"b1\",\"chunk\":\"Hello there, general\"}\n\n"

// namedFrames is an anthropic-style stream with several event names.
const namedFrames = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"yo\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: ping\ndata: {\"type\": \"ping\"}\n\n"

func benchDecode(b *testing.B, frames string, perBlock, chunk int) {
	block := []byte(strings.Repeat(frames, 64<<10/len(frames)+1))
	d := NewDecoder(&repeatReader{block: block, chunk: chunk})
	var e Event
	b.SetBytes(int64(len(frames) / perBlock))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := processCPUNanos()
	for range b.N {
		if err := d.Next(&e); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, cpu0, cpuOK)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mevents/s")
}

// reportCPU adds a cpu-ns/op metric: process CPU time per operation since cpu0. The
// benchmarks are single-goroutine and allocation-free, so this is the loop's own cost.
func reportCPU(b *testing.B, cpu0 int64, ok bool) {
	if cpu1, ok1 := processCPUNanos(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkDecodeData decodes ~60-byte unnamed data frames from large reads.
func BenchmarkDecodeData(b *testing.B) { benchDecode(b, dataFrame, 1, 0) }

// BenchmarkDecodeDataFrameReads decodes the same frames arriving one frame per Read, as on a
// live stream where each frame is flushed separately.
func BenchmarkDecodeDataFrameReads(b *testing.B) { benchDecode(b, dataFrame, 1, len(dataFrame)) }

// BenchmarkDecodeManyStreams decodes the same frames, one frame per Read, from many streams in
// turn: one event from each decoder before the next event from the first, as a load generator
// holding thousands of busy streams does, so each event finds its decoder out of the cache.
func BenchmarkDecodeManyStreams(b *testing.B) {
	for _, streams := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			decs := make([]*Decoder, streams)
			for i := range decs {
				decs[i] = NewDecoder(&repeatReader{block: []byte(strings.Repeat(dataFrame, 4)), chunk: len(dataFrame)})
			}
			var e Event
			b.SetBytes(int64(len(dataFrame)))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, cpuOK := processCPUNanos()
			i := 0
			for range b.N {
				if err := decs[i].Next(&e); err != nil {
					b.Fatal(err)
				}
				if i++; i == streams {
					i = 0
				}
			}
			b.StopTimer()
			reportCPU(b, cpu0, cpuOK)
		})
	}
}

// BenchmarkDecodeDataCRLF decodes the same frames with CRLF line ends.
func BenchmarkDecodeDataCRLF(b *testing.B) {
	benchDecode(b, strings.ReplaceAll(dataFrame, "\n", "\r\n"), 1, 0)
}

// BenchmarkDecodeDataCR decodes the same frames with lone-CR line ends.
func BenchmarkDecodeDataCR(b *testing.B) {
	benchDecode(b, strings.ReplaceAll(dataFrame, "\n", "\r"), 1, 0)
}

// BenchmarkDecodeNamed decodes anthropic-style named events (five names cycling).
func BenchmarkDecodeNamed(b *testing.B) { benchDecode(b, namedFrames, 5, 0) }

// BenchmarkEncodeEvent validates and builds named events with id and two data lines.
func BenchmarkEncodeEvent(b *testing.B) {
	ev := &Event{Type: "content_block_delta", ID: "42", Data: []byte("{\"type\":\"content_block_delta\"}\n{\"x\":1}")}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	cpu0, cpuOK := processCPUNanos()
	for range b.N {
		if err := ev.Validate(); err != nil {
			b.Fatal(err)
		}
		buf = AppendEvent(buf[:0], ev)
	}
	reportCPU(b, cpu0, cpuOK)
}

// BenchmarkAppendEvent builds frames into a reused buffer.
func BenchmarkAppendEvent(b *testing.B) {
	ev := &Event{Data: []byte(`{"blockId":"b1","chunk":"Hello there, general"}`)}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	cpu0, cpuOK := processCPUNanos()
	for range b.N {
		buf = AppendEvent(buf[:0], ev)
	}
	reportCPU(b, cpu0, cpuOK)
	if !bytes.HasSuffix(buf, []byte("\n\n")) {
		b.Fatal("bad frame")
	}
}

// BenchmarkNewStream measures the per-stream setup cost: a decoder plus its first event.
func BenchmarkNewStream(b *testing.B) {
	in := []byte(dataFrame)
	var e Event
	b.ReportAllocs()
	for range b.N {
		d := NewDecoder(bytes.NewReader(in))
		if err := d.Next(&e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResetStream measures per-stream setup when a worker reuses one decoder.
func BenchmarkResetStream(b *testing.B) {
	in := []byte(dataFrame)
	r := bytes.NewReader(in)
	d := NewDecoder(r)
	var e Event
	b.ReportAllocs()
	for range b.N {
		r.Reset(in)
		d.Reset(r)
		if err := d.Next(&e); err != nil {
			b.Fatal(err)
		}
	}
}
