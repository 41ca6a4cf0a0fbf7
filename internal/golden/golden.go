// Package golden is the tests' golden files: a test's output compared with a file it may rewrite.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag of every test binary that imports golden: rewrite the golden
// files (and the tables generated from the code) from the current output.
var Update = flag.Bool("update", false, "rewrite the golden files from the current output")

// Check compares got with the file at path, writing it (and its directory) first under -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run go test -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
