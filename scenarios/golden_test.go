package scenarios

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files: go test ./scenarios -run TestGolden -update
var update = flag.Bool("update", false, "rewrite testdata/golden files")

// goldenView is what the golden files pin: the ground truth plus each turn's shape and timing,
// so an accidental change to rendering (which would desynchronise a mock and a load generator
// built from different revisions) shows up as a diff.
type goldenView struct {
	Expected Expected
	Turns    []goldenTurn
}

// goldenTurn summarises one ScriptTurn.
type goldenTurn struct {
	HTTPStatus, Steps, OutputTokens, InputTokens int
	ErrorAfterStep, StallAfterStep               int
	FirstAtMicros, LastAtMicros                  int64
}

func TestGolden(t *testing.T) {
	t.Parallel()
	forEachScenario(t, func(t *testing.T, s *Scenario) {
		script := s.Render(1)
		view := goldenView{Expected: script.Expected()}
		// A thinking text over 4 KiB (thinking-over-cap's 560 KB) is pinned by length and
		// digest, so the golden file stays reviewable.
		for i, et := range view.Expected.Turns {
			if len(et.Thinking) > 4<<10 {
				view.Expected.Turns[i].Thinking = fmt.Sprintf("<%d bytes, sha256 %x>", len(et.Thinking), sha256.Sum256([]byte(et.Thinking)))
			}
		}
		for _, st := range script.Turns {
			g := goldenTurn{HTTPStatus: st.HTTPStatus, Steps: len(st.Steps), OutputTokens: st.OutputTokens,
				InputTokens: st.InputTokens, ErrorAfterStep: st.ErrorAfterStep, StallAfterStep: st.StallAfterStep}
			if n := len(st.Steps); n > 0 {
				g.FirstAtMicros, g.LastAtMicros = st.Steps[0].At.Microseconds(), st.Steps[n-1].At.Microseconds()
			}
			view.Turns = append(view.Turns, g)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(view); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "golden", s.Name+".seed1.json")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("rendering of %s seed 1 changed; if intended, rerun with -update and review the diff\ngot:\n%s", s.Name, buf.String())
		}
	})
}
