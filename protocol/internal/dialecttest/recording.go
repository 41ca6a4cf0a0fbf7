package dialecttest

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
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

// captureHeader is a capture's first line: ": scenario NAME seed N (...)".
var captureHeader = regexp.MustCompile(`^: scenario (\S+) seed (\d+)`)

// Capture is one stream a real server sent, gzipped in testdata: a comment line ": scenario NAME
// seed N (...)", then the server's bytes.
type Capture struct {
	Path     string
	Scenario string
	Seed     uint64
	// Raw is the whole stream, the comment line included (an SSE decoder skips it).
	Raw string
}

// Session is the session c played: its directive with the prompt "go", to target.
func (c Capture) Session(t testing.TB, target string) *protocol.Session {
	t.Helper()
	id := "capture-" + c.Scenario
	return &protocol.Session{ID: id, Target: target, Expected: Script(t, c.Scenario, c.Seed).Expected(),
		Input: scenarios.Directive{Scenario: c.Scenario, Seed: c.Seed, Session: id}.String() + " go"}
}

// ReadCapture reads the gzipped capture at path, failing t on a bad one.
func ReadCapture(t testing.TB, path string) Capture {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	m := captureHeader.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("%s: first line %q: want ': scenario NAME seed N ...'", path, first)
	}
	seed, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		t.Fatalf("%s: seed %q: %v", path, m[2], err)
	}
	return Capture{Path: path, Scenario: m[1], Seed: seed, Raw: string(b)}
}
