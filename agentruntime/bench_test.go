package agentruntime

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/floorrelay"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// relayPath is one way a client reaches the mock: directly, through the floor proxy, or through
// the runtime.
type relayPath struct {
	name    string
	url     string
	body    func(session string) string
	header  http.Header
	cpu     time.Duration
	mallocs uint64
}

// BenchmarkRelay measures the CPU the runtime spends per relayed answer token (sim-chat, opted
// in, h2c to the provider, each provider wire) against the floor: a minimal line-copying proxy between
// the same mock and the same client, under the same load. The mock and the client run in this
// process too, so each path's cost is its total minus the direct client←mock path's.
//
//	go test ./agentruntime -run '^$' -bench Relay -benchtime 20x
func BenchmarkRelay(b *testing.B) {
	for _, load := range []struct {
		name     string
		scenario string
		streams  int
		scale    float64
	}{
		// Tokens paced 5 ms apart over 200 concurrent streams: every token is its own read,
		// frame and write, as in production.
		{"paced", "relay-paced", 200, 1},
		// 2,000-token answers sent at once over 20 streams: bursts are batched by the flush
		// policy, so this shows the per-token decode/encode cost.
		{"burst", "relay-burst", 20, 0},
	} {
		for _, wire := range []string{"openai", "anthropic"} {
			b.Run(load.name+"/"+wire, func(b *testing.B) { benchRelay(b, wire, load.scenario, load.streams, load.scale) })
		}
	}
}

func benchRelay(b *testing.B, wire, scenario string, streams int, scale float64) {
	lib, err := scenarios.LoadDir("testdata/scenarios")
	if err != nil {
		b.Fatal(err)
	}
	sc, _ := lib.Get(scenario)
	tokensPerStream := 0
	for _, st := range sc.Render(1).Turns[0].Steps {
		tokensPerStream += st.Tokens
	}
	_, mts := mocktest.Serve(b, mockprovider.Options{Library: lib, TimeScale: scale})
	rt, err := New(Options{ProviderURL: mts.URL, Heartbeat: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close()
	rts := httptest.NewServer(rt.Handler())
	defer rts.Close()
	floorClient := &http.Client{Transport: newProviderTransport(true, DefaultProviderH2CConns)} // as the runtime's
	providerPath := map[string]string{"openai": mockprovider.PathOpenAI, "anthropic": mockprovider.PathAnthropic}[wire]
	fts := httptest.NewServer(floorrelay.Handler(mts.URL+providerPath, floorClient, 32<<10))
	defer fts.Close()

	providerBody := func(session string) string {
		d := scenarios.Directive{Scenario: scenario, Seed: 1, Session: session}.String()
		if wire == "anthropic" {
			return fmt.Sprintf(`{"model":"m","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":%q}]}`, d)
		}
		return fmt.Sprintf(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":%q}]}`, d)
	}
	paths := []*relayPath{
		{name: "direct", url: mts.URL + providerPath, body: providerBody},
		{name: "floor", url: fts.URL, body: providerBody},
		{name: "runtime", url: rts.URL + "/api/chat/" + wire + "-none", header: http.Header{simchat.ProtocolHeader: {simchat.ProtocolToken}},
			body: func(session string) string {
				return fmt.Sprintf(`{"input":%q}`, scenarios.Directive{Scenario: scenario, Seed: 1, Session: session}.String())
			}},
	}
	// The client: HTTP/1.1, one connection per concurrent stream, as browsers do.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: 0}}
	defer client.CloseIdleConnections()
	round := func(p *relayPath) {
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, p.url, bytes.NewReader([]byte(p.body(fmt.Sprint("s", i)))))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range p.header {
					req.Header[k] = v
				}
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("%s: status %d", p.name, resp.StatusCode)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	for _, p := range paths { // warm connections and pools
		round(p)
	}
	var ms runtime.MemStats
	b.ReportAllocs()
	rounds := 0
	for b.Loop() {
		for _, p := range paths {
			runtime.ReadMemStats(&ms)
			before, mallocs := cpuTime(b), ms.Mallocs
			round(p)
			runtime.ReadMemStats(&ms)
			p.cpu += cpuTime(b) - before
			p.mallocs += ms.Mallocs - mallocs
		}
		rounds++
	}
	tokens := float64(rounds * streams * tokensPerStream)

	// Attribution: the part of the runtime's cost that is the provider wire's decoder alone
	// (protocol/openai or protocol/anthropic), decoding one captured provider stream.
	resp, err := client.Post(paths[0].url, "application/json", bytes.NewReader([]byte(providerBody("capture"))))
	if err != nil {
		b.Fatal(err)
	}
	captured, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	w := rt.opts.Wires[wire]
	const decodeRounds = 200
	before := cpuTime(b)
	var ev protocol.ModelEvent
	for range decodeRounds {
		st := w.NewStream(bytes.NewReader(captured))
		for st.Next(&ev) == nil {
		}
	}
	b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(decodeRounds*tokensPerStream), "wire-decode-cpu-us/token")
	direct := paths[0]
	perToken := func(p *relayPath) float64 {
		return float64((p.cpu - direct.cpu).Microseconds()) / tokens
	}
	floor, rtCost := perToken(paths[1]), perToken(paths[2])
	b.ReportMetric(floor, "floor-cpu-us/token")
	b.ReportMetric(rtCost, "runtime-cpu-us/token")
	b.ReportMetric(float64(direct.cpu.Microseconds())/tokens, "direct-cpu-us/token")
	if floor > 0 {
		b.ReportMetric(rtCost/floor, "runtime/floor")
	}
	b.ReportMetric(float64(paths[2].mallocs-direct.mallocs)/tokens, "runtime-allocs/token")
	b.ReportMetric(float64(paths[1].mallocs-direct.mallocs)/tokens, "floor-allocs/token")
}
