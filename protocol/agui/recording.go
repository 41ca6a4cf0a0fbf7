package agui

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Recording is one recorded AG-UI stream (protocol/agui/testdata/README.md): "#" header lines,
// one naming the scenario and seed it played ("# scenario NAME seed N") and one the fault switch
// the runtime had on ("# fault FAULT"), then one line "data: JSON" per SSE frame. The checker's
// tests and the verifyEvents cross-check (interop/agui) read the same files.
type Recording struct {
	Path     string
	Scenario string
	Seed     uint64
	Fault    string   // "" for none
	Header   []string // the # lines, as they are
	Frames   []string // each frame's data
}

// ReadRecording reads a recording, or a gzipped one (NAME.frames.gz).
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
	r := bufio.NewReader(in)
	for line := 1; ; line++ {
		text, err := r.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return rec, err
		}
		text = strings.TrimSuffix(text, "\n")
		switch {
		case strings.HasPrefix(text, "# scenario "):
			name, seed, ok := strings.Cut(strings.TrimPrefix(text, "# scenario "), " seed ")
			n, perr := strconv.ParseUint(seed, 10, 64)
			if !ok || perr != nil {
				return rec, fmt.Errorf("%s:%d: expected '# scenario NAME seed N', got %q", path, line, text)
			}
			rec.Scenario, rec.Seed = name, n
			rec.Header = append(rec.Header, text)
		case strings.HasPrefix(text, "# fault "):
			rec.Fault = strings.TrimPrefix(text, "# fault ")
			rec.Header = append(rec.Header, text)
		case strings.HasPrefix(text, "#"):
			rec.Header = append(rec.Header, text)
		case text == "":
		case strings.HasPrefix(text, "data: "):
			rec.Frames = append(rec.Frames, strings.TrimPrefix(text, "data: "))
		default:
			return rec, fmt.Errorf("%s:%d: expected a data: frame or a # line, got %q", path, line, text)
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if rec.Scenario == "" {
		return rec, fmt.Errorf("%s: no '# scenario NAME seed N' line", path)
	}
	return rec, nil
}

// Write writes rec to path in the recording format, uncompressed.
func (rec Recording) Write(path string) error {
	var b bytes.Buffer
	for _, h := range rec.Header {
		b.WriteString(h + "\n")
	}
	for _, f := range rec.Frames {
		b.WriteString("data: " + f + "\n")
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// RecordingSession is the protocol session a recording of scenario name at seed was made for.
func RecordingSession(name string, seed uint64) (*protocol.Session, error) {
	sc, ok := scenarios.Embedded().Get(name)
	if !ok {
		return nil, fmt.Errorf("unknown scenario %s", name)
	}
	id := "agui-" + name
	return &protocol.Session{
		ID:       id,
		Input:    scenarios.Directive{Scenario: name, Seed: seed, Session: id}.String() + " " + sc.Prompt,
		Expected: sc.Render(seed).Expected(),
	}, nil
}

// JudgeRecording replays rec through the checker against its script and returns the rules
// broken and how the stream ended as the load generator would count it: "" for RUN_FINISHED,
// the message of a RUN_ERROR, "truncated" for neither (an outcome, not a rule).
func JudgeRecording(rec Recording) (rules []protocol.Rule, end string, err error) {
	s, err := RecordingSession(rec.Scenario, rec.Seed)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", rec.Path, err)
	}
	c := NewChecker(s, false)
	end = "truncated"
	for _, f := range rec.Frames {
		if obs := c.Observe(&sse.Event{Data: []byte(f)}); obs.Kind == protocol.FrameTerminal {
			end = obs.Error
		}
	}
	var streamErr error
	if end == "truncated" {
		streamErr = protocol.ErrTruncated
	}
	set := map[protocol.Rule]bool{}
	for _, v := range c.Finish(streamErr) {
		set[v.Rule] = true
	}
	return slices.Sorted(maps.Keys(set)), end, nil
}
