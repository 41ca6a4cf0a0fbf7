package aisdk

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// recording is one recorded stream (testdata/interop/README.md).
type recording struct {
	scenario string
	seed     uint64
	frames   []string // data payloads
}

func readRecording(t *testing.T, path string) recording {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rec recording
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if rest, ok := strings.CutPrefix(text, "# scenario "); ok {
			name, seed, _ := strings.Cut(rest, " seed ")
			seed, _, _ = strings.Cut(seed, ";")
			n, err := strconv.ParseUint(seed, 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: seed: %v", path, line, err)
			}
			rec.scenario, rec.seed = name, n
			continue
		}
		if strings.HasPrefix(text, "#") {
			continue
		}
		data, ok := strings.CutPrefix(text, "data: ")
		if !ok {
			t.Fatalf("%s:%d: expected a data frame, got %q", path, line, text)
		}
		rec.frames = append(rec.frames, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rec.scenario == "" {
		t.Fatalf("%s: no '# scenario NAME seed N' header", path)
	}
	return rec
}

// recordedSession is the session the recording was made for; a scripted abort or stop makes it
// an aborted one, as the driver that recorded it left there.
func recordedSession(t *testing.T, rec recording) *protocol.Session {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(rec.scenario)
	if !ok {
		t.Fatalf("recording of unknown scenario %s", rec.scenario)
	}
	script := sc.Render(rec.seed)
	return &protocol.Session{Expected: script.Expected(), Aborted: script.Client.Abort != nil || script.Client.Stop != nil}
}

func replay(s *protocol.Session, frames []string) []protocol.Violation {
	c := NewChecker(s, Options{NoReasoning: true})
	for _, f := range frames {
		c.Observe(&sse.Event{Data: []byte(f)})
	}
	return c.Finish(nil)
}

// TestRecordedRouteStreams: the streams recorded from the real AI SDK route pass, and break
// as they should when edited.
func TestRecordedRouteStreams(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "interop", "ai-7.0.173")
	paths, err := filepath.Glob(filepath.Join(dir, "*.frames"))
	if err != nil || len(paths) != 18 {
		t.Fatalf("recordings: %d files, %v; want 18", len(paths), err)
	}
	for _, path := range paths {
		rec := readRecording(t, path)
		if v := replay(recordedSession(t, rec), rec.frames); len(v) != 0 {
			t.Errorf("%s: %v", path, v)
		}
	}
	at := func(t *testing.T, f []string, sub string) int {
		i := slices.IndexFunc(f, func(s string) bool { return strings.Contains(s, sub) })
		if i < 0 {
			t.Fatalf("no frame with %q", sub)
		}
		return i
	}
	for _, tc := range []struct {
		name, file string
		edit       func(t *testing.T, f []string) []string
		want       []protocol.Rule
	}{
		// An argument piece of a parallel call altered: deltas and input disagree, and the
		// input (left as the route sent it) still matches the script.
		{"argument piece altered", "parallel-tools", func(t *testing.T, f []string) []string {
			i := at(t, f, `"inputTextDelta":"\"Lyon`)
			f[i] = strings.Replace(f[i], "Lyon", "Lille", 1)
			return f
		}, []protocol.Rule{RParts}},
		// The two parallel inputs swapped between their calls: each disagrees with its deltas
		// and with its scripted arguments.
		{"inputs swapped", "parallel-tools", func(t *testing.T, f []string) []string {
			i := at(t, f, `"tool-input-available"`)
			j := i + 1 + at(t, f[i+1:], `"tool-input-available"`)
			inI, inJ := f[i][strings.Index(f[i], `,"input":`):], f[j][strings.Index(f[j], `,"input":`):]
			f[i] = strings.Replace(f[i], inI, inJ, 1)
			f[j] = strings.Replace(f[j], inJ, inI, 1)
			return f
		}, []protocol.Rule{RParts, RTool}},
		// New text after the provider's error: R-terminal's alone (not also compared with the
		// script).
		{"text after error", "provider-error-midstream", func(t *testing.T, f []string) []string {
			i := at(t, f, `"type":"error"`)
			return slices.Insert(f, i+1, part("type", "text-delta", "id", "0", "delta", " more"))
		}, []protocol.Rule{protocol.RTerminal}},
		// The error part dropped: finish "error" alone does not say the provider failed.
		{"error part dropped", "provider-error-midstream", func(t *testing.T, f []string) []string {
			i := at(t, f, `"type":"error"`)
			return slices.Delete(f, i, i+1)
		}, []protocol.Rule{protocol.RTerminal}},
		// The second step's text-start lost.
		{"second text-start lost", "tool-chain", func(t *testing.T, f []string) []string {
			i := at(t, f, `"text-start","id":"aitxt-`)
			return slices.Delete(f, i, i+1)
		}, []protocol.Rule{RParts}},
		// The failed tool reported as a success.
		{"tool error as output", "tool-error", func(t *testing.T, f []string) []string {
			i := at(t, f, `"tool-output-error"`)
			id := f[i][strings.Index(f[i], `"toolCallId":`):strings.Index(f[i], `,"errorText"`)]
			f[i] = `{"type":"tool-output-available",` + id + `,"output":"ok"}`
			return f
		}, []protocol.Rule{RTool}},
	} {
		rec := readRecording(t, filepath.Join(dir, tc.file+".frames"))
		v := replay(recordedSession(t, rec), tc.edit(t, slices.Clone(rec.frames)))
		if got := rules(v); !slices.Equal(got, sortedRules(tc.want)) {
			t.Errorf("%s: rules %v, want %v (%v)", tc.name, got, tc.want, v)
		}
	}
}
