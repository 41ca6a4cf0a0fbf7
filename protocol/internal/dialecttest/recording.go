package dialecttest

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Recording is one stream recorded from a real runtime, in the format of the interop
// recordings (protocol/compose/testdata/interop/README.md): "#" header lines, one of them
// naming the scenario and seed, then one SSE frame per line as the client received it, without
// the blank line that ends it, a line break inside a frame written as the two characters \n.
type Recording struct {
	Scenario string
	Seed     uint64
	// Header is the header lines' text, "#" and the space after it removed, one per line.
	Header []string
	// Frames are the SSE frames, each ending in its blank line.
	Frames []string
}

var recordingHeader = regexp.MustCompile(`scenario (\S+) seed (\d+)`)

// recordedBreak matches the two characters `\n` written for a line break inside a recorded
// frame: only before a field name, so a JSON `\n` escape inside a data line stays as it is.
var recordedBreak = regexp.MustCompile(`\\n(event|data|id|retry):`)

// ReadRecording reads the recording at path; a file without a scenario header or without
// frames fails t.
func ReadRecording(t testing.TB, path string) Recording {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rec Recording
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#"):
			rec.Header = append(rec.Header, strings.TrimSpace(strings.TrimPrefix(text, "#")))
			if m := recordingHeader.FindStringSubmatch(text); m != nil {
				rec.Scenario = m[1]
				if rec.Seed, err = strconv.ParseUint(m[2], 10, 64); err != nil {
					t.Fatalf("%s:%d: seed %q: %v", path, line, m[2], err)
				}
			}
		case text == "":
		default:
			rec.Frames = append(rec.Frames, recordedBreak.ReplaceAllString(text, "\n$1:")+"\n\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if rec.Scenario == "" || len(rec.Frames) == 0 {
		t.Fatalf("%s: expected a header naming scenario and seed, then frames; saw scenario %q and %d frames", path, rec.Scenario, len(rec.Frames))
	}
	return rec
}

// HeaderSays reports whether a header line of the recording contains s.
func (r *Recording) HeaderSays(s string) bool {
	for _, h := range r.Header {
		if strings.Contains(h, s) {
			return true
		}
	}
	return false
}

// Capture is one stream captured from a real server as it arrived (the interop scripts'
// captures, kept gzipped in a dialect's testdata): one SSE comment line first, ": scenario NAME
// seed N (...)", then the server's bytes.
type Capture struct {
	Path     string
	Scenario string
	Seed     uint64
	// Raw is the whole stream, the comment line included (an SSE decoder skips it).
	Raw string
}

// ReadCapture reads the gzipped capture at path; one that is not gzip or lacks the scenario
// line fails t.
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
	m := recordingHeader.FindStringSubmatch(first)
	if !strings.HasPrefix(first, ": ") || m == nil {
		t.Fatalf("%s: first line %q: want ': scenario NAME seed N ...'", path, first)
	}
	seed, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		t.Fatalf("%s: seed %q: %v", path, m[2], err)
	}
	return Capture{Path: path, Scenario: m[1], Seed: seed, Raw: string(b)}
}
