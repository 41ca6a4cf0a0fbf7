package mockprovider

import (
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"
)

// BenchmarkStreamStack opens 300 streams on their own HTTP/1.1 connections, reads each past
// its first flush (the deepest point of a request, where net/http formats the Date header),
// and reports the goroutine stack bytes per open stream: the handler goroutine's plus
// net/http's background reader's. About 10 KiB means the handler kept its first 8 KiB stack;
// about 18 KiB means every stream outgrew it and copied it (as before issue 15: the copy cost
// ~7% of the mock's CPU at 2,000 new streams a second).
func BenchmarkStreamStack(b *testing.B) {
	lib, err := selfTestLibrary(50*time.Millisecond, 100)
	if err != nil {
		b.Fatal(err)
	}
	_, ts := newTestMock(b, Options{Library: lib, TimeScale: 1})
	addr := ts.Listener.Addr().String()
	body := `{"model":"self-test","stream":true,"messages":[{"role":"user","content":"[[streambench scenario=self-test seed=1]]"}]}`
	const streams = 300
	var perStream float64
	for b.Loop() {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.StackInuse
		conns := make([]net.Conn, 0, streams)
		for range streams {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c)
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", PathOpenAI, len(body), body)
		}
		buf := make([]byte, 4096)
		for _, c := range conns {
			if _, err := c.Read(buf); err != nil { // the headers and the role chunk
				b.Fatal(err)
			}
		}
		runtime.ReadMemStats(&ms)
		perStream = float64(ms.StackInuse-before) / streams
		for _, c := range conns {
			c.Close()
		}
	}
	b.ReportMetric(perStream, "stack-B/stream")
}
