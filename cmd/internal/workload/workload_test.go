package workload

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
)

// TestWorkloadConfig: the workload's defaults, its dialect options and each bad setting,
// named by its flag.
func TestWorkloadConfig(t *testing.T) {
	t.Parallel()
	// ok is a workload that resolves: the flags' defaults that are not zero.
	ok := workload{cfg: loadgen.Config{ScriptTimeScale: 1, SnapshotInterval: time.Second}}
	with := func(f func(*workload)) workload { w := ok; f(&w); return w }
	for _, tc := range []struct {
		name    string
		w       workload
		check   func(loadgen.Config) bool
		wantErr string
	}{
		// no shape and no length: the default mix's clients for the default duration
		{"defaults", ok, func(c loadgen.Config) bool {
			return c.Clients == loadgen.DefaultClients && c.Duration == loadgen.DefaultDuration && c.MixName == "default" && c.Options == nil
		}, ""},
		// a rate is the shape, sessions the length: no defaults added
		{"open loop", with(func(w *workload) { w.cfg.Rate, w.cfg.Sessions = 5, 10 }), func(c loadgen.Config) bool {
			return c.Clients == 0 && c.Duration == 0
		}, ""},
		// --option and the shorthands become one option set
		{"options", with(func(w *workload) {
			w.Options, w.Dialect, w.Slug, w.Path = []string{"k=v", "optedIn=true", "policy=tools"}, "sim-chat", "s", "/p/{slug}"
		}), func(c loadgen.Config) bool {
			return c.Options["k"] == "v" && c.Options["optedIn"] == "true" && c.Options["policy"] == "tools" && c.Options["path"] == "/p/{slug}"
		}, ""},
		// a time scale that is no factor
		{"time scale", with(func(w *workload) { w.cfg.ScriptTimeScale = 0 }), nil, "--time-scale 0"},
		// an option without a value
		{"option", with(func(w *workload) { w.Options = []string{"k"} }), nil, `--option "k"`},
		// an unknown dialect
		{"dialect", with(func(w *workload) { w.Dialect = "nope" }), nil, "--dialect:"},
		// a path for a mix of several dialects
		{"path", with(func(w *workload) { w.Path = "/x" }), nil, "--path"},
		// a mix file that is not there
		{"mix", with(func(w *workload) { w.Mix = "testdata/no-such-mix.yaml" }), nil, "--mix:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tc.w.build()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(cfg) {
				t.Fatalf("config %+v, err %v", cfg, err)
			}
		})
	}
}

// TestWorkloadScenarioFiles: --scenario files are the whole mix, equally weighted, through
// the mix's profiles (here the one of --dialect), and join the library; beside an endpoint
// workload, or when a file is bad, the error names the flag and the file.
func TestWorkloadScenarioFiles(t *testing.T) {
	t.Parallel()
	file := writeTemp(t, "mine.yaml", []byte("name: my-answer\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: {tokens: 5}\n"))
	w := resolvable(workload{ScenarioFiles: []string{file}, Dialect: "sim-chat"})
	cfg, err := w.build()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Mix.ScenarioNames(); len(got) != 1 || got[0] != "my-answer" {
		t.Errorf("the mix plays %v, want only my-answer", got)
	}
	if _, ok := cfg.Library.Get("my-answer"); !ok {
		t.Error("the library lacks the file's scenario")
	}
	for _, p := range cfg.Mix.Profiles {
		if p.Dialect != "sim-chat" || len(p.Scenarios) != 0 {
			t.Errorf("profile %s (%s) keeps scenarios of its own: %v", p.Name, p.Dialect, p.Scenarios)
		}
	}
	cfg.Target = "http://127.0.0.1:1"
	if err := cfg.Validate(); err != nil {
		t.Errorf("validate: %v", err)
	}
	bad := writeTemp(t, "bad.yaml", []byte("name: bad\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: {tokens: -3}\n"))
	buildErrs(t, []badWorkload{
		// a bad file: the flag, the file and its line
		{workload{ScenarioFiles: []string{bad}}, "--scenario: " + bad + ":4"},
		// a script and a real model's requests
		{workload{ScenarioFiles: []string{file}, Dialect: "openai-chat", OutputTokens: "8"}, "--scenario and the endpoint workload"},
	})
}

// TestConversationsNotWithPrompts: --conversations with --prompts is refused, naming both.
func TestConversationsNotWithPrompts(t *testing.T) {
	t.Parallel()
	w := resolvable(workload{Dialect: "openai-chat", Conversations: "c.jsonl", Prompts: "c.jsonl"})
	if _, err := w.build(); err == nil || !strings.Contains(err.Error(), "--conversations and --input-tokens or --prompts") {
		t.Errorf("--conversations with --prompts: %v", err)
	}
}

func TestEndpointWorkloadNeedsAProviderDialect(t *testing.T) {
	t.Parallel()
	w := resolvable(workload{Dialect: "sim-chat", InputTokens: "64"})
	if _, err := w.build(); err == nil || !strings.Contains(err.Error(), "--dialect openai-chat, anthropic-messages or openai-responses") {
		t.Errorf("sim-chat with --input-tokens: %v", err)
	}
	w = resolvable(workload{Dialect: "anthropic-messages", APIKey: "sk-ant-abcdef123456", OutputTokens: "32"})
	cfg, err := w.build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Headers.Get("x-api-key") != w.APIKey || cfg.Endpoint == nil || !cfg.NoGroundTruth || len(cfg.Redact) != 1 {
		t.Errorf("config headers %v endpoint %+v ngt %v redact %d", loadgen.RedactedHeaders(cfg.Headers), cfg.Endpoint, cfg.NoGroundTruth, len(cfg.Redact))
	}
}

// TestEndpointRequestFields: --max-tokens-field, --min-tokens and --ignore-eos reach the
// endpoint request (min_tokens equal to the sampled max_tokens), and are refused, naming the
// flag, where they cannot apply.
func TestEndpointRequestFields(t *testing.T) {
	t.Parallel()
	w := resolvable(workload{Dialect: "openai-chat", OutputTokens: "uniform:10-20", MaxTokensField: "max_completion_tokens", MinTokens: true, IgnoreEOS: true})
	cfg, err := w.build()
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed < 20; seed++ {
		req, _ := cfg.Endpoint.Request(seed, seed)
		if req.MaxTokens < 10 || req.MaxTokens > 20 || req.MinTokens != req.MaxTokens || !req.IgnoreEOS || req.MaxTokensField != "max_completion_tokens" {
			t.Fatalf("seed %d: request %+v, want max_completion_tokens in 10..20, min_tokens equal, ignore_eos", seed, req)
		}
	}
	buildErrs(t, []badWorkload{
		// not a field name
		{workload{Dialect: "openai-chat", OutputTokens: "8", MaxTokensField: "max_new_tokens"}, `--max-tokens-field "max_new_tokens": want max_tokens, max_completion_tokens or both`},
		// Anthropic's wire has max_tokens alone
		{workload{Dialect: "anthropic-messages", OutputTokens: "8", IgnoreEOS: true}, "--ignore-eos is a field of the OpenAI chat wire"},
		{workload{Dialect: "anthropic-messages", OutputTokens: "8", MaxTokensField: "both"}, "--max-tokens-field is a field of the OpenAI chat wire"},
		// min_tokens equal to nothing
		{workload{Dialect: "openai-chat", InputTokens: "8", MinTokens: true}, "--min-tokens sends min_tokens equal to max_tokens: give --output-tokens"},
		// no endpoint workload to shape
		{workload{Dialect: "openai-chat", IgnoreEOS: true}, "--ignore-eos shapes an endpoint workload's request"},
	})
}

// TestOnePrompt: --prompt is the user's message of every request, whatever the seed, with
// --output-tokens as max_tokens; with another prompt source it is refused, naming both flags.
func TestOnePrompt(t *testing.T) {
	t.Parallel()
	w := resolvable(workload{Dialect: "openai-chat", Prompt: "Summarise the plot of Hamlet.", OutputTokens: "32"})
	cfg, err := w.build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Endpoint == nil || !cfg.NoGroundTruth || cfg.MixName != "endpoint" {
		t.Fatalf("--prompt made no endpoint workload: endpoint %+v, no ground truth %v, mix %q", cfg.Endpoint, cfg.NoGroundTruth, cfg.MixName)
	}
	for seed := uint64(1); seed < 10; seed++ {
		req, conv := cfg.Endpoint.Request(seed, seed)
		if conv != nil || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Text != w.Prompt || req.MaxTokens != 32 {
			t.Fatalf("seed %d: request %+v, want the one user message %q and max_tokens 32", seed, req, w.Prompt)
		}
	}
	buildErrs(t, []badWorkload{
		// two prompt sources
		{workload{Dialect: "openai-chat", Prompt: "hi", Prompts: "p.jsonl"}, "--prompt and --prompts"},
		// one prompt, or synthetic prompts of a length
		{workload{Dialect: "openai-chat", Prompt: "hi", InputTokens: "64"}, "--prompt and --input-tokens"},
		// conversations bring their own turns
		{workload{Dialect: "openai-chat", Prompt: "hi", Conversations: "c.jsonl"}, "--prompt and --conversations"},
		// not an inference endpoint's dialect
		{workload{Dialect: "sim-chat", Prompt: "hi"}, "--prompt is for an inference endpoint"},
	})
}

// TestTLSFlags: --ca-cert is read into the roots the generator trusts, --insecure skips
// verification, and a file that cannot be read, one without a certificate, or both flags are
// refused naming the flag.
func TestTLSFlags(t *testing.T) {
	t.Parallel()
	notPEM := writeTemp(t, "not.pem", []byte("not a certificate"))
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	ca := writeTemp(t, "ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	ok := resolvable(workload{CACert: ca})
	cfg, err := ok.build()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS == nil || cfg.TLS.RootCAs == nil || cfg.Info.Extra["ca-cert"] != ca {
		t.Errorf("--ca-cert: TLS %+v, recorded %v", cfg.TLS, cfg.Info.Extra)
	}
	if _, err := ts.Certificate().Verify(x509.VerifyOptions{Roots: cfg.TLS.RootCAs}); err != nil {
		t.Errorf("the roots do not verify the file's certificate: %v", err)
	}
	insecure := resolvable(workload{Insecure: true})
	if cfg, err := insecure.build(); err != nil || cfg.TLS == nil || !cfg.TLS.InsecureSkipVerify || cfg.Info.Extra["insecure"] != "true" {
		t.Errorf("--insecure: %v, %+v", err, cfg.TLS)
	}
	buildErrs(t, []badWorkload{
		// a missing file
		{workload{CACert: "/nonexistent/ca.pem"}, "--ca-cert: open /nonexistent/ca.pem"},
		// a file without a PEM certificate
		{workload{CACert: notPEM}, "no PEM certificate in it"},
		// both a CA and no verification
		{workload{CACert: ca, Insecure: true}, "--ca-cert and --insecure"},
	})
}

// resolvable is w with the flags' defaults that are not zero (--time-scale, --snapshot-every).
// writeTemp writes data to a file name in a new temporary directory and returns its path.
func writeTemp(t *testing.T, name string, data []byte) string {
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func resolvable(w workload) workload {
	w.cfg.ScriptTimeScale, w.cfg.SnapshotInterval = 1, 1
	return w
}

// badWorkload is a workload refused with an error containing want.
type badWorkload struct {
	w    workload
	want string
}

// buildErrs checks each workload, made resolvable, is refused with its error.
func buildErrs(t *testing.T, cases []badWorkload) {
	t.Helper()
	for _, tc := range cases {
		w := resolvable(tc.w)
		if _, err := w.build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", w, err, tc.want)
		}
	}
}
