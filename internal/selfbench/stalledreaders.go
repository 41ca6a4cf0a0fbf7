package selfbench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/engine"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// The stalled-readers scenarios: the normal clients' paced answer, and the stalled clients'
// ~400 KB in ~1.5 s, twice a stalled socket's kernel buffers, so the runtime's writes block.
const (
	stalledNormalYAML = "name: stalled-normal\ndescription: the normal clients' paced answer\n" +
		"timing:\n  ttft: 200ms\n  itl: 200ms\n  tokensPerFrame: 1\nturns:\n  - text: {tokens: 20}\n"
	stalledBulkYAML = "name: stalled-bulk\ndescription: a long fast answer in big frames, so a client that stops reading fills its window\n" +
		"timing:\n  ttft: 100ms\n  itl: 50us\n  tokensPerFrame: 200\nturns:\n  - text: {tokens: 30000}\n"
	stalledSettleMax = 20 * time.Second // the wait for the runtime's memory to stop growing
	stalledOpeners   = 50               // stalled readers connecting at once
)

// StalledReaders measures what clients that stop reading cost the others: normal clients alone,
// then among raw TCP clients that stopped reading, each run on a fresh stack.
func StalledReaders(ctx context.Context, o Options) (*Report, error) {
	b := stalledBench{o: o, normal: cmp.Or(o.Streams, 1000), stalled: cmp.Or(o.Stalled, 1000),
		length: cmp.Or(o.Duration, 15*time.Second), idle: cmp.Or(o.IdleTimeout, agentruntime.DefaultClientIdleTimeout)}
	b.ramp = min(3*time.Second, b.length/3)
	b.warmup = b.ramp + min(2*time.Second, (b.length-b.ramp)/2) // the ramp's burst of first requests is not measured
	rep := &Report{
		Name: fmt.Sprintf("stalled readers: %d clients that stop reading among %d normal ones", b.stalled, b.normal),
		Command: fmt.Sprintf("streambench bench abuse --part stalled-readers --stalled %d --streams %d --duration %s --idle-timeout %s%s",
			b.stalled, b.normal, b.length, b.idle, o.transportFlags()),
		Method: fmt.Sprintf("two runs of the same closed loop (users ramped 0→%d over %s, held to %s, the first %s not measured; "+
			"sim-chat opted in; TTFT 200 ms then 20 tokens 200 ms apart), each on a fresh mock + runtime in child processes: "+
			"the yardstick alone, then with %d raw TCP clients (receive buffer %d B, MSS %d) that sent a sim-chat request for an ~400 KB answer, "+
			"read the head and one byte and stopped; the runtime's client idle timeout is %s, and it talks %s to the mock. "+
			"Memory: runtime VmRSS once it stopped growing with the stalled streams held − before them",
			b.normal, b.ramp, b.length, b.warmup, b.stalled, stalledReceiveBuffer, stalledSegment, b.idle, o.providerProtocol()),
	}
	dir, lib, cleanup, err := keptScenarioDir(rep, o.KeepDir, map[string]string{"stalled-normal": stalledNormalYAML, "stalled-bulk": stalledBulkYAML})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	b.dir, b.lib = dir, lib
	if b.mix, err = chatMix("bench-stalled", "stalled-normal", "openai-none", "anthropic-none"); err != nil {
		return nil, err
	}
	st, err := b.newStack()
	if err != nil {
		return nil, err
	}
	yard, err := b.normalRun(ctx, st, "yardstick")
	st.Stop()
	if err != nil {
		return nil, fmt.Errorf("yardstick run: %w", err)
	}
	m, err := b.amongStalled(ctx, rep)
	if err != nil {
		return nil, err
	}
	addStalledFigures(rep, b.idle, yard, m)
	return rep, nil
}

type stalledBench struct {
	o                          Options
	normal, stalled            int
	length, idle, ramp, warmup time.Duration
	dir                        string
	lib                        *scenarios.Library
	mix                        *loadgen.Mix
}

func (b *stalledBench) newStack() (*stack.Stack, error) {
	return stack.StartChildren(stack.Options{TimeScale: 1, ScenarioDir: b.dir, ProviderHTTP1: b.o.ProviderHTTP1, ClientIdleTimeout: b.idle})
}

func (b *stalledBench) normalRun(ctx context.Context, st *stack.Stack, label string) (*measure.Run, error) {
	run, _, err := runWithPeak(ctx, loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: b.mix, MixName: "bench-stalled", Library: b.lib,
		RunID:  "bench-" + label + "-" + time.Now().UTC().Format("150405"),
		Stages: loadgen.Stages{{Duration: b.ramp, Target: float64(b.normal)}, {Duration: b.length - b.ramp, Target: float64(b.normal)}},
		Warmup: b.warmup, Grace: 30 * time.Second, StreamTimeout: time.Minute, HTTP2: b.o.HTTP2,
	}, b.o)
	return run, err
}

type stalledMeasures struct {
	loaded                                 *measure.Run
	readers                                int
	rssBefore, rssStalled, rssAfter        int64 // runtime VmRSS, KiB
	tcpBefore, tcpStalled                  int64 // kernel TCP memory, pages (-1: unknown)
	openStreams, droppedDuringRun, dropped float64
	openAfter                              float64
	droppedBy                              time.Duration
}

// amongStalled opens the stalled readers on a fresh stack, lets its memory settle, plays the
// normal clients among them and waits for the runtime to drop them.
func (b *stalledBench) amongStalled(ctx context.Context, rep *Report) (*stalledMeasures, error) {
	st, err := b.newStack()
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	metrics := st.RuntimeURL + "/metrics"
	rtPID := st.Runtime.PID()
	m := &stalledMeasures{}
	if m.rssBefore, err = procStatusKiB(rtPID, "VmRSS"); err != nil {
		return nil, fmt.Errorf("runtime memory: %w", err)
	}
	m.tcpBefore = tcpMemoryPages()
	readers, err := openStalledReaders(ctx, st.RuntimeURL, b.stalled)
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	if err != nil {
		return nil, err
	}
	m.readers = len(readers)
	// The drops may come while the memory settles or during the normal run.
	drops := watchDrops(ctx, metrics, len(readers), b.idle+30*time.Second)
	settled := false
	if m.rssStalled, settled, err = settleRSS(ctx, rtPID, stalledSettleMax); err != nil {
		return nil, err
	}
	if !settled {
		rep.note("the runtime's RSS was still growing %s after the stalled readers opened: its memory per stalled stream is a lower bound", stalledSettleMax)
	}
	m.tcpStalled = tcpMemoryPages()
	if m.openStreams, err = scrapeMetric(ctx, metrics, agentruntime.MetricClientStreamsOpen); err != nil {
		return nil, err
	}
	if m.loaded, err = b.normalRun(ctx, st, "stalled"); err != nil {
		return nil, fmt.Errorf("run among stalled readers: %w", err)
	}
	if m.droppedDuringRun, err = scrapeMetric(ctx, metrics, agentruntime.MetricSlowClientsDropped); err != nil {
		return nil, err
	}
	d := <-drops
	if d.err != nil {
		return nil, d.err
	}
	m.dropped, m.droppedBy = d.dropped, d.after
	m.rssAfter, _ = procStatusKiB(rtPID, "VmRSS")
	m.openAfter, _ = scrapeMetric(ctx, metrics, agentruntime.MetricClientStreamsOpen)
	return m, nil
}

type dropResult struct {
	dropped float64
	after   time.Duration
	err     error
}

// watchDrops sends the runtime's slow-client drop count once it reaches want or wait passes.
func watchDrops(ctx context.Context, metrics string, want int, wait time.Duration) <-chan dropResult {
	stalledAt := time.Now()
	drops := make(chan dropResult, 1)
	go func() {
		deadline := stalledAt.Add(wait)
		for {
			n, err := scrapeMetric(ctx, metrics, agentruntime.MetricSlowClientsDropped)
			if err != nil || n >= float64(want) || time.Now().After(deadline) {
				drops <- dropResult{n, time.Since(stalledAt), err}
				return
			}
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
				drops <- dropResult{n, time.Since(stalledAt), ctx.Err()}
				return
			}
		}
	}()
	return drops
}

func addStalledFigures(rep *Report, idle time.Duration, yard *measure.Run, m *stalledMeasures) {
	for _, mt := range []struct {
		metric measure.Metric
		label  string
	}{{measure.FirstChunk, "TTFC"}, {measure.ChunkGap, "inter-chunk gap"}} {
		y, l := mergedMetric(yard, mt.metric), mergedMetric(m.loaded, mt.metric)
		rep.add(mt.label+" p50 yardstick", quantileMs(y, 50, 0), "ms")
		rep.add(mt.label+" p50 among stalled readers", quantileMs(l, 50, 0), "ms")
		rep.against(mt.label+" p50 yardstick (the run without stalled readers)", quantileMs(y, 50, 0), "ms")
		yp, lp := quantileMs(y, 99, 0), quantileMs(l, 99, 0)
		rep.add(mt.label+" p99 yardstick", yp, "ms")
		rep.add(mt.label+" p99 among stalled readers", lp, "ms")
		rep.against(mt.label+" p99 yardstick (the run without stalled readers)", yp, "ms")
		change := 0.0
		if yp > 0 {
			change = (lp - yp) / yp * 100
		}
		rep.addTarget(mt.label+" p99 change", change, "%", "< 5%", yp > 0 && change < 5)
		rep.against(mt.label+" p99 yardstick (the run without stalled readers)", yp, "ms")
	}
	for _, r := range []struct {
		label string
		run   *measure.Run
	}{{"yardstick", yard}, {"among stalled readers", m.loaded}} {
		c := r.run.Summary.Counters
		rep.add("normal sessions ok, "+r.label, float64(c.SessionsOK), "sessions")
		rep.addTarget("normal sessions failed, "+r.label, float64(c.SessionsFailed), "sessions", "0", c.SessionsFailed == 0)
		lag := mergedMetric(r.run, measure.GeneratorLag)
		rep.add("generator scheduling lag p99, "+r.label, quantileMs(lag, 99, 0), "ms")
		rep.addLeakChecks("leak checks over tolerance, "+r.label, r.run)
		for _, w := range r.run.Summary.Verdict.Warnings {
			rep.note("%s: %s", r.label, w)
		}
		runFailures(rep, r.run, r.label+" run: ")
	}
	n := float64(m.readers)
	rep.add("stalled readers opened", n, "clients")
	rep.addTarget("runtime streams open with the stalled readers held", m.openStreams, "streams", fmt.Sprintf("= %d", m.readers), m.openStreams == n)
	rep.add("stalled streams dropped during the normal run", m.droppedDuringRun, "streams")
	rep.addTarget("stalled streams dropped and counted by the runtime", m.dropped, "streams", fmt.Sprintf("= %d", m.readers), m.dropped == n)
	rep.addTarget("stall → every stalled stream dropped", m.droppedBy.Seconds(), "s",
		fmt.Sprintf("idle timeout %s + ≤ 10 s", idle), m.dropped == n && m.droppedBy <= idle+10*time.Second)
	rep.addTarget("runtime client streams open after the drops", m.openAfter, "streams", "0", m.openAfter == 0)
	rep.add("runtime RSS before the stalled readers", float64(m.rssBefore)/1024, "MiB")
	rep.add("runtime RSS with the stalled streams held", float64(m.rssStalled)/1024, "MiB")
	rep.add("runtime RSS after the drops", float64(m.rssAfter)/1024, "MiB")
	if m.readers > 0 {
		rep.add("runtime RSS per stalled stream", float64(m.rssStalled-m.rssBefore)/n, "KiB")
		if m.tcpBefore >= 0 && m.tcpStalled >= 0 {
			rep.add("kernel TCP memory per stalled stream (both ends, /proc/net/sockstat)", float64(m.tcpStalled-m.tcpBefore)*float64(os.Getpagesize())/1024/n, "KiB")
		}
	}
	if m.dropped < n {
		rep.fail("the runtime dropped %g of %d stalled streams within %s", m.dropped, m.readers, m.droppedBy.Round(time.Second))
	}
}

// settleRSS returns a process's RSS once it grew < 1% over the last second (after two), or after max.
func settleRSS(ctx context.Context, pid int, max time.Duration) (kib int64, settled bool, err error) {
	start := time.Now()
	var readings []int64 // one per 250 ms
	for {
		kib, err = procStatusKiB(pid, "VmRSS")
		if err != nil {
			return 0, false, fmt.Errorf("runtime memory: %w", err)
		}
		readings = append(readings, kib)
		if n := len(readings); n > 8 && float64(kib-readings[n-5]) < 0.01*float64(kib) {
			return kib, true, nil
		}
		if time.Since(start) > max {
			return kib, false, nil
		}
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
}

// openStalledReaders opens n stalled readers; on error, also those opened so far (the caller closes them).
func openStalledReaders(ctx context.Context, target string, n int) ([]net.Conn, error) {
	var (
		mu       sync.Mutex
		readers  []net.Conn
		firstErr error
		wg       sync.WaitGroup
	)
	sem := make(chan struct{}, stalledOpeners)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id := "bench-stalled-reader-" + strconv.Itoa(i)
			s := &protocol.Session{ID: id, Target: "openai-none",
				Input: scenarios.Directive{Scenario: "stalled-bulk", Seed: uint64(i + 1), Session: id}.String()}
			octx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			r, err := openStalledReader(octx, target, s)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = fmt.Errorf("stalled reader %d: %w", i, err)
				}
				return
			}
			readers = append(readers, r)
		})
	}
	wg.Wait()
	return readers, firstErr
}

// scrapeMetric reads one counter or gauge from a Prometheus endpoint, summed over its labels.
func scrapeMetric(ctx context.Context, url, name string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fams, err := engine.Fetch(ctx, http.DefaultClient, url, nil)
	if err != nil {
		return 0, fmt.Errorf("metrics %s: %w", url, err)
	}
	f, ok := fams[name]
	if !ok {
		return 0, fmt.Errorf("metrics %s: no %s: the metric is not exported", url, name)
	}
	var sum float64
	for _, m := range f.GetMetric() {
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		default:
			return 0, fmt.Errorf("metrics %s: %s is a %v, not a counter or gauge", url, name, f.GetType())
		}
	}
	return sum, nil
}

// tcpMemoryPages is the machine's TCP socket memory in pages (/proc/net/sockstat), -1 when unreadable.
func tcpMemoryPages() int64 {
	b, err := os.ReadFile("/proc/net/sockstat")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "TCP:" {
			continue
		}
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "mem" {
				if v, err := strconv.ParseInt(f[i+1], 10, 64); err == nil {
					return v
				}
			}
		}
	}
	return -1
}

// A stalled reader's receive buffer, small so its window fills after a few frames, and its
// segment size, from which the sender sizes its send buffer (loopback's 64 KiB segments would
// queue megabytes in the kernel per stalled client before a write blocks).
const (
	stalledReceiveBuffer = 4096
	stalledSegment       = 536
)

// openStalledReader is a raw TCP client: it sends s's request to target, reads the response
// head and one body byte, then leaves the connection unread.
func openStalledReader(ctx context.Context, target string, s *protocol.Session) (_ net.Conn, err error) {
	req, err := simchat.NewClient(true, simchat.Policy{}).NewRequest(ctx, target, s)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("stalled reader: target %q: %w", target, err)
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			// Set before connect, so the window the handshake advertises is already small.
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledReceiveBuffer)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, stalledSegment)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("stalled reader: %w", err)
	}
	defer func() {
		if err != nil {
			conn.Close()
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := req.Write(conn); err != nil {
		return nil, fmt.Errorf("stalled reader: send request: %w", err)
	}
	// A small buffer: what it takes from the socket leaves the window.
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), req)
	if err != nil {
		return nil, fmt.Errorf("stalled reader: response head: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("stalled reader: HTTP %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil {
		return nil, fmt.Errorf("stalled reader: first body byte: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}
