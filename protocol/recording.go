package protocol

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/streambench/streambench/scenarios"
)

// Recording is one stream recorded with the script it played (NAME.frames, or gzipped
// NAME.frames.gz): "#" header lines, one of them "scenario NAME seed N", then one SSE frame a
// line without its blank line, a line break inside a frame written as \n (only before a field
// name, so a JSON \n escape stays as it is). A capture (NAME.sse, NAME.sse.gz) is a real
// server's bytes as they came after one comment line ": scenario NAME seed N (...)", its header:
// one frame, all of it.
type Recording struct {
	Path     string
	Scenario string
	Seed     uint64
	Header   []string // the # lines, as they are
	Frames   []string // the SSE frames, each ending in its blank line
}

var (
	recordingScript = regexp.MustCompile(`scenario (\S+) seed (\d+)`)
	// recordedBreak matches the \n written for a line break inside a recorded frame.
	recordedBreak = regexp.MustCompile(`\\n(event|data|id|retry):`)
)

// ReadRecording reads the recording at path (gzipped if .gz); no scenario header is an error.
func ReadRecording(path string) (Recording, error) {
	rec := Recording{Path: path}
	f, err := os.Open(path)
	if err != nil {
		return rec, err
	}
	defer f.Close()
	var in io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return rec, fmt.Errorf("%s: %w", path, err)
		}
		defer z.Close()
		in = z
	}
	line, err := rec.read(in, strings.HasSuffix(strings.TrimSuffix(path, ".gz"), ".sse"))
	switch {
	case err != nil && line > 0:
		return rec, fmt.Errorf("%s:%d: %w", path, line, err)
	case err != nil:
		return rec, fmt.Errorf("%s: %w", path, err)
	case rec.Scenario == "":
		return rec, fmt.Errorf("%s: no header line naming the scenario and seed (# scenario NAME seed N)", path)
	}
	return rec, nil
}

// read reads a capture, or a recording of a frame a line, from in; an error in a header line
// says which.
func (rec *Recording) read(in io.Reader, capture bool) (line int, err error) {
	if capture {
		b, err := io.ReadAll(in)
		first, _, _ := strings.Cut(string(b), "\n")
		rec.Header, rec.Frames = []string{first}, []string{string(b)}
		if err != nil {
			return 0, err
		}
		return 1, rec.script(first)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for line = 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "#"):
			rec.Header = append(rec.Header, text)
			if err := rec.script(text); err != nil {
				return line, err
			}
		case text != "":
			rec.Frames = append(rec.Frames, recordedBreak.ReplaceAllString(text, "\n$1:")+"\n\n")
		}
	}
	return 0, sc.Err()
}

// script takes the scenario and seed from header line h, if it names them.
func (rec *Recording) script(h string) (err error) {
	if m := recordingScript.FindStringSubmatch(h); m != nil {
		rec.Scenario = m[1]
		if rec.Seed, err = strconv.ParseUint(m[2], 10, 64); err != nil {
			return fmt.Errorf("seed %q: %w", m[2], err)
		}
	}
	return nil
}

// Session is the session rec's script played, to target (ID recorded-SCENARIO, its directive
// and the scenario's prompt as the input); an unknown scenario is an error.
func (rec *Recording) Session(target string) (*Session, error) {
	sc, ok := scenarios.Embedded().Get(rec.Scenario)
	if !ok {
		return nil, fmt.Errorf("unknown scenario %s", rec.Scenario)
	}
	id := "recorded-" + rec.Scenario
	return &Session{ID: id, Target: target, Expected: sc.Render(rec.Seed).Expected(),
		Input: scenarios.Directive{Scenario: rec.Scenario, Seed: rec.Seed, Session: id}.String() + " " + sc.Prompt}, nil
}

// Write writes rec to path, uncompressed (a frame with \n before a field name is an error).
func (rec *Recording) Write(path string) error {
	var b strings.Builder
	for _, h := range rec.Header {
		b.WriteString(h + "\n")
	}
	for i, f := range rec.Frames {
		f = strings.TrimRight(f, "\n")
		if recordedBreak.MatchString(f) {
			return fmt.Errorf("%s: frame %d holds \\n before a field name: %q", path, i+1, f)
		}
		b.WriteString(strings.ReplaceAll(f, "\n", `\n`) + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// Stream is the recorded stream's bytes: its frames, one after another.
func (rec *Recording) Stream() string { return strings.Join(rec.Frames, "") }
