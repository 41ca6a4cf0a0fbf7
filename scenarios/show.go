package scenarios

import (
	"encoding/json"
	"io"
)

// Open returns dir's scenarios (LoadDir), or the embedded library when dir is empty.
func Open(dir string) (*Library, error) {
	if dir == "" {
		return Embedded(), nil
	}
	return LoadDir(dir)
}

// Shown is `scenarios show --json`: a scenario and its rendering with one seed.
type Shown struct {
	Scenario                *Scenario `json:"scenario"`
	Seed                    uint64    `json:"seed"`
	Expected                Expected  `json:"expected"`
	EstimatedDurationMillis int64     `json:"estimatedDurationMs"`
}

// WriteJSON writes s rendered with seed as an indented Shown, without HTML escaping.
func (s *Scenario) WriteJSON(w io.Writer, seed uint64) error {
	script := s.Render(seed)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(Shown{Scenario: s, Seed: seed, Expected: script.Expected(), EstimatedDurationMillis: script.EstimatedDuration().Milliseconds()})
}
