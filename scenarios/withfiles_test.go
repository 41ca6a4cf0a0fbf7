package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithFiles: scenario files join a library under their own names, in the order given; a
// file that does not parse, a name the library has, and a name two files share are errors
// naming the file (and the field), and the library is left as it was.
func TestWithFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := write("mine.yaml", "name: my-answer\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: {tokens: 5}\n")
	other := write("other.yaml", "name: my-other\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: hello there\n")
	base := Embedded()
	lib, names, err := base.WithFiles([]string{other, mine})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, ",") != "my-other,my-answer" || lib.Len() != base.Len()+2 || lib.File("my-answer") != mine {
		t.Errorf("names %v, %d scenarios (base %d), my-answer from %q", names, lib.Len(), base.Len(), lib.File("my-answer"))
	}
	if _, ok := base.Get("my-answer"); ok {
		t.Error("WithFiles changed the library it was called on")
	}
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		// an unknown field: the file, its line and the field
		{[]string{write("typo.yaml", "name: typo\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - txet: hi\n")}, []string{"typo.yaml:4", "txet"}},
		// a bad duration
		{[]string{write("dur.yaml", "name: dur\ntiming: {ttft: soon, itl: 1ms}\nturns:\n  - text: hi\n")}, []string{"dur.yaml", "ttft", `"soon" is not a duration`}},
		// a name the embedded library has
		{[]string{write("plain.yaml", "name: plain-answer\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: hi\n")}, []string{"plain.yaml", `scenario "plain-answer" is already defined in plain-answer.yaml`}},
		// two files of one name
		{[]string{mine, write("again.yaml", "name: my-answer\ntiming: {ttft: 10ms, itl: 1ms}\nturns:\n  - text: hi\n")}, []string{"again.yaml", `"my-answer" is already defined in ` + mine}},
		// no such file
		{[]string{filepath.Join(dir, "absent.yaml")}, []string{"absent.yaml", "no such file"}},
	} {
		_, _, err := base.WithFiles(tc.files)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v, want %q", tc.files, err, w)
			}
		}
	}
}
