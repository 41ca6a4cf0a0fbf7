package loadgen

import (
	"strings"
	"testing"

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
		// Dialects are checked by name.
		{"bad dialect", "scenarios: {a: 1}\nprofiles:\n  - {dialect: sim-chatt, weight: 1, targets: [{slug: s}]}\n", `profiles[0].dialect: "sim-chatt"`},
		// A profile needs somewhere to send sessions.
		{"no targets", "scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1}\n", "profiles[0].targets"},
		// Negative weights make no sense.
		{"negative weight", "scenarios: {a: -1, b: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n", "scenarios.a: weight -1"},
		// Nothing to play.
		{"no scenarios", "profiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n", "scenarios: at least one"},
		// A target without a slug.
		{"empty slug", "scenarios: {a: 1}\nprofiles:\n  - {name: p, dialect: compose, weight: 1, targets: [{includeThinking: true}]}\n", "profiles[0] (p).targets[0].slug"},
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

func TestPickIsDeterministicAndWeighted(t *testing.T) {
	t.Parallel()
	m, err := ParseMix("m", []byte(`
scenarios: {a: 3, b: 1}
profiles:
  - {dialect: compose, weight: 1, targets: [{slug: x}, {slug: y}]}
  - {dialect: sim-chat, optedIn: true, weight: 0, targets: [{slug: never}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i := uint64(0); i < 4000; i++ {
		p := m.Pick(9, i)
		if q := m.Pick(9, i); q.Scenario != p.Scenario || q.Seed != p.Seed || q.Target != p.Target || q.Profile != p.Profile {
			t.Fatalf("Pick(9, %d) not deterministic: %+v vs %+v", i, p, q)
		}
		if p.Profile.Dialect != DialectCompose {
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
	if other := m.Pick(10, 0); other == m.Pick(9, 0) {
		t.Errorf("seeds 9 and 10 gave the same first session")
	}
}

func TestRestrict(t *testing.T) {
	t.Parallel()
	legacy := false
	slug := Target{Slug: "openai-thinking", IncludeThinking: true}
	m, err := DefaultMix().Restrict(DialectSimChat, &legacy, &slug)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Profiles {
		if p.Dialect != DialectSimChat || p.OptedIn || len(p.Targets) != 1 || p.Targets[0] != slug {
			t.Errorf("restricted profile %+v", p)
		}
	}
	// The original is untouched.
	if DefaultMix().Profiles[0].Targets[0] == slug {
		t.Errorf("Restrict modified the mix it was called on")
	}
	// A dialect the mix lacks needs a slug.
	only, _ := ParseMix("m", []byte("scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n"))
	if _, err := only.Restrict(DialectSimCanvas, nil, nil); err == nil {
		t.Errorf("Restrict to a missing dialect without a slug: no error")
	}
	if r, err := only.Restrict(DialectSimCanvas, nil, &Target{Slug: "w"}); err != nil || r.Profiles[0].Dialect != DialectSimCanvas {
		t.Errorf("Restrict to a missing dialect with a slug: %v %+v", err, r)
	}
}
