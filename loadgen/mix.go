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

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

//go:embed mix.yaml
var defaultMixYAML []byte

// Mix is a workload: which scenarios to play, how often, through which clients; immutable once validated.
type Mix struct {
	Name string `yaml:"name"`
	// Seed makes the session sequence reproducible: session i of two runs with the same seed
	// plays the same scenario, seed, profile and target.
	Seed       uint64             `yaml:"seed"`
	Scenarios  map[string]float64 `yaml:"scenarios"`  // a scenario's relative weight
	Profiles   []Profile          `yaml:"profiles"`   // the client kinds, picked by weight
	Thresholds []string           `yaml:"thresholds"` // checks added to the verdict's defaults
	// Allow lists rules whose violations are known findings of the target: still counted and
	// shown as allowed, they fail neither the run nor gate.
	Allow []protocol.Rule `yaml:"allow"`
	// GoodputSLOs are per-session objectives ("ttft<500ms") a goodput session meets.
	GoodputSLOs []string `yaml:"goodputSLOs"`

	// scenarioNames is sorted, so weighted picks do not depend on map order.
	scenarioNames []string
}

// Profile is one kind of client.
type Profile struct {
	Name    string           `yaml:"name"`
	Dialect string           `yaml:"dialect"` // a registered client dialect
	Options protocol.Options `yaml:"options"` // the dialect's settings; a target's win
	Weight  float64          `yaml:"weight"`
	Targets []Target         `yaml:"targets"` // picked uniformly
	// Headers are sent on every request of this profile; Config.Headers win for the same name.
	Headers map[string]string `yaml:"headers"`
	// Scenarios are this profile's own weights, over the mix's (0 leaves a shared one out).
	Scenarios map[string]float64 `yaml:"scenarios"`

	// scenarioNames is the profile's effective scenarios (weight > 0), sorted.
	scenarioNames []string
	weights       map[string]float64
}

// Target is one deployment a profile's clients talk to, with dialect options of its own.
type Target struct {
	Slug    string           `yaml:"slug"`
	Options protocol.Options `yaml:"options"`
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

// NewMix builds and validates a mix from values as ParseMix does, copying the maps and profiles.
func NewMix(name string, seed uint64, scenarios map[string]float64, profiles []Profile) (*Mix, error) {
	m := Mix{Name: name, Seed: seed, Scenarios: maps.Clone(scenarios), Profiles: make([]Profile, len(profiles))}
	for i, p := range profiles {
		p.Options = maps.Clone(p.Options)
		p.Targets = slices.Clone(p.Targets)
		p.Headers = maps.Clone(p.Headers)
		p.Scenarios = maps.Clone(p.Scenarios)
		m.Profiles[i] = p
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("mix %s: %w", name, err)
	}
	return &m, nil
}

func (m *Mix) validate() error {
	var errs []error
	if len(m.Scenarios) == 0 && !slices.ContainsFunc(m.Profiles, func(p Profile) bool { return len(p.Scenarios) > 0 }) {
		errs = append(errs, errors.New("scenarios: at least one scenario with a weight is required"))
	}
	m.scenarioNames = nil
	for name, w := range m.Scenarios {
		if !(w >= 0) {
			errs = append(errs, fmt.Errorf("scenarios.%s: weight %v must be >= 0", name, w))
		}
		if w > 0 {
			m.scenarioNames = append(m.scenarioNames, name)
		}
	}
	if len(m.Scenarios) > 0 && len(m.scenarioNames) == 0 {
		errs = append(errs, errors.New("scenarios: every weight is 0"))
	}
	if len(m.Profiles) == 0 {
		errs = append(errs, errors.New("profiles: at least one client profile is required"))
	}
	var total float64
	for i := range m.Profiles {
		errs = append(errs, m.validateProfile(i)...)
		total += max(m.Profiles[i].Weight, 0)
	}
	if len(m.Profiles) > 0 && total == 0 {
		errs = append(errs, errors.New("profiles: every weight is 0"))
	}
	for _, p := range m.Profiles {
		for _, name := range p.scenarioNames {
			if !slices.Contains(m.scenarioNames, name) {
				m.scenarioNames = append(m.scenarioNames, name)
			}
		}
	}
	slices.Sort(m.scenarioNames)
	for i, expr := range m.Thresholds {
		// Parsed now: a bad threshold found after the run wastes it.
		if _, err := verdict.ParseThreshold(expr); err != nil {
			errs = append(errs, fmt.Errorf("thresholds[%d]: %w", i, err))
		}
	}
	for i, expr := range m.GoodputSLOs {
		if _, err := verdict.ParseSessionSLO(expr); err != nil {
			errs = append(errs, fmt.Errorf("goodputSLOs[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// validateProfile checks profile i and works out its effective scenarios and weights.
func (m *Mix) validateProfile(i int) []error {
	var errs []error
	p := m.Profiles[i]
	where := fmt.Sprintf("profiles[%d]", i)
	if p.Name != "" {
		where += " (" + p.Name + ")"
	}
	if p.Dialect == "" {
		errs = append(errs, fmt.Errorf("%s.dialect: required (a dialect name: streambench load --help lists them)", where))
	}
	if !(p.Weight >= 0) {
		errs = append(errs, fmt.Errorf("%s.weight: %v must be >= 0", where, p.Weight))
	}
	if len(p.Targets) == 0 {
		errs = append(errs, fmt.Errorf("%s.targets: at least one target is required", where))
	}
	for name, v := range p.Headers {
		if _, _, err := ParseHeader(name + ": " + v); err != nil {
			errs = append(errs, fmt.Errorf("%s.headers: %w", where, err))
		}
	}
	for j, t := range p.Targets {
		if t.Slug == "" {
			errs = append(errs, fmt.Errorf("%s.targets[%d].slug: required", where, j))
		}
	}
	for name, w := range p.Scenarios {
		if !(w >= 0) {
			errs = append(errs, fmt.Errorf("%s.scenarios.%s: weight %v must be >= 0", where, name, w))
		}
	}
	pp := &m.Profiles[i]
	pp.weights = map[string]float64{}
	maps.Copy(pp.weights, m.Scenarios)
	maps.Copy(pp.weights, p.Scenarios)
	pp.scenarioNames = nil
	for name, w := range pp.weights {
		if w > 0 {
			pp.scenarioNames = append(pp.scenarioNames, name)
		}
	}
	slices.Sort(pp.scenarioNames)
	if p.Weight > 0 && len(pp.scenarioNames) == 0 {
		errs = append(errs, fmt.Errorf("%s.scenarios: the profile plays no scenario (every weight is 0)", where))
	}
	return errs
}

// ScenarioNames returns the scenarios some profile of the mix can pick (weight > 0), sorted.
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

// Restrict returns a copy of the mix with only dialect's profiles (all for ""; when none matches,
// a new one sent to slug, else targets, else the dialect's name), every target slug when given.
func (m *Mix) Restrict(dialect, slug string, targets ...string) (*Mix, error) {
	out := *m
	out.Profiles = nil
	for _, p := range m.Profiles {
		if dialect != "" && p.Dialect != dialect {
			continue
		}
		p.Targets = slices.Clone(p.Targets)
		if slug != "" {
			p.Targets = []Target{{Slug: slug}}
		}
		p.Headers = maps.Clone(p.Headers)
		p.Scenarios = maps.Clone(p.Scenarios)
		out.Profiles = append(out.Profiles, p)
	}
	if len(out.Profiles) == 0 {
		// The provider-wire dialects send every session to the target URL itself: their
		// target only labels results.
		p := Profile{Name: dialect, Dialect: dialect, Weight: 1}
		switch {
		case slug != "":
			targets = []string{slug}
		case len(targets) == 0:
			targets = []string{dialect}
		}
		for _, t := range targets {
			p.Targets = append(p.Targets, Target{Slug: t})
		}
		out.Profiles = []Profile{p}
	}
	out.Scenarios = maps.Clone(m.Scenarios)
	if err := out.validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// WithScenarios returns a copy of the mix that plays names alone, equally weighted.
func (m *Mix) WithScenarios(names []string) (*Mix, error) {
	out := *m
	out.Scenarios = make(map[string]float64, len(names))
	for _, n := range names {
		out.Scenarios[n] = 1
	}
	out.Profiles = slices.Clone(m.Profiles)
	for i := range out.Profiles {
		out.Profiles[i].Scenarios = nil
	}
	if err := out.validate(); err != nil {
		return nil, err
	}
	return &out, nil
}

// Pick is one session's identity, a pure function of (mix, seed, index).
type Pick struct {
	Index                     uint64
	Scenario                  string
	Seed                      uint64 // renders the scenario
	Profile                   *Profile
	Target                    Target
	ProfileIndex, TargetIndex int
}

// Pick derives session index's profile, scenario, target and scenario seed from seed.
func (m *Mix) Pick(seed, index uint64) Pick {
	r := rand.New(rand.NewPCG(seed, index))
	p := Pick{Index: index}
	p.ProfileIndex = weighted(r, len(m.Profiles), func(i int) float64 { return m.Profiles[i].Weight })
	p.Profile = &m.Profiles[p.ProfileIndex]
	names := p.Profile.scenarioNames
	p.Scenario = names[weighted(r, len(names), func(i int) float64 { return p.Profile.weights[names[i]] })]
	p.TargetIndex = r.IntN(len(p.Profile.Targets))
	p.Target = p.Profile.Targets[p.TargetIndex]
	// Small seeds keep directives short and readable in logs.
	p.Seed = r.Uint64() % 1_000_000
	return p
}

// weighted picks one of n indices by weight (negative counts as 0), the last when none fits.
func weighted(r *rand.Rand, n int, weight func(int) float64) int {
	var total float64
	for i := range n {
		total += max(weight(i), 0)
	}
	x := r.Float64() * total
	for i := range n {
		w := max(weight(i), 0)
		if w > 0 && x < w {
			return i
		}
		x -= w
	}
	return n - 1
}

// goodputSLOs is the mix's goodput SLOs (validated with the mix) followed by extra.
func (m *Mix) goodputSLOs(extra []verdict.SessionSLO) []verdict.SessionSLO {
	var out []verdict.SessionSLO
	for _, expr := range m.GoodputSLOs {
		if s, err := verdict.ParseSessionSLO(expr); err == nil {
			out = append(out, s)
		}
	}
	return append(out, extra...)
}
