package agentruntime

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol/simchat"
)

func TestDefaultDeployments(t *testing.T) {
	t.Parallel()
	ds := DefaultDeployments()
	for _, wire := range knownWires {
		for _, c := range []struct {
			suffix            string
			thinking, toolsOn bool
		}{{"none", false, false}, {"thinking", true, false}, {"tools", false, true}, {"all", true, true}} {
			d, ok := ds.Lookup(wire + "-" + c.suffix)
			if !ok {
				t.Fatalf("missing default deployment %s-%s", wire, c.suffix)
			}
			if d.Wire != wire || d.IncludeThinking != c.thinking || d.IncludeToolCalls != c.toolsOn {
				t.Errorf("%s: got wire=%s thinking=%v tools=%v", d.Slug, d.Wire, d.IncludeThinking, d.IncludeToolCalls)
			}
		}
	}
	// The PII-redacting canvas workflows, one per wire.
	for _, wire := range knownWires {
		if d, ok := ds.Lookup(wire + "-redacted"); !ok || !d.RedactPII || d.Wire != wire {
			t.Errorf("%s-redacted: want a deployment with redactPII on wire %s, got %+v", wire, wire, d)
		}
	}
	if got := len(ds.Slugs()); got != 13 {
		t.Errorf("default deployments: got %d, want 13", got)
	}
	// The provider that runs its tools settled (liveTools: false), and only it; its slug's
	// "settled" part tells the sim-chat checker.
	for _, d := range ds.All() {
		if want := d.Slug == "openai-settled-all"; d.Policy().SettledTools != want || simchat.LiveToolsForSlug(d.Slug) == want {
			t.Errorf("%s: settled tools %v, slug says live %v; want settled %v", d.Slug, d.Policy().SettledTools, simchat.LiveToolsForSlug(d.Slug), want)
		}
	}
	// Capability honesty: the nothink deployments name models without thinking in the registry,
	// so their policy (all) cannot let thinking through; every other one thinks.
	for _, d := range ds.All() {
		want := !strings.Contains(d.Slug, "-nothink-")
		if d.ModelThinks() != want || d.Policy().NoModelThinking == want {
			t.Errorf("%s (model %s): ModelThinks %v, policy %+v; want thinking %v", d.Slug, d.Model, d.ModelThinks(), d.Policy(), want)
		}
	}
}

func TestParseDeploymentsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		yaml string
		want string // substring of the error
	}{
		// A wire that does not exist names the line, index and field.
		{"unknown wire", "deployments:\n  - slug: a\n    wire: grpc\n    model: m\n", "d.yaml:3: deployments[0].wire: \"grpc\" is not a provider wire"},
		// The slug is what URLs use; it cannot be empty.
		{"missing slug", "deployments:\n  - wire: openai\n    model: m\n", "deployments[0].slug: missing"},
		// Two deployments with one slug would make lookups ambiguous.
		{"duplicate", "deployments:\n  - slug: a\n    wire: openai\n    model: m\n  - slug: a\n    wire: openai\n    model: m\n", "d.yaml:5: deployments[1].slug: \"a\" already defined"},
		// Typos in field names must not be silently ignored.
		{"unknown field", "deployments:\n  - slug: a\n    wire: openai\n    model: m\n    includeThinkin: true\n", "unknown field \"includeThinkin\""},
		// A provider that is not a URL is rejected before any request is made.
		{"bad provider", "deployments:\n  - slug: a\n    wire: openai\n    model: m\n    provider: localhost:1\n", "deployments[0].provider: \"localhost:1\" is not an http(s) URL"},
		// An empty document is a mistake, not an empty runtime.
		{"empty", "# nothing\n", "no deployments"},
		// Broken YAML reports the syntax error position.
		{"syntax", "deployments:\n  - slug: [a\n", "d.yaml: [2:"},
		// A slug with a slash could never be matched by a URL path segment.
		{"bad slug", "deployments:\n  - slug: a/b\n    wire: openai\n    model: m\n", "may only contain"},
	} {
		_, err := ParseDeployments("d.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
