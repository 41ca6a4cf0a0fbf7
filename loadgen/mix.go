package loadgen

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"

	"github.com/goccy/go-yaml"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

//go:embed mix.yaml
var defaultMixYAML []byte

// The client dialects a profile may use.
const (
	DialectSimChat   = "sim-chat"
	DialectSimCanvas = "sim-canvas"
	DialectCompose   = "compose"
)

// Mix is a workload: which scenarios to play, how often, and through which clients. It is read
// from YAML (DefaultMix embeds the default) and is immutable once validated.
type Mix struct {
	// Name labels the mix in results.
	Name string `yaml:"name"`
	// Seed makes the session sequence reproducible: session i of two runs with the same seed
	// plays the same scenario, seed, profile and target.
	Seed uint64 `yaml:"seed"`
	// Scenarios maps a scenario name to its relative weight.
	Scenarios map[string]float64 `yaml:"scenarios"`
	// Profiles are the client kinds, picked by weight.
	Profiles []Profile `yaml:"profiles"`
	// Thresholds are gate expressions, stored in the results for `streambench gate`.
	Thresholds []string `yaml:"thresholds"`
	// Allow lists rule IDs whose violations are known findings of the target (e.g. R-abort for
	// a runtime that does not cancel its provider stream): still counted and shown as allowed,
	// they fail neither the run nor `streambench gate`.
	Allow []protocol.Rule `yaml:"allow"`
	// GoodputSLOs are per-session objectives (measure.ParseSessionSLO, e.g. "ttft<500ms"): a
	// session that succeeded and met every one, and every load --goodput-slo, is goodput.
	GoodputSLOs []string `yaml:"goodputSLOs"`

	// scenarioNames is Scenarios' keys in sorted order, so weighted picks do not depend on
	// map iteration order.
	scenarioNames []string
}

// Profile is one kind of client.
type Profile struct {
	Name string `yaml:"name"`
	// Dialect is sim-chat, sim-canvas or compose.
	Dialect string `yaml:"dialect"`
	// OptedIn sends the sim-chat protocol header (ignored by other dialects).
	OptedIn bool    `yaml:"optedIn"`
	Weight  float64 `yaml:"weight"`
	// Targets are the deployments this client talks to, picked uniformly.
	Targets []Target `yaml:"targets"`
	// Headers are sent on every request of this profile ("Name: value" pairs; Config.Headers
	// win for the same name). Sensitive values are never recorded or printed.
	Headers map[string]string `yaml:"headers"`
	// Path is the stream request's path template ("" = the dialect's default; placeholders
	// compose {agent}, sim-chat {slug}, sim-canvas {workflow}). StopPath is compose's stop
	// request path ({agent}, {run}; "" = derived from Path).
	Path     string `yaml:"path"`
	StopPath string `yaml:"stopPath"`
}

// Target is a deployment slug (sim-chat), workflow id (sim-canvas) or agent id (compose) with the
// event policy the deployment has, which the sim-chat checker needs.
type Target struct {
	Slug             string `yaml:"slug"`
	IncludeThinking  bool   `yaml:"includeThinking"`
	IncludeToolCalls bool   `yaml:"includeToolCalls"`
}

// Policy is the target's sim-chat event policy.
func (t Target) Policy() protocol.Policy {
	return protocol.Policy{IncludeThinking: t.IncludeThinking, IncludeToolCalls: t.IncludeToolCalls}
}

// DefaultMix returns the embedded default mix (a fresh copy each call).
func DefaultMix() *Mix {
	m, err := ParseMix("mix.yaml (embedded)", defaultMixYAML)
	if err != nil {
		panic("embedded default mix is invalid: " + err.Error()) // a build defect, caught by tests
	}
	return m
}

// LoadMix reads and validates a mix file.
func LoadMix(path string) (*Mix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	return ParseMix(path, data)
}

// ParseMix parses and validates a mix; errors name the file and the line or field at fault.
func ParseMix(name string, data []byte) (*Mix, error) {
	var m Mix
	if err := yaml.UnmarshalWithOptions(data, &m, yaml.DisallowUnknownField()); err != nil {
		return nil, fmt.Errorf("mix %s: %s", name, yaml.FormatError(err, false, true))
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("mix %s: %w", name, err)
	}
	return &m, nil
}

func (m *Mix) validate() error {
	var errs []error
	if len(m.Scenarios) == 0 {
		errs = append(errs, errors.New("scenarios: at least one scenario with a weight is required"))
	}
	m.scenarioNames = m.scenarioNames[:0]
	for name, w := range m.Scenarios {
		if !(w >= 0) {
			errs = append(errs, fmt.Errorf("scenarios.%s: weight %v must be >= 0", name, w))
		}
		if w > 0 {
			m.scenarioNames = append(m.scenarioNames, name)
		}
	}
	slices.Sort(m.scenarioNames)
	if len(m.Scenarios) > 0 && len(m.scenarioNames) == 0 {
		errs = append(errs, errors.New("scenarios: every weight is 0"))
	}
	if len(m.Profiles) == 0 {
		errs = append(errs, errors.New("profiles: at least one client profile is required"))
	}
	var total float64
	for i, p := range m.Profiles {
		where := fmt.Sprintf("profiles[%d]", i)
		if p.Name != "" {
			where += " (" + p.Name + ")"
		}
		switch p.Dialect {
		case DialectSimChat, DialectSimCanvas, DialectCompose:
		default:
			errs = append(errs, fmt.Errorf("%s.dialect: %q, want sim-chat, sim-canvas or compose", where, p.Dialect))
		}
		if !(p.Weight >= 0) {
			errs = append(errs, fmt.Errorf("%s.weight: %v must be >= 0", where, p.Weight))
		}
		total += max(p.Weight, 0)
		if len(p.Targets) == 0 {
			errs = append(errs, fmt.Errorf("%s.targets: at least one target is required", where))
		}
		for name, v := range p.Headers {
			if _, _, err := ParseHeader(name + ": " + v); err != nil {
				errs = append(errs, fmt.Errorf("%s.headers: %w", where, err))
			}
		}
		if p.Dialect == DialectSimChat || p.Dialect == DialectSimCanvas || p.Dialect == DialectCompose {
			if err := CheckPaths(p.Dialect, p.Path, p.StopPath); err != nil {
				errs = append(errs, fmt.Errorf("%s.path: %w", where, err))
			}
		}
		for j, t := range p.Targets {
			if t.Slug == "" {
				errs = append(errs, fmt.Errorf("%s.targets[%d].slug: required", where, j))
			}
		}
	}
	if len(m.Profiles) > 0 && total == 0 {
		errs = append(errs, errors.New("profiles: every weight is 0"))
	}
	for i, rule := range m.Allow {
		if _, err := protocol.ParseRule(string(rule)); err != nil {
			errs = append(errs, fmt.Errorf("allow[%d]: %w", i, err))
		}
	}
	for i, expr := range m.GoodputSLOs {
		if _, err := measure.ParseSessionSLO(expr); err != nil {
			errs = append(errs, fmt.Errorf("goodputSLOs[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// ScenarioNames returns the scenarios the mix can pick (weight > 0), sorted.
func (m *Mix) ScenarioNames() []string { return slices.Clone(m.scenarioNames) }

// Dialects returns the distinct dialects of the profiles with weight > 0, in profile order.
func (m *Mix) Dialects() []string {
	var out []string
	for _, p := range m.Profiles {
		if p.Weight > 0 && !slices.Contains(out, p.Dialect) {
			out = append(out, p.Dialect)
		}
	}
	return out
}

// Restrict returns a copy of the mix for command-line overrides: only the profiles of dialect
// (all when empty; a new profile when none matches), optedIn forced when non-nil, and every
// target replaced by slug when slug is non-empty.
func (m *Mix) Restrict(dialect string, optedIn *bool, slug *Target) (*Mix, error) {
	out := *m
	out.Profiles = nil
	for _, p := range m.Profiles {
		if dialect != "" && p.Dialect != dialect {
			continue
		}
		p.Targets = slices.Clone(p.Targets)
		p.Headers = maps.Clone(p.Headers)
		out.Profiles = append(out.Profiles, p)
	}
	if len(out.Profiles) == 0 {
		if slug == nil {
			return nil, fmt.Errorf("mix %s has no %s profile: name a target with --slug", m.Name, dialect)
		}
		out.Profiles = []Profile{{Name: dialect, Dialect: dialect, Weight: 1}}
	}
	for i := range out.Profiles {
		p := &out.Profiles[i]
		if optedIn != nil {
			p.OptedIn = *optedIn
		}
		if slug != nil {
			p.Targets = []Target{*slug}
		}
	}
	out.Scenarios = make(map[string]float64, len(m.Scenarios))
	for k, v := range m.Scenarios {
		out.Scenarios[k] = v
	}
	out.scenarioNames = nil
	if err := out.validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// Pick is one session's identity, a pure function of (mix, seed, index).
type Pick struct {
	Index    uint64
	Scenario string
	// Seed renders the scenario.
	Seed    uint64
	Profile *Profile
	Target  Target
}

// Pick derives session index's scenario, scenario seed, profile and target from seed.
func (m *Mix) Pick(seed, index uint64) Pick {
	r := rand.New(rand.NewPCG(seed, index))
	p := Pick{Index: index}
	var total float64
	for _, n := range m.scenarioNames {
		total += m.Scenarios[n]
	}
	x := r.Float64() * total
	p.Scenario = m.scenarioNames[len(m.scenarioNames)-1]
	for _, n := range m.scenarioNames {
		if x < m.Scenarios[n] {
			p.Scenario = n
			break
		}
		x -= m.Scenarios[n]
	}
	total = 0
	for i := range m.Profiles {
		total += max(m.Profiles[i].Weight, 0)
	}
	x = r.Float64() * total
	p.Profile = &m.Profiles[len(m.Profiles)-1]
	for i := range m.Profiles {
		w := max(m.Profiles[i].Weight, 0)
		if w > 0 && x < w {
			p.Profile = &m.Profiles[i]
			break
		}
		x -= w
	}
	p.Target = p.Profile.Targets[r.IntN(len(p.Profile.Targets))]
	// Small seeds keep directives short and readable in logs.
	p.Seed = r.Uint64() % 1_000_000
	return p
}

// Label names the profile's client kind in results (the dialect part of a histogram key):
// sim-chat-optedin or sim-chat-legacy for sim-chat, the dialect name otherwise.
func (p *Profile) Label() string {
	if p.Dialect == DialectSimChat {
		if p.OptedIn {
			return p.Dialect + "-optedin"
		}
		return p.Dialect + "-legacy"
	}
	return p.Dialect
}

// goodputSLOs is the mix's goodput SLOs (validated with the mix) followed by extra.
func (m *Mix) goodputSLOs(extra []measure.SessionSLO) []measure.SessionSLO {
	var out []measure.SessionSLO
	for _, expr := range m.GoodputSLOs {
		if s, err := measure.ParseSessionSLO(expr); err == nil {
			out = append(out, s)
		}
	}
	return append(out, extra...)
}
