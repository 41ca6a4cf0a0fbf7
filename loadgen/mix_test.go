package loadgen

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

func TestDefaultMixIsValid(t *testing.T) {
	t.Parallel()
	m := DefaultMix()
	lib := scenarios.Embedded()
	for _, name := range m.ScenarioNames() {
		if _, ok := lib.Get(name); !ok {
			t.Errorf("default mix names scenario %q, not in the embedded library", name)
		}
	}
	if got := m.Dialects(); len(got) != 3 {
		t.Errorf("default mix dialects %v, want all three", got)
	}
}

func TestParseMixErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, want string
	}{
		// A typo in a key is reported with its line, not ignored.
		{"unknown key", "name: x\nsceanrios: {a: 1}\n", "sceanrios"},
		// A profile names its dialect (the registry checks the name when the run configures
		// it: TestThrowawayDialect).
		{"no dialect", "scenarios: {a: 1}\nprofiles:\n  - {weight: 1, targets: [{slug: s}]}\n", `profiles[0].dialect: required`},
		// A profile needs somewhere to send sessions.
		{"no targets", "scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1}\n", "profiles[0].targets"},
		// Negative weights make no sense.
		{"negative weight", "scenarios: {a: -1, b: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n", "scenarios.a: weight -1"},
		// Nothing to play.
		{"no scenarios", "profiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n", "scenarios: at least one"},
		// A target without a slug.
		{"empty slug", "scenarios: {a: 1}\nprofiles:\n  - {name: p, dialect: compose, weight: 1, targets: [{options: {path: x}}]}\n", "profiles[0] (p).targets[0].slug"},
		// A profile's own weights are checked like the mix's.
		{"negative profile weight", "scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}], scenarios: {b: -2}}\n", "profiles[0].scenarios.b: weight -2"},
		// A profile that leaves out every shared scenario and adds none plays nothing.
		{"profile plays nothing", "scenarios: {a: 1}\nprofiles:\n  - {name: p, dialect: compose, weight: 1, targets: [{slug: s}], scenarios: {a: 0}}\n", "profiles[0] (p).scenarios: the profile plays no scenario"},
		// A goodput SLO on a metric a session has no single value of.
		{"bad goodput SLO", "scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\ngoodputSLOs: [\"itl<5ms\"]\n", `goodputSLOs[0]: goodput SLO "itl<5ms": unknown per-session metric`},
	}
	for _, c := range cases {
		_, err := ParseMix("m.yaml", []byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "m.yaml") {
			t.Errorf("%s: error %v, want one naming m.yaml and containing %q", c.name, err, c.want)
		}
	}
}

// A profile's own scenarios are played by that profile only, on top of the mix's, and a weight
// of 0 leaves a shared scenario out of it.
func TestProfileScenarios(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("m.yaml", []byte(`
scenarios: {shared: 1, common: 1}
profiles:
  - {name: chat, dialect: sim-chat, weight: 1, targets: [{slug: s}]}
  - {name: agents, dialect: compose, weight: 1, targets: [{slug: a}], scenarios: {swarm: 2, common: 0}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.ScenarioNames(), []string{"common", "shared", "swarm"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ScenarioNames %v, want %v", got, want)
	}
	seen := map[string]map[string]int{"chat": {}, "agents": {}}
	for i := range uint64(2000) {
		p := m.Pick(1, i)
		seen[p.Profile.Name][p.Scenario]++
	}
	if seen["chat"]["swarm"] != 0 || seen["agents"]["common"] != 0 {
		t.Errorf("a profile played a scenario that is not its own: %v", seen)
	}
	if seen["chat"]["common"] == 0 || seen["chat"]["shared"] == 0 || seen["agents"]["shared"] == 0 || seen["agents"]["swarm"] == 0 {
		t.Errorf("a profile never played one of its scenarios in 2,000 picks: %v", seen)
	}
	// swarm weighs 2 against shared's 1 for the agents profile.
	if s, w := seen["agents"]["shared"], seen["agents"]["swarm"]; w < s*3/2 {
		t.Errorf("agents played swarm %d times and shared %d, want about twice as often", w, s)
	}
}

// A mix built from values is the mix the same YAML parses to, field for field, so it picks the
// same sessions.
func TestNewMixEqualsParsedMix(t *testing.T) {
	t.Parallel()
	parsed, err := ParseMix("m.yaml", []byte(`
name: storm
seed: 14
scenarios: {a: 3, b: 1, c: 0}
profiles:
  - {name: chat, dialect: sim-chat, options: {optedIn: true}, weight: 2, targets: [{slug: x, options: {policy: all}}, {slug: y}]}
  - {name: compose, dialect: compose, weight: 1, targets: [{slug: z}], headers: {X-Team: bench}}
`))
	if err != nil {
		t.Fatal(err)
	}
	scen := map[string]float64{"a": 3, "b": 1, "c": 0}
	profiles := []Profile{
		{Name: "chat", Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 2,
			Targets: []Target{{Slug: "x", Options: protocol.Options{"policy": "all"}}, {Slug: "y"}}},
		{Name: "compose", Dialect: "compose", Weight: 1, Targets: []Target{{Slug: "z"}}, Headers: map[string]string{"X-Team": "bench"}},
	}
	built, err := NewMix("storm", 14, scen, profiles)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(built, parsed) {
		t.Fatalf("NewMix = %+v\nParseMix = %+v", built, parsed)
	}
	for i := uint64(0); i < 100; i++ {
		if a, b := built.Pick(built.Seed, i), parsed.Pick(parsed.Seed, i); a.Scenario != b.Scenario || a.Seed != b.Seed || a.ProfileIndex != b.ProfileIndex || a.TargetIndex != b.TargetIndex {
			t.Fatalf("session %d: built mix picks %+v, parsed mix %+v", i, a, b)
		}
	}
	// The mix keeps copies: changing the caller's values afterwards changes nothing.
	scen["b"] = 100
	profiles[0].Options["optedIn"] = false
	profiles[0].Targets[0].Slug = "changed"
	if !reflect.DeepEqual(built, parsed) {
		t.Errorf("NewMix shares its arguments with the caller: %+v", built)
	}
}

// NewMix validates like ParseMix and names the mix and the field at fault.
func TestNewMixErrors(t *testing.T) {
	t.Parallel()
	ok := []Profile{{Dialect: "compose", Weight: 1, Targets: []Target{{Slug: "s"}}}}
	cases := []struct {
		name      string
		scenarios map[string]float64
		profiles  []Profile
		want      string
	}{
		// Nothing to play.
		{"no scenarios", nil, ok, "scenarios: at least one"},
		// Negative weights make no sense.
		{"negative scenario weight", map[string]float64{"a": -1, "b": 1}, ok, "scenarios.a: weight -1"},
		// No client kinds.
		{"no profiles", map[string]float64{"a": 1}, nil, "profiles: at least one"},
		// A profile names its dialect.
		{"no dialect", map[string]float64{"a": 1}, []Profile{{Weight: 1, Targets: []Target{{Slug: "s"}}}}, "profiles[0].dialect: required"},
		// A profile needs somewhere to send sessions.
		{"no targets", map[string]float64{"a": 1}, []Profile{{Name: "p", Dialect: "compose", Weight: 1}}, "profiles[0] (p).targets"},
		// A target without a slug.
		{"empty slug", map[string]float64{"a": 1}, []Profile{{Dialect: "compose", Weight: 1, Targets: []Target{{}}}}, "profiles[0].targets[0].slug"},
		// Every profile weighs nothing.
		{"zero profile weights", map[string]float64{"a": 1}, []Profile{{Dialect: "compose", Targets: []Target{{Slug: "s"}}}}, "profiles: every weight is 0"},
	}
	for _, c := range cases {
		_, err := NewMix("built", 1, c.scenarios, c.profiles)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "mix built") {
			t.Errorf("%s: error %v, want one naming mix built and containing %q", c.name, err, c.want)
		}
	}
	if _, err := NewMix("built", 1, map[string]float64{"a": 1}, ok); err != nil {
		t.Errorf("valid values: %v", err)
	}
}

func TestPickIsDeterministicAndWeighted(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("m", []byte(`
scenarios: {a: 3, b: 1}
profiles:
  - {dialect: compose, weight: 1, targets: [{slug: x}, {slug: y}]}
  - {dialect: sim-chat, options: {optedIn: true}, weight: 0, targets: [{slug: never}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i := uint64(0); i < 4000; i++ {
		p := m.Pick(9, i)
		if q := m.Pick(9, i); q.Scenario != p.Scenario || q.Seed != p.Seed || q.Target.Slug != p.Target.Slug || q.Profile != p.Profile ||
			q.ProfileIndex != p.ProfileIndex || q.TargetIndex != p.TargetIndex || &m.Profiles[p.ProfileIndex] != p.Profile || p.Profile.Targets[p.TargetIndex].Slug != p.Target.Slug {
			t.Fatalf("Pick(9, %d) not deterministic: %+v vs %+v", i, p, q)
		}
		if p.Profile.Dialect != "compose" {
			t.Fatalf("picked the zero-weight profile at %d", i)
		}
		counts[p.Scenario]++
		counts[p.Target.Slug]++
	}
	if a := counts["a"]; a < 2800 || a > 3200 {
		t.Errorf("scenario a picked %d of 4000 times, want ≈ 3000 (weight 3:1)", a)
	}
	if x := counts["x"]; x < 1800 || x > 2200 {
		t.Errorf("target x picked %d of 4000 times, want ≈ 2000", x)
	}
	if a, b := m.Pick(10, 0), m.Pick(9, 0); a.Scenario == b.Scenario && a.Seed == b.Seed && a.Target.Slug == b.Target.Slug {
		t.Errorf("seeds 9 and 10 gave the same first session")
	}
}

func TestRestrict(t *testing.T) {
	t.Parallel()
	m, err := DefaultMix().Restrict("sim-chat", "openai-thinking")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Profiles {
		if p.Dialect != "sim-chat" || len(p.Targets) != 1 || p.Targets[0].Slug != "openai-thinking" || p.Targets[0].Options != nil {
			t.Errorf("restricted profile %+v", p)
		}
	}
	// The profiles' own options stay (the legacy profile stays legacy).
	if len(m.Profiles) != 2 || m.Profiles[1].Options["optedIn"] != false {
		t.Errorf("restricted profiles %+v, want both sim-chat profiles with their options", m.Profiles)
	}
	// The original is untouched.
	if DefaultMix().Profiles[0].Targets[0].Slug == "openai-thinking" {
		t.Errorf("Restrict modified the mix it was called on")
	}
	// A dialect the mix lacks gets a profile of its own, its target named after the dialect
	// without a slug.
	only, _ := ParseMix("m", []byte("scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n"))
	if r, err := only.Restrict("openai-chat", ""); err != nil || len(r.Profiles) != 1 || r.Profiles[0].Targets[0].Slug != "openai-chat" {
		t.Errorf("Restrict to a missing dialect without a slug: %v %+v", err, r)
	}
	if r, err := only.Restrict("sim-canvas", "w"); err != nil || r.Profiles[0].Dialect != "sim-canvas" {
		t.Errorf("Restrict to a missing dialect with a slug: %v %+v", err, r)
	}
}
