package aisdk

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
)

// recordedSession is the session the recording was made for; a scripted abort or stop makes it
// an aborted one, as the driver that recorded it left there.
func recordedSession(t *testing.T, rec protocol.Recording) *protocol.Session {
	t.Helper()
	script := dialecttest.Script(t, rec.Scenario, rec.Seed)
	return &protocol.Session{Expected: script.Expected(), Aborted: script.Client.Abort != nil || script.Client.Stop != nil}
}

func replay(t *testing.T, s *protocol.Session, frames []string) []protocol.Violation {
	c := NewChecker(s, Options{NoReasoning: true})
	for _, ev := range dialecttest.DecodeAll(t, frames) {
		c.Observe(&ev)
	}
	return c.Finish(nil)
}

// TestRecordedRouteStreams: the streams recorded from the real AI SDK route pass, and break
// as they should when edited.
func TestRecordedRouteStreams(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "interop", "ai-7.0.173")
	paths := dialecttest.Recordings(t, filepath.Join(dir, "*.frames"), 18)
	for _, path := range paths {
		rec := dialecttest.ReadRecording(t, path)
		if v := replay(t, recordedSession(t, rec), rec.Frames); len(v) != 0 {
			t.Errorf("%s: %v", path, v)
		}
	}
	for _, tc := range []struct {
		name, file string
		edit       func(t *testing.T, f []string) []string
		want       []protocol.Rule
	}{
		// An argument piece of a parallel call altered: deltas and input disagree, and the
		// input (left as the route sent it) still matches the script.
		{"argument piece altered", "parallel-tools", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"inputTextDelta":"\"Lyon`, 0)
			f[i] = strings.Replace(f[i], "Lyon", "Lille", 1)
			return f
		}, []protocol.Rule{RParts}},
		// The two parallel inputs swapped between their calls: each disagrees with its deltas
		// and with its scripted arguments.
		{"inputs swapped", "parallel-tools", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"tool-input-available"`, 0)
			j := dialecttest.Index(t, f, `"tool-input-available"`, 1)
			inI, inJ := f[i][strings.Index(f[i], `,"input":`):], f[j][strings.Index(f[j], `,"input":`):]
			f[i] = strings.Replace(f[i], inI, inJ, 1)
			f[j] = strings.Replace(f[j], inJ, inI, 1)
			return f
		}, []protocol.Rule{RParts, RTool}},
		// New text after the provider's error: R-terminal's alone (not also compared with the
		// script).
		{"text after error", "provider-error-midstream", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"error"`, 0)
			return slices.Insert(f, i+1, dialecttest.Raw(part("type", "text-delta", "id", "0", "delta", " more")))
		}, []protocol.Rule{protocol.RTerminal}},
		// The error part dropped: finish "error" alone does not say the provider failed.
		{"error part dropped", "provider-error-midstream", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"error"`, 0)
			return slices.Delete(f, i, i+1)
		}, []protocol.Rule{protocol.RTerminal}},
		// The second step's text-start lost.
		{"second text-start lost", "tool-chain", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"text-start","id":"aitxt-`, 0)
			return slices.Delete(f, i, i+1)
		}, []protocol.Rule{RParts}},
		// The failed tool reported as a success.
		{"tool error as output", "tool-error", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"tool-output-error"`, 0)
			id := f[i][strings.Index(f[i], `"toolCallId":`):strings.Index(f[i], `,"errorText"`)]
			f[i] = dialecttest.Raw(`{"type":"tool-output-available",` + id + `,"output":"ok"}`)
			return f
		}, []protocol.Rule{RTool}},
	} {
		rec := dialecttest.ReadRecording(t, filepath.Join(dir, tc.file+".frames"))
		v := replay(t, recordedSession(t, rec), tc.edit(t, slices.Clone(rec.Frames)))
		if got := dialecttest.SortedRules(v); !slices.Equal(got, sortedRules(tc.want)) {
			t.Errorf("%s: rules %v, want %v (%v)", tc.name, got, tc.want, v)
		}
	}
}
