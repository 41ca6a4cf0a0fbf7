package agentruntime

import (
	_ "embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/streambench/streambench/protocol/simchat"
)

//go:embed deployments.yaml
var defaultDeploymentsYAML []byte

var knownWires = []string{"openai", "anthropic"}

// Deployment is one agent as the runtime serves it, named alike by every dialect's URL.
type Deployment struct {
	Slug             string   `yaml:"slug" json:"slug"`                         // names the deployment in every dialect's URL.
	Provider         string   `yaml:"provider" json:"provider,omitempty"`       // the model provider's base URL; empty means the runtime's default provider.
	Wire             string   `yaml:"wire" json:"wire"`                         // the provider wire format: "openai" or "anthropic".
	Model            string   `yaml:"model" json:"model"`                       // the model name sent to the provider.
	IncludeThinking  bool     `yaml:"includeThinking" json:"includeThinking"`   // lets opted-in sim-chat clients see thinking frames.
	IncludeToolCalls bool     `yaml:"includeToolCalls" json:"includeToolCalls"` // lets opted-in sim-chat clients see tool lifecycle frames.
	Tools            []string `yaml:"tools" json:"tools,omitempty"`             // the tools offered to the model; empty allows any tool the model calls.
	RedactPII        bool     `yaml:"redactPII" json:"redactPII,omitempty"`     // redacts the canvas block's output (redact.go).
	// LiveTools says whether the provider runs its tool loop live (nil: true); false, as Sim's
	// providers without one (vLLM, ...), sends the public chat only the settled final text
	// (R-settled-tools).
	LiveTools       *bool `yaml:"liveTools" json:"liveTools,omitempty"`
	noModelThinking bool  // the model's registry capability, resolved by ParseDeployments.
}

// Policy is the deployment's sim-chat event policy.
func (d *Deployment) Policy() simchat.Policy {
	return simchat.Policy{IncludeThinking: d.IncludeThinking, IncludeToolCalls: d.IncludeToolCalls, NoModelThinking: d.noModelThinking,
		SettledTools: d.LiveTools != nil && !*d.LiveTools}
}

func (d *Deployment) allowsTool(name string) bool {
	return len(d.Tools) == 0 || slices.Contains(d.Tools, name)
}

// Deployments is a validated, immutable set of deployments; safe for concurrent use.
type Deployments struct {
	list   []Deployment
	bySlug map[string]int
}

// Lookup returns the deployment named slug.
func (ds *Deployments) Lookup(slug string) (*Deployment, bool) {
	i, ok := ds.bySlug[slug]
	if !ok {
		return nil, false
	}
	return &ds.list[i], true
}

// All returns a copy of every deployment in file order.
func (ds *Deployments) All() []Deployment {
	return slices.Clone(ds.list)
}

// Slugs returns every deployment's slug in file order.
func (ds *Deployments) Slugs() []string {
	out := make([]string, len(ds.list))
	for i := range ds.list {
		out[i] = ds.list[i].Slug
	}
	return out
}

// DefaultDeployments returns the embedded deployments: each wire × each policy combination,
// named <wire>-none, -thinking, -tools and -all. It panics on a broken embedded file.
func DefaultDeployments() *Deployments {
	ds, err := ParseDeployments("deployments.yaml (embedded)", defaultDeploymentsYAML)
	if err != nil {
		panic(fmt.Sprintf("agentruntime: embedded deployments are invalid: %v", err))
	}
	return ds
}

// LoadDeployments reads and validates a deployments YAML file.
func LoadDeployments(path string) (*Deployments, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("deployments: %w", err)
	}
	return ParseDeployments(path, data)
}

type deploymentsFile struct {
	Deployments []Deployment `yaml:"deployments"`
	Models      []ModelInfo  `yaml:"models"` // add to or override the embedded model registry (capability.go).
}

// ParseDeployments parses and validates a deployments document; errors name file, line and field.
func ParseDeployments(name string, data []byte) (*Deployments, error) {
	var doc deploymentsFile
	if err := yaml.UnmarshalWithOptions(data, &doc, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s: %s", name, yaml.FormatError(err, false, false))
	}
	if len(doc.Deployments) == 0 {
		return nil, fmt.Errorf("%s: no deployments (expected a top-level \"deployments:\" list)", name)
	}
	var file *ast.File
	fieldErr := func(i int, field, format string, args ...any) error {
		if file == nil {
			file, _ = parser.ParseBytes(data, 0)
		}
		return fmt.Errorf("%s:%d: deployments[%d].%s: %s", name, lineOf(file, i, field), i, field, fmt.Sprintf(format, args...))
	}
	ds := &Deployments{list: doc.Deployments, bySlug: make(map[string]int, len(doc.Deployments))}
	for i := range ds.list {
		d := &ds.list[i]
		switch {
		case d.Slug == "":
			return nil, fieldErr(i, "slug", "missing (every deployment needs a slug)")
		case !validSlug(d.Slug):
			return nil, fieldErr(i, "slug", "%q may only contain letters, digits, '-', '_' and '.'", d.Slug)
		case !slices.Contains(knownWires, d.Wire):
			return nil, fieldErr(i, "wire", "%q is not a provider wire (expected one of %v)", d.Wire, knownWires)
		case d.Model == "":
			return nil, fieldErr(i, "model", "missing")
		}
		if d.Provider != "" {
			u, err := url.Parse(d.Provider)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fieldErr(i, "provider", "%q is not an http(s) URL", d.Provider)
			}
		}
		if j, dup := ds.bySlug[d.Slug]; dup {
			return nil, fieldErr(i, "slug", "%q already defined by deployments[%d]", d.Slug, j)
		}
		ds.bySlug[d.Slug] = i
	}
	thinks, err := modelThinking(name, doc.Models)
	if err != nil {
		return nil, err
	}
	for i := range ds.list {
		t, known := thinks[ds.list[i].Model]
		ds.list[i].noModelThinking = known && !t // a model missing from the registry is taken to think
	}
	return ds, nil
}

// validSlug reports whether a slug is all letters, digits, '-', '_' and '.'.
var validSlug = regexp.MustCompile(`^[A-Za-z0-9._-]*$`).MatchString

// lineOf finds the line of deployments[i].field, else of deployments[i] (0: not found).
func lineOf(file *ast.File, i int, field string) int {
	if file == nil {
		return 0
	}
	for _, p := range []string{fmt.Sprintf("$.deployments[%d].%s", i, field), fmt.Sprintf("$.deployments[%d]", i)} {
		path, err := yaml.PathString(p)
		if err != nil {
			continue
		}
		node, err := path.FilterFile(file)
		if err != nil || node == nil || node.GetToken() == nil {
			continue
		}
		return node.GetToken().Position.Line
	}
	return 0
}

// errUnknownDeployment is returned (wrapped) for a slug no deployment has.
var errUnknownDeployment = errors.New("unknown deployment")
