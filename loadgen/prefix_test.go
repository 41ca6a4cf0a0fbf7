package loadgen

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/scenarios"
)

// fastEndpointLibrary is the embedded library with plain-answer, which paces the mock's
// endpoint answers, at 1 ms a token.
func fastEndpointLibrary(t *testing.T) *scenarios.Library {
	pa, ok := scenarios.Embedded().Get("plain-answer")
	if !ok {
		t.Fatal("no plain-answer scenario")
	}
	fast := *pa
	fast.Timing = scenarios.Timing{
		TimeToFirstToken: scenarios.Dist{Kind: scenarios.DistConstant, Value: time.Millisecond},
		InterToken:       scenarios.Dist{Kind: scenarios.DistConstant, Value: time.Millisecond},
		TokensPerFrame:   1,
	}
	return scenarios.Embedded().With(&fast)
}

// TestSharedPrefixOnTheMock: with a pool of 2 prefixes of 300 tokens, the mock sees every
// prompt begin with one of 2 byte-identical prefixes (their leading digests), and the rest
// differ from session to session.
func TestSharedPrefixOnTheMock(t *testing.T) {
	t.Parallel()
	input, _ := endpoint.ParseTokenDist("50")
	output, _ := endpoint.ParseTokenDist("2")
	mix, err := EndpointMix("openai-chat", "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		mock, err := mockprovider.New(mockprovider.Options{Library: fastEndpointLibrary(t), TimeScale: 1, Clock: hrtimer.NewPortable()})
		if err != nil {
			t.Fatal(err)
		}
		run, err := Run(context.Background(), withDialects(Config{
			Clock: hrtimer.NewPortable(), Target: "http://in-memory", Transport: pipeTransport{mock},
			Mix: mix, MixName: "endpoint", RunID: "prefix", Clients: 4, Sessions: 40,
			Endpoint:    &endpoint.Workload{Input: input, Output: output, PrefixTokens: 300, PrefixPool: 2},
			NoLeakCheck: true, RuntimeMetricsURL: "-",
		}))
		if err != nil || run.Summary.Counters.SessionsOK != 40 {
			t.Fatalf("run: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background()) // ends the pipe's goroutine
		defer cancel()
		recs, err := mockrecords.Client{HTTP: &http.Client{Transport: pipeTransport{mock}}, URL: "http://in-memory"}.Sessions(ctx)
		if err != nil || len(recs) != 40 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		prefixes, prompts := map[string]int{}, map[string]bool{}
		for _, rec := range recs {
			// 300 one-token words are at least 1 KiB (the shortest is a letter and a space):
			// the first digest is the prefix's alone.
			prefixes[rec.PromptDigests[0]]++
			prompts[strings.Join(rec.PromptDigests, ",")] = true
		}
		if len(prefixes) != 2 || len(prompts) != 40 {
			t.Errorf("%d prefixes and %d prompts over 40 sessions, want 2 and 40 (%v)", len(prefixes), len(prompts), prefixes)
		}
	})
}
