package loadgen

import (
	"testing"
)

// FuzzParseMix: any input gives a mix or an error, never a panic, and a parsed mix can pick.
func FuzzParseMix(f *testing.F) {
	f.Add(defaultMixYAML)
	f.Add([]byte("scenarios: {a: 1}\nprofiles:\n  - {dialect: compose, weight: 1, targets: [{slug: s}]}\n"))
	f.Add([]byte("scenarios: {a: 0}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMix("fuzz", data)
		if err != nil {
			return
		}
		for i := range uint64(4) {
			p := m.Pick(1, i)
			if p.Profile == nil || p.Scenario == "" || p.Target.Slug == "" {
				t.Fatalf("pick %d from a valid mix: %+v", i, p)
			}
		}
	})
}

// FuzzParseStages: never panics; a parsed ramp round-trips through String and paces sanely.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:1000,60s:1000,10s:0", "1ms:0.5", "1s", ":", "1h:1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStages(s)
		if err != nil {
			return
		}
		back, err := ParseStages(st.String())
		if err != nil || len(back) != len(st) {
			t.Fatalf("%q → %q does not parse back: %v", s, st.String(), err)
		}
		if v, _ := st.Target(st.Duration() / 2); v < 0 {
			t.Fatalf("negative target %v", v)
		}
	})
}
