package workload

import (
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/modeltokens"
)

// TestExactInputTokens (issue 42's acceptance): --input-tokens 512 --tokenizer cl100k_base
// prompts encode to exactly 512 tokens of cl100k_base, and o200k_base's to 512 of its own;
// --prefix-tokens 64 puts 64 more in front.
func TestExactInputTokens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tokenizer string
		prefix    int
	}{{modeltokens.CL100K, 0}, {modeltokens.O200K, 0}, {modeltokens.CL100K, 64}} {
		w := resolvable(workload{Dialect: "openai-chat", InputTokens: "512", Tokenizer: tc.tokenizer, PrefixTokens: tc.prefix})
		cfg, err := w.build()
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 5; seed++ {
			req, _ := cfg.Endpoint.Request(seed, seed)
			if n, err := modeltokens.Count(tc.tokenizer, req.Messages[0].Text); err != nil || n != 512+tc.prefix {
				t.Errorf("%s, prefix %d, seed %d: %d tokens, %v; want %d", tc.tokenizer, tc.prefix, seed, n, err, 512+tc.prefix)
			}
		}
	}
}

// TestPrefixAndTokenizerFlags: --prefix-tokens, --prefix-pool and --tokenizer are refused,
// naming the flag, where they cannot apply.
func TestPrefixAndTokenizerFlags(t *testing.T) {
	t.Parallel()
	buildErrs(t, []badWorkload{
		// prefixes of nothing, a pool of no length, prefixes of a given prompt
		{workload{Dialect: "openai-chat", PrefixTokens: 8}, "--prefix-tokens shapes an endpoint workload's request"},
		{workload{Dialect: "openai-chat", InputTokens: "8", PrefixPool: 3}, "--prefix-pool draws among prefixes of --prefix-tokens"},
		{workload{Dialect: "openai-chat", Prompt: "hi", PrefixTokens: 8}, "--prefix-tokens shapes synthetic prompts"},
		{workload{Dialect: "openai-chat", InputTokens: "8", PrefixTokens: -1}, "--prefix-tokens -1, --prefix-pool 0: want positive counts"},
		// an encoding not embedded, the tokenizer of no endpoint workload
		{workload{Dialect: "openai-chat", InputTokens: "8", Tokenizer: "p50k_base"}, `--tokenizer: modeltokens: unknown encoding "p50k_base"`},
		{workload{Dialect: "openai-chat", Tokenizer: "o200k_base"}, "--tokenizer shapes an endpoint workload's request"},
	})
}

// TestTraceFlags: --trace makes an endpoint workload of the file's rows, the run as long as
// its rows, its times divided by --trace-speed; the trace flags are refused, naming the flag,
// where they cannot apply.
func TestTraceFlags(t *testing.T) {
	t.Parallel()
	trace := writeTemp(t, "t.csv", []byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.5,10,4\n2023-11-16 18:15:47.5,20,5\n"))
	bad := writeTemp(t, "bad.jsonl", []byte("{\"timestamp\":1,\"input_length\":3,\"output_length\":1}\n{\"timestamp\":\"x\"}\n"))
	w := resolvable(workload{Dialect: "openai-chat", Trace: trace, TraceSpeed: 4})
	cfg, err := w.build()
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.Endpoint; e == nil || len(e.Trace) != 2 || e.Trace[1].At != 250*time.Millisecond || cfg.Sessions != 2 || cfg.Clients != 0 || cfg.Duration != 0 || cfg.Rate != 0 {
		t.Errorf("config: endpoint %+v, sessions %d, clients %d, duration %v", e, cfg.Sessions, cfg.Clients, cfg.Duration)
	}
	if req, _ := cfg.Endpoint.Request(1, 9); req.MaxTokens != 5 {
		t.Errorf("row 1 sent max_tokens %d, want its 5", req.MaxTokens)
	}
	buildErrs(t, []badWorkload{
		// a bad row, by file and line
		{workload{Dialect: "openai-chat", Trace: bad}, "--trace: " + bad + ":2: "},
		{workload{Dialect: "openai-chat", Trace: trace, TraceFormat: "sharegpt"}, `--trace-format "sharegpt": want mooncake or azure`},
		// the trace's rows are the prompts
		{workload{Dialect: "openai-chat", Trace: trace, InputTokens: "8"}, "--trace and --input-tokens"},
		{workload{Dialect: "openai-chat", Trace: trace, PrefixTokens: 8}, "--prefix-tokens shapes synthetic prompts"},
		{workload{Dialect: "openai-chat", TraceSpeed: 2, InputTokens: "8"}, "--trace-speed reads a trace: give --trace too"},
		{workload{Dialect: "sim-chat", Trace: trace}, "--trace is for an inference endpoint"},
	})
}

// TestBurstinessFlag: --burstiness is gamma's shape, refused without --arrival gamma or when
// not a positive, finite number, naming the flag.
func TestBurstinessFlag(t *testing.T) {
	t.Parallel()
	buildErrs(t, []badWorkload{
		// gamma's shape, of gamma alone
		{workload{cfg: loadgen.Config{Rate: 5, Burstiness: 0.5}}, "--burstiness 0.5: want a positive, finite shape of --arrival gamma"},
		{workload{cfg: loadgen.Config{Rate: 5, Arrival: "gamma", Burstiness: -1}}, "--burstiness -1"},
	})
	if cfg, err := resolvable(workload{cfg: loadgen.Config{Rate: 5, Arrival: "gamma", Burstiness: 0.5}}).build(); err != nil || cfg.Burstiness != 0.5 || cfg.Arrival != "gamma" {
		t.Errorf("gamma arrivals: %v, %+v", err, cfg)
	}
}
