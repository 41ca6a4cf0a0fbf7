package dialecttest

import (
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// ReadRecording reads the recording at path; an unreadable or empty one fails t.
func ReadRecording(t testing.TB, path string) protocol.Recording {
	t.Helper()
	rec, err := protocol.ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Frames) == 0 {
		t.Fatalf("%s: expected frames after the header, saw none", path)
	}
	return rec
}

// Recordings lists the files matching pattern, failing t unless there are want (0: at least one).
func Recordings(t testing.TB, pattern string, want int) []string {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 || (want > 0 && len(paths) != want) {
		t.Fatalf("%s: %d recordings (%v), want %d (0: any)", pattern, len(paths), err, want)
	}
	return paths
}
