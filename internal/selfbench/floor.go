package selfbench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// The path's targets: CPU per answer chunk ÷ the two-hop floor's per event, generator ÷ minimal
// client CPU on the same path, and the generator's VmRSS per open stream at 20 tokens/s.
const (
	pathTarget    = 1.25
	clientTarget  = 1.1
	busyStreamKiB = 20.0
)

// floorRole is one process of a floor or path run, and what it cost.
type floorRole struct {
	name       string // "server", "relay", "client"; "mock", "runtime", "generator"
	pid        int    // 0: this process
	cpu        time.Duration
	rssKiB     int64 // VmRSS when the most streams were open, minus before the load
	rssPeakKiB int64 // VmRSS when the most streams were open
}

// floorRun is what one run of streams delivered and cost every process.
type floorRun struct {
	streams    int
	peak       int64 // most streams open at once
	events     int64 // data events (floor) or answer chunks (path) the client received
	roles      []*floorRole
	failed     int
	failure    string
	profileErr error // why the path's CPU profiles (Options.ProfileDir) were not written
}

// cpuPerEvent is the CPU of the named roles (all when none are named) per delivered event, in µs.
func (r *floorRun) cpuPerEvent(names ...string) float64 {
	var cpu time.Duration
	for _, role := range r.roles {
		if len(names) == 0 || slices.Contains(names, role.name) {
			cpu += role.cpu
		}
	}
	return perFrame(cpu, r.events)
}

func (r *floorRun) cpuSummary() string {
	var parts []string
	for _, role := range r.roles {
		parts = append(parts, fmt.Sprintf("%s %.2f s", role.name, role.cpu.Seconds()))
	}
	return strings.Join(parts, ", ")
}

func (r *floorRun) rssPerStream(name string) float64 {
	for _, role := range r.roles {
		if role.name == name && r.peak > 0 {
			return float64(role.rssKiB) / float64(r.peak)
		}
	}
	return 0
}

// meter keeps the roles' memory at the most open streams, and takes their CPU before and after.
type meter struct {
	roles []*floorRole
	cpu0  []time.Duration
	rss0  []int64

	mu   sync.Mutex
	peak int64
}

// startMeter notes each role's CPU and memory before the load.
func startMeter(roles ...*floorRole) *meter {
	debug.FreeOSMemory() // so the RSS baseline holds no freed pages the load would reuse
	m := &meter{roles: roles}
	for _, r := range roles {
		m.cpu0 = append(m.cpu0, roleCPU(r.pid))
		rss, _ := procStatusKiB(r.pid, "VmRSS")
		m.rss0 = append(m.rss0, rss)
	}
	return m
}

func (m *meter) sample(active int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if active < m.peak || active == 0 {
		return
	}
	m.peak = active
	for i, r := range m.roles {
		if rss, err := procStatusKiB(r.pid, "VmRSS"); err == nil {
			r.rssKiB, r.rssPeakKiB = rss-m.rss0[i], rss
		}
	}
}

// stop takes each role's CPU since startMeter and returns the peak open streams.
func (m *meter) stop() int64 {
	for i, r := range m.roles {
		r.cpu = roleCPU(r.pid) - m.cpu0[i]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// roleCPU is a process's CPU so far (0: this one; 0 when unreadable).
func roleCPU(pid int) time.Duration {
	cpu, _ := procCPU(pid)
	return cpu
}

// sampleEvery calls f every interval until stop, after which f is not called again.
func sampleEvery(interval time.Duration, f func()) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				f()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// runFloor streams from the floor server to the minimal client in this process, through the relay when hops is 2.
func runFloor(ctx context.Context, hops, streams, events int, itl time.Duration, upstreamHTTP1 bool) (*floorRun, error) {
	srv, err := startBenchChild("floor server", floorServerMode, "--events", fmt.Sprint(events), "--itl", itl.String())
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	url := srv.URL()
	roles := []*floorRole{{name: "server", pid: srv.PID()}}
	if hops == 2 {
		relay, err := startBenchChild("floor relay", floorRelayMode, "--upstream", url, fmt.Sprintf("--upstream-http1=%t", upstreamHTTP1))
		if err != nil {
			return nil, err
		}
		defer relay.Stop()
		url = relay.URL()
		roles = append(roles, &floorRole{name: "relay", pid: relay.PID()})
	}
	roles = append(roles, &floorRole{name: "client"})
	client := new(floorClient)
	// An unmeasured warm-up, as the path's.
	if _, err := measureClient(ctx, client, url, streams, nil, floorRequest(url, warmUpEvents)); err != nil {
		return nil, err
	}
	return measureClient(ctx, client, url, streams, roles, floorRequest(url, 0))
}

// measureClient plays streams streams to url with client over a 1 s ramp and returns what they
// cost the roles (no roles: a warm-up, whose failures are errors).
func measureClient(ctx context.Context, client *floorClient, url string, streams int, roles []*floorRole, request func(int) []byte) (*floorRun, error) {
	m := startMeter(roles...)
	stopSampling := sampleEvery(200*time.Millisecond, func() { m.sample(client.active.Load()) })
	res := client.run(ctx, url, streams, time.Second, request)
	stopSampling()
	run := &floorRun{streams: streams, peak: m.stop(), events: res.events, roles: roles, failed: res.failed, failure: res.firstFailure}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if roles == nil && run.failed > 0 {
		return nil, fmt.Errorf("warm-up: %d of %d streams failed; first: %s", run.failed, streams, run.failure)
	}
	return run, nil
}

var pathSlugs = []string{"openai-none", "anthropic-none"}

// runPath streams the floor's load through mock and runtime children to the generator; before
// and after it the minimal and the net/http clients play the same streams, after a warm-up.
func runPath(ctx context.Context, streams, events int, itl time.Duration, o Options) (path *floorRun, minimal, viaHTTP [2]*floorRun, err error) {
	scenario := func(name string, tokens int) string {
		return pacedScenario(name, "a paced answer, one token per frame", itl, itl, fmt.Sprintf("{tokens: %d}", tokens))
	}
	mix, err := chatMix("bench-path", "path-stream", pathSlugs...)
	if err != nil {
		return nil, minimal, viaHTTP, err
	}
	docs := map[string]string{"path-stream": scenario("path-stream", events), "path-warm-up": scenario("path-warm-up", warmUpEvents)}
	st, lib, stop, err := startScenarioStack(nil, false, docs, o.ProviderHTTP1)
	if err != nil {
		return nil, minimal, viaHTTP, err
	}
	defer stop()
	client := func(dst **floorRun, scenario, run string, viaHTTP bool) func() error {
		return func() (err error) {
			*dst, err = runPathMinimal(ctx, st, streams, scenario, run, viaHTTP)
			return err
		}
	}
	var warm *floorRun
	for _, step := range []func() error{
		client(&warm, "path-warm-up", "warm-up", false),
		client(&minimal[0], "path-stream", "before", false),
		client(&viaHTTP[0], "path-stream", "http-before", true),
		func() (err error) {
			path, err = runPathGenerator(ctx, st, lib, mix, streams, events, itl, o)
			return err
		},
		client(&viaHTTP[1], "path-stream", "http-after", true),
		client(&minimal[1], "path-stream", "after", false),
	} {
		if err := step(); err != nil {
			return nil, minimal, viaHTTP, err
		}
	}
	return path, minimal, viaHTTP, nil
}

// runPathGenerator plays the path's streams with the load generator.
func runPathGenerator(ctx context.Context, st *stack.Stack, lib *scenarios.Library, mix *loadgen.Mix, streams, events int, itl time.Duration, o Options) (*floorRun, error) {
	roles := []*floorRole{{name: "mock", pid: st.Mock.PID()}, {name: "runtime", pid: st.Runtime.PID()}, {name: "generator"}}
	m := startMeter(roles...)
	profiling := false // set on the run's collector goroutine (the ProgressFunc), read after Run
	profiles := make(chan error, 1)
	length := time.Duration(events+1) * itl
	run, _, err := runWithPeak(ctx, loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: mix, MixName: "bench-path", Library: lib,
		RunID:    "bench-path-" + time.Now().UTC().Format("150405"),
		Stages:   loadgen.Stages{{Duration: time.Second, Target: float64(streams)}, {Duration: time.Second, Target: float64(streams)}},
		Sessions: int64(streams), Grace: length + time.Minute, StreamTimeout: length + time.Minute, HTTP2: o.HTTP2,
		NoLeakCheck: true,
	}, o, func(p loadgen.Progress) {
		m.sample(p.Active)
		if o.ProfileDir != "" && p.Active >= int64(streams) && !profiling {
			profiling = true
			go func() {
				profiles <- pathProfiles(ctx, o.ProfileDir, streams, st.Mock.PprofURL(), st.Runtime.PprofURL())
			}()
		}
	})
	if err != nil {
		return nil, err
	}
	fr := &floorRun{streams: streams, peak: m.stop(), events: run.Summary.Counters.OutputTokens, roles: roles}
	switch {
	case profiling:
		fr.profileErr = <-profiles // within pathProfileSeconds + 10 s
	case o.ProfileDir != "":
		fr.profileErr = fmt.Errorf("not all %d streams were open at once: no profiles", streams)
	}
	fr.failed = int(run.Summary.Counters.SessionsFailed)
	if !run.Summary.Verdict.Pass && len(run.Summary.Verdict.Reasons) > 0 {
		fr.failure = run.Summary.Verdict.Reasons[0]
		fr.failed = max(fr.failed, 1)
	}
	return fr, nil
}

// warmUpEvents is the length of the floor's and the path's warm-up streams.
const warmUpEvents = 20

// runPathMinimal plays streams sessions of scenario through st's runtime with a floorClient
// (net/http's with viaHTTP); run "warm-up" is not measured.
func runPathMinimal(ctx context.Context, st *stack.Stack, streams int, scenario, run string, viaHTTP bool) (*floorRun, error) {
	var roles []*floorRole
	if run != "warm-up" {
		roles = []*floorRole{{name: "mock", pid: st.Mock.PID()}, {name: "runtime", pid: st.Runtime.PID()}, {name: "client"}}
	}
	// The answer chunks: the frames that carry a block (the scenario streams text only).
	client := &floorClient{count: []byte(`{"blockId":`)}
	if viaHTTP {
		client.http = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	addr := strings.TrimPrefix(st.RuntimeURL, "http://")
	request := func(i int) []byte {
		id := fmt.Sprintf("bench-path-minimal-%s-%d", run, i)
		input := scenarios.Directive{Scenario: scenario, Seed: uint64(i) + 1, Session: id}.String()
		body, _ := json.Marshal(simchat.RequestBody{Input: &input, ConversationID: id}) // strings only: cannot fail
		return fmt.Appendf(nil, "POST /api/chat/%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n%s: %s\r\nContent-Length: %d\r\n\r\n%s",
			pathSlugs[i%len(pathSlugs)], addr, simchat.ProtocolHeader, simchat.ProtocolToken, len(body), body)
	}
	return measureClient(ctx, client, st.RuntimeURL, streams, roles, request)
}

// floorEvents is how many events each floor or path stream carries, and how far apart.
func floorEvents(o Options) (events int, itl time.Duration) {
	tps := cmp.Or(o.TokensPerSecond, 20)
	duration := cmp.Or(o.Duration, 10*time.Second)
	return max(1, int(duration.Seconds()*tps)), time.Duration(float64(time.Second) / tps)
}

// floorSizes are the concurrencies the floor and the path are measured at.
func (o Options) floorSizes() []int {
	if o.Streams > 0 {
		return []int{o.Streams}
	}
	return []int{1000, 2000}
}

// Floor measures the bare SSE floors, one hop (server to client) and two (through a relay):
// every process's CPU per delivered event and memory per open stream.
func Floor(ctx context.Context, o Options) (*Report, error) {
	events, itl := floorEvents(o)
	sizes := o.floorSizes()
	rep := &Report{
		Name:    fmt.Sprintf("floor: the bare one-hop and two-hop SSE floors at %v streams × %g events/s", sizes, float64(time.Second)/float64(itl)),
		Command: fmt.Sprintf("streambench bench floor --tokens-per-second %g --duration %s%s", float64(time.Second)/float64(itl), time.Duration(events)*itl, o.transportFlags()),
		Method: fmt.Sprintf("a naive Go SSE server (goroutine per stream, time.Sleep to each event's time, write + flush; child process) sends %d events of %d bytes %s apart per stream "+
			"to a minimal client in this process (goroutine and HTTP/1.1 connection per stream, request written by hand, http.ReadResponse on a 4 KiB bufio, counts data lines), starts spread over 1 s; two-hop puts a minimal line-copying relay "+
			"(child process; %s to the server, flush when nothing is buffered) between them. An unmeasured warm-up of the same streams %d events long goes first. CPU: getrusage (client), /proc/PID/stat (children), over the whole run, per delivered event; "+
			"memory: VmRSS when the most streams were open minus before the load, per open stream",
			events, len(floorFrame), itl, map[bool]string{false: "h2c on 4 pooled connections, as the runtime", true: "HTTP/1.1, one connection per stream"}[o.ProviderHTTP1], warmUpEvents),
	}
	for _, streams := range sizes {
		for i, hopName := range []string{"one-hop", "two-hop"} {
			run, err := runFloor(ctx, i+1, streams, events, itl, o.ProviderHTTP1)
			if err != nil {
				return nil, fmt.Errorf("%d-hop floor at %d streams: %w", i+1, streams, err)
			}
			addFloorFigures(rep, fmt.Sprintf("%d streams, %s", streams, hopName), run)
		}
	}
	return rep, nil
}

func addFloorFigures(rep *Report, prefix string, run *floorRun) {
	rep.add(prefix+": peak open streams", float64(run.peak), "streams")
	rep.add(prefix+": events delivered", float64(run.events), "events")
	rep.add(prefix+": CPU per event, all processes", run.cpuPerEvent(), "µs")
	for _, r := range run.roles {
		rep.add(prefix+": "+r.name+" CPU per event", run.cpuPerEvent(r.name), "µs")
	}
	for _, r := range run.roles {
		rep.add(prefix+": "+r.name+" RSS per open stream", run.rssPerStream(r.name), "KiB")
	}
	if run.failed > 0 {
		rep.fail("%s: %d of %d streams failed; first: %s", prefix, run.failed, run.streams, run.failure)
	}
	if run.peak < int64(run.streams) {
		rep.note("%s: only %d of %d streams were open at once", prefix, run.peak, run.streams)
	}
}

// Path measures mock → runtime → generator between two runs of the two-hop floor at the same
// load: CPU per answer chunk as a multiple of the floor's per event.
func Path(ctx context.Context, o Options) (*Report, error) {
	events, itl := floorEvents(o)
	sizes := o.floorSizes()
	tps := float64(time.Second) / float64(itl)
	rep := &Report{
		Name:    fmt.Sprintf("path: mock → runtime → generator against the two-hop floor at %v streams × %g tokens/s", sizes, tps),
		Command: fmt.Sprintf("streambench bench path --tokens-per-second %g --duration %s%s", tps, time.Duration(events)*itl, o.transportFlags()),
		Method: fmt.Sprintf("per size, the two-hop floor (as bench floor) before and after the whole path with the same load (CPU pooled over both): scenario TTFT %s then %d tokens %s apart, one token per frame; "+
			"closed loop, users ramped 0→N over 1 s, one session each; sim-chat opted in on openai-none and anthropic-none; the runtime talks %s to the mock (the floor relay the same); "+
			"the generator uses %s. CPU of all three processes over the whole run per delivered answer chunk (output tokens), ÷ the floor's per event. "+
			"Before and after the generator, the minimal client (the floor's: request written by hand, http.ReadResponse, data lines counted, nothing checked; one HTTP/1.1 connection per stream) "+
			"plays the same streams through the same mock and runtime, its two runs pooled: generator CPU per answer chunk ÷ the minimal client's (its answer chunks: the data lines that carry a block, the scenario streaming text only). "+
			"Between those two runs and the generator, a client written the common way (net/http's Client with a clone of its default Transport, a bufio.Scanner over the body, data lines counted) plays them too, before and after: its ratio is reported beside, without a target. "+
			"Every stack (floor or path) first plays an unmeasured warm-up of the same streams, %d tokens long",
			itl, events, itl, o.providerProtocol(), o.generatorProtocol(), warmUpEvents),
	}
	for _, streams := range sizes {
		// Before and after the path, so the machine's drift moves both sides of the ratio.
		before, err := runFloor(ctx, 2, streams, events, itl, o.ProviderHTTP1)
		if err != nil {
			return nil, fmt.Errorf("two-hop floor at %d streams: %w", streams, err)
		}
		path, minimal, viaHTTP, err := runPath(ctx, streams, events, itl, o)
		if err != nil {
			return nil, fmt.Errorf("path at %d streams: %w", streams, err)
		}
		after, err := runFloor(ctx, 2, streams, events, itl, o.ProviderHTTP1)
		if err != nil {
			return nil, fmt.Errorf("two-hop floor at %d streams, after the path: %w", streams, err)
		}
		a, b := before.cpuPerEvent(), after.cpuPerEvent()
		rep.add(fmt.Sprintf("%d streams: two-hop floor CPU per event, before the path", streams), a, "µs")
		rep.add(fmt.Sprintf("%d streams: two-hop floor CPU per event, after the path", streams), b, "µs")
		rep.noteDrift(fmt.Sprintf("%d streams: the floor before and after the path", streams), a, b)
		addPathFigures(rep, streams, mergeFloorRuns(before, after), path)
		addMinimalFigures(rep, streams, minimalClient, minimal[0], minimal[1], path, !o.HTTP2)
		addMinimalFigures(rep, streams, httpClient, viaHTTP[0], viaHTTP[1], path, !o.HTTP2)
	}
	return rep, nil
}

// floorDriftNote is the factor between two runs of one yardstick beyond which the machine's load moved.
const floorDriftNote = 1.2

// noteDrift notes when a and b, two runs of what is named, differ by more than floorDriftNote.
func (r *Report) noteDrift(what string, a, b float64) {
	if lo, hi := min(a, b), max(a, b); lo > 0 && hi > floorDriftNote*lo {
		r.note("%s differ by %.0f%%: the machine's load moved, so the ratio is uncertain by about as much", what, 100*(hi/lo-1))
	}
}

// mergeFloorRuns pools two runs of the same floor: CPU, events and failures summed, memory averaged.
func mergeFloorRuns(a, b *floorRun) *floorRun {
	m := &floorRun{streams: a.streams, peak: min(a.peak, b.peak), events: a.events + b.events,
		failed: a.failed + b.failed, failure: cmp.Or(a.failure, b.failure)}
	for i, r := range a.roles {
		m.roles = append(m.roles, &floorRole{name: r.name, cpu: r.cpu + b.roles[i].cpu, rssKiB: (r.rssKiB + b.roles[i].rssKiB) / 2})
	}
	return m
}

// addMinimalFigures adds the generator's CPU and memory beside a yardstick client's on the same
// path (its runs pooled); only the minimal client's CPU ratio over HTTP/1.1 (sameTransport) has a target.
func addMinimalFigures(rep *Report, streams int, client string, before, after, path *floorRun, sameTransport bool) {
	prefix := fmt.Sprintf("%d streams: ", streams)
	on := client + " on the same path"
	b, a := before.cpuPerEvent("client"), after.cpuPerEvent("client")
	rep.add(prefix+on+", CPU per chunk, before the generator", b, "µs")
	rep.add(prefix+on+", CPU per chunk, after the generator", a, "µs")
	rep.noteDrift(prefix+"the "+client+" before and after the generator", a, b)
	runs := mergeFloorRuns(before, after)
	rep.add(prefix+on+", answer chunks delivered (two runs)", float64(runs.events), "chunks")
	name := prefix + on + ", CPU per chunk"
	g, c := path.cpuPerEvent("generator"), runs.cpuPerEvent("client")
	rep.add(name, c, "µs")
	if ratio := prefix + "generator ÷ " + on + ", CPU"; c > 0 && g > 0 {
		if sameTransport && client == minimalClient {
			rep.addTarget(ratio, g/c, "×", fmt.Sprintf("≤ %g×", clientTarget), g/c <= clientTarget)
		} else {
			rep.add(ratio, g/c, "×")
		}
		rep.against(name, c, "µs")
	}
	if c > 0 && g > 0 && !sameTransport {
		rep.note("%sthe generator spoke h2c (--http2), the %s HTTP/1.1: the CPU ratio is not held to its %g× target", prefix, client, clientTarget)
	}
	rssName := prefix + on + ", RSS per open stream"
	rep.add(rssName, runs.rssPerStream("client"), "KiB")
	rep.add(prefix+"generator − "+on+", RSS per open stream", path.rssPerStream("generator")-runs.rssPerStream("client"), "KiB")
	rep.against(rssName, runs.rssPerStream("client"), "KiB")
	rep.note("%sthe %s's runs (before and after the generator, pooled): %s; mock and runtime %.2f µs per chunk with it, %.2f with the generator",
		prefix, client, runs.cpuSummary(), runs.cpuPerEvent("mock", "runtime"), path.cpuPerEvent("mock", "runtime"))
	if runs.failed > 0 {
		rep.fail("%s%s: %d of %d streams failed; first: %s", prefix, on, runs.failed, 2*runs.streams, runs.failure)
	}
	if runs.peak < int64(runs.streams) {
		rep.note("%sthe %s had only %d of %d streams open at once in one run", prefix, client, runs.peak, runs.streams)
	}
}

// The path's yardstick clients: the minimal one (the target) and one written the common way.
const (
	minimalClient = "minimal client"
	httpClient    = "net/http client"
)

func addPathFigures(rep *Report, streams int, floor, path *floorRun) {
	prefix := fmt.Sprintf("%d streams", streams)
	rep.add(prefix+": answer chunks delivered", float64(path.events), "chunks")
	f, p := floor.cpuPerEvent(), path.cpuPerEvent()
	rep.add(prefix+": two-hop floor CPU per event, all processes", f, "µs")
	rep.add(prefix+": path CPU per answer chunk, all processes", p, "µs")
	rep.against(prefix+": two-hop floor CPU per event, all processes", f, "µs")
	if f > 0 && p > 0 {
		ratio := p / f
		rep.addTarget(prefix+": path ÷ two-hop floor, CPU", ratio, "×", fmt.Sprintf("≤ %g×", pathTarget), ratio <= pathTarget)
		rep.against(prefix+": two-hop floor CPU per event, all processes", f, "µs")
	}
	for _, pair := range [][2]string{{"mock", "server"}, {"runtime", "relay"}, {"generator", "client"}} {
		pp, ff := path.cpuPerEvent(pair[0]), floor.cpuPerEvent(pair[1])
		floorName := fmt.Sprintf("%s: floor %s CPU per event", prefix, pair[1])
		rep.add(fmt.Sprintf("%s: %s CPU per chunk", prefix, pair[0]), pp, "µs")
		rep.against(floorName, ff, "µs")
		rep.add(floorName, ff, "µs")
		if ff > 0 {
			rep.add(fmt.Sprintf("%s: %s ÷ floor %s, CPU", prefix, pair[0], pair[1]), pp/ff, "×")
			rep.against(floorName, ff, "µs")
		}
	}
	for _, pair := range [][2]string{{"generator", "client"}, {"runtime", "relay"}, {"mock", "server"}} {
		pm, fm := path.rssPerStream(pair[0]), floor.rssPerStream(pair[1])
		floorName := fmt.Sprintf("%s: floor %s RSS per open stream", prefix, pair[1])
		if pair[0] == "generator" {
			rep.addTarget(fmt.Sprintf("%s: %s RSS per open stream", prefix, pair[0]), pm, "KiB", fmt.Sprintf("≤ %g KiB", busyStreamKiB), pm > 0 && pm <= busyStreamKiB)
		} else {
			rep.add(fmt.Sprintf("%s: %s RSS per open stream", prefix, pair[0]), pm, "KiB")
		}
		rep.against(floorName, fm, "KiB")
		rep.add(floorName, fm, "KiB")
	}
	rep.note("%s: CPU over the runs: floor %s; path %s", prefix, floor.cpuSummary(), path.cpuSummary())
	if path.profileErr != nil {
		rep.note("%s: profiles: %v", prefix, path.profileErr)
	}
	if floor.failed > 0 {
		rep.fail("%s: floor: %d of %d streams failed; first: %s", prefix, floor.failed, floor.streams, floor.failure)
	}
	if path.failed > 0 {
		rep.fail("%s: path: %d of %d sessions failed; first: %s", prefix, path.failed, path.streams, path.failure)
	}
	for _, r := range []*floorRun{floor, path} {
		if r.peak < int64(r.streams) {
			rep.note("%s: only %d of %d streams were open at once in one run", prefix, r.peak, r.streams)
		}
	}
}

// pathProfileSeconds is how long the path's CPU profiles sample once every stream is open.
const pathProfileSeconds = 5

// pathProfiles writes CPU profiles of the three processes over the same seconds into dir.
func pathProfiles(ctx context.Context, dir string, streams int, mockURL, runtimeURL string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := func(role string) string {
		return filepath.Join(dir, fmt.Sprintf("path-%d-%s.cpu.pprof", streams, role))
	}
	mock := startProfile(ctx, mockURL, name("mock"), pathProfileSeconds*time.Second)
	runtime := startProfile(ctx, runtimeURL, name("runtime"), pathProfileSeconds*time.Second)
	w, err := os.Create(name("generator"))
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(w); err != nil {
		w.Close()
		return fmt.Errorf("generator profile: %w", err)
	}
	select {
	case <-time.After(pathProfileSeconds * time.Second):
	case <-ctx.Done():
	}
	pprof.StopCPUProfile()
	err = w.Close()
	return errors.Join(err, mock(), runtime())
}

// fetchProfile saves base's /debug/pprof/profile over seconds to file.
func fetchProfile(ctx context.Context, base, file string, seconds int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(seconds+10)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, seconds), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile of %s: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile of %s: HTTP %d", base, resp.StatusCode)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("profile of %s: %w", base, err)
	}
	return os.WriteFile(file, b, 0o644)
}
