package compose

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// recordedSession is the session the load generator had for a recording: the scenario's
// ground truth, aborted when the script aborts (the client closed the stream on purpose).
func recordedSession(t testing.TB, rec protocol.Recording) *protocol.Session {
	t.Helper()
	sc := dialecttest.Script(t, rec.Scenario, rec.Seed)
	s := dialecttest.Session(sc)
	s.Aborted = sc.Client.Abort != nil
	return s
}

// TestRecordedRuntimeStreams replays the streams of compose-market/runtime 48e5908 through the
// checker: the wire variants it sends are allowed (0 false violations), and breaking what the
// recordings carry (the scripted arguments, the answer, the terminal) is still reported.
func TestRecordedRuntimeStreams(t *testing.T) {
	t.Parallel()
	paths := dialecttest.Recordings(t, filepath.Join("testdata", "interop", "compose-runtime-48e5908", "*.frames"), 4)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			rec := dialecttest.ReadRecording(t, path)
			s := recordedSession(t, rec)
			if rec.Scenario == "abort-mid-answer" && !s.Aborted {
				t.Fatal("abort-mid-answer: the script does not abort; the session would be judged as complete")
			}
			if vs := check(t, rec.Frames, s); len(vs) != 0 {
				t.Errorf("%s (%s seed %d): unexpected violations %v", path, rec.Scenario, rec.Seed, vs)
			}
		})
	}
	// The failing counterparts, on the same recordings.
	cases := []struct {
		name string
		file string
		edit func(t *testing.T, f []string) []string
		want []protocol.Rule
	}{
		// One id-less argument piece altered: the arguments no longer match the script.
		{"args altered", "preamble-tool", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"argsDelta":"y\":\"Pari"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], "Pari", "Lyo", 1))
		}, []protocol.Rule{RArgs}},
		// A parallel call's first delta loses its id: its pieces name an index never introduced.
		{"second call without id", "parallel-tools", func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"index":1`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"type":"tool_args_delta","toolName":"lookup_population","index":1}`))
		}, []protocol.Rule{protocol.RFraming, RArgs}},
		// The final text loses a piece.
		{"answer short", "tool-error", func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, len(f)-3)
		}, []protocol.Rule{RAnswer}},
		// The stream ends without its end marker.
		{"no [DONE]", "preamble-tool", func(t *testing.T, f []string) []string {
			return f[:len(f)-1]
		}, []protocol.Rule{protocol.RTerminal}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := dialecttest.ReadRecording(t, filepath.Join("testdata", "interop", "compose-runtime-48e5908", tc.file+".frames"))
			frames := tc.edit(t, rec.Frames)
			if vs := check(t, frames, recordedSession(t, rec)); !dialecttest.SameRules(vs, tc.want) {
				t.Errorf("violations %v, want rules %v", vs, tc.want)
			}
		})
	}
}

// TestToolArgsVariants: one test per tool-call wire variant real runtimes send, each allowed,
// each with a counterpart the protocol forbids.
func TestToolArgsVariants(t *testing.T) {
	t.Parallel()
	// deltas turns the scripted calls of a stream into argument deltas with fn and keeps the
	// rest of the reference relay: fn gets the call's id, toolName, index and the delta pieces.
	type deltaFn func(id, name string, index int, pieces []string) []string
	rewrite := func(t *testing.T, scenario string, fn deltaFn) []string {
		t.Helper()
		sc := dialecttest.Script(t, scenario, 1)
		frames := relay(t, sc, relayOptions{})
		var out []string
		for i := 0; i < len(frames); i++ {
			if !strings.Contains(frames[i], argsDelta) {
				out = append(out, frames[i])
				continue
			}
			// A run of argument deltas of one turn: regroup it per call.
			type group struct {
				id, name string
				index    int
				pieces   []string
			}
			var groups []group
			for ; i < len(frames) && strings.Contains(frames[i], argsDelta); i++ {
				var d typed
				decodeFrame(t, frames[i], &d)
				g := -1
				for k := range groups {
					if groups[k].id == d.ID {
						g = k
					}
				}
				if g < 0 {
					groups = append(groups, group{id: d.ID, name: d.ToolName, index: *d.Index})
					g = len(groups) - 1
				}
				groups[g].pieces = append(groups[g].pieces, *d.ArgsDelta)
			}
			i--
			for _, g := range groups {
				out = append(out, fn(g.id, g.name, g.index, g.pieces)...)
			}
		}
		return out
	}
	frame := func(id, name, args string, index int, withArgs bool) string {
		b := `{"type":"tool_args_delta"`
		if id != "" {
			b += `,"id":` + strconv.Quote(id)
		}
		if name != "" {
			b += `,"toolName":` + strconv.Quote(name)
		}
		if withArgs {
			b += `,"argsDelta":` + strconv.Quote(args)
		}
		return dialecttest.Raw(b + `,"index":` + strconv.Itoa(index) + `}`)
	}
	// firstOnly: id and toolName on the first delta (with no argsDelta), then argsDelta + index.
	firstOnly := func(id, name string, index int, pieces []string) []string {
		out := []string{frame(id, name, "", index, false)}
		for _, p := range pieces {
			out = append(out, frame("", "", p, index, true))
		}
		return out
	}
	cases := []struct {
		name     string
		scenario string
		frames   func(t *testing.T) []string
		want     []protocol.Rule
	}{
		// id and toolName on the first delta only (LangChain's tool_call_chunks).
		{"id and name on first delta only", "preamble-tool", func(t *testing.T) []string {
			return rewrite(t, "preamble-tool", firstOnly)
		}, nil},
		// ... but the pieces must still make the scripted arguments.
		{"id on first delta only, wrong args", "preamble-tool", func(t *testing.T) []string {
			return rewrite(t, "preamble-tool", func(id, name string, index int, pieces []string) []string {
				return firstOnly(id, name, index, append(pieces[:len(pieces)-1:len(pieces)-1], `,"extra":1}`))
			})
		}, []protocol.Rule{RArgs}},
		// argsDelta absent on every delta but the ones that carry a piece.
		{"argsDelta absent", "tool-chain", func(t *testing.T) []string {
			return rewrite(t, "tool-chain", func(id, name string, index int, pieces []string) []string {
				out := []string{frame(id, name, "", index, false)}
				for _, p := range pieces {
					out = append(out, frame(id, "", p, index, true), frame(id, "", "", index, false))
				}
				return out
			})
		}, nil},
		// argsDelta absent everywhere: the call's arguments never arrive, which is no JSON.
		{"argsDelta absent everywhere", "preamble-tool", func(t *testing.T) []string {
			return rewrite(t, "preamble-tool", func(id, name string, index int, pieces []string) []string {
				return []string{frame(id, name, "", index, false), frame(id, name, "", index, false)}
			})
		}, []protocol.Rule{RArgs}},
		// argsDelta empty on some deltas, including after tool_start (it adds nothing).
		{"argsDelta empty", "preamble-tool", func(t *testing.T) []string {
			f := rewrite(t, "preamble-tool", func(id, name string, index int, pieces []string) []string {
				out := []string{frame(id, name, "", index, true)}
				for _, p := range pieces {
					out = append(out, frame(id, name, p, index, true), frame("", "", "", index, true))
				}
				return out
			})
			return dialecttest.Insert(f, dialecttest.Index(t, f, toolStart, 0)+1, frame("", "", "", 0, true))
		}, nil},
		// A non-empty piece after tool_start is late: the input was already shown.
		{"argsDelta after tool_start", "preamble-tool", func(t *testing.T) []string {
			f := rewrite(t, "preamble-tool", firstOnly)
			return dialecttest.Insert(f, dialecttest.Index(t, f, toolStart, 0)+1, frame("", "", " ", 0, true))
		}, []protocol.Rule{RArgs}},
		// Parallel calls correlated by index only, their pieces interleaved.
		{"parallel calls interleaved by index", "parallel-tools", func(t *testing.T) []string {
			return interleave(t, rewrite(t, "parallel-tools", firstOnly))
		}, nil},
		// Interleaved pieces whose indices are swapped: each call gets the other's arguments.
		{"parallel calls, indices swapped", "parallel-tools", func(t *testing.T) []string {
			f := interleave(t, rewrite(t, "parallel-tools", firstOnly))
			for i, fr := range f {
				if strings.Contains(fr, argsDelta) && !strings.Contains(fr, `"id"`) {
					switch {
					case strings.Contains(fr, `"index":0`):
						f[i] = strings.Replace(fr, `"index":0`, `"index":1`, 1)
					case strings.Contains(fr, `"index":1`):
						f[i] = strings.Replace(fr, `"index":1`, `"index":0`, 1)
					}
				}
			}
			return f
		}, []protocol.Rule{RArgs}},
		// A piece for an index no delta with an id introduced: it belongs to no call.
		{"index never introduced", "preamble-tool", func(t *testing.T) []string {
			f := rewrite(t, "preamble-tool", firstOnly)
			return dialecttest.Insert(f, dialecttest.Index(t, f, argsDelta, 1), frame("", "", "{}", 5, true))
		}, []protocol.Rule{protocol.RFraming}},
		// A delta with neither id nor index.
		{"neither id nor index", "preamble-tool", func(t *testing.T) []string {
			f := rewrite(t, "preamble-tool", firstOnly)
			return dialecttest.Insert(f, dialecttest.Index(t, f, argsDelta, 1), dialecttest.Raw(`{"type":"tool_args_delta","argsDelta":""}`))
		}, []protocol.Rule{protocol.RFraming}},
		// A later delta renaming the call.
		{"toolName changes", "preamble-tool", func(t *testing.T) []string {
			f := rewrite(t, "preamble-tool", firstOnly)
			return dialecttest.Insert(f, dialecttest.Index(t, f, argsDelta, 1), frame("", "other_tool", "", 0, false))
		}, []protocol.Rule{RArgs}},
		// A runtime that does not have the tool streams its arguments and never starts it.
		{"call declined (no tool_start/tool_end)", "preamble-tool", func(t *testing.T) []string {
			return dropLifecycle(rewrite(t, "preamble-tool", firstOnly))
		}, nil},
		// ... whose arguments are still judged against the script.
		{"call declined, wrong args", "preamble-tool", func(t *testing.T) []string {
			f := dropLifecycle(rewrite(t, "preamble-tool", firstOnly))
			i := dialecttest.Index(t, f, argsDelta, 1)
			return dialecttest.Insert(f, i, frame("", "", `{"wrong":true}`, 0, true))
		}, []protocol.Rule{RArgs}},
		// tool_end without an id, parallel tools of one name settling in reverse order.
		{"tool_end without id, reverse order", "parallel-tools", func(t *testing.T) []string {
			f := relay(t, dialecttest.Script(t, "parallel-tools", 1), relayOptions{})
			a, b := dialecttest.Index(t, f, toolEnd, 0), dialecttest.Index(t, f, toolEnd, 1)
			f[a], f[b] = f[b], f[a]
			return f
		}, nil},
		// tool_end with no open tool_start of its toolName.
		{"tool_end unmatched", "parallel-tools", func(t *testing.T) []string {
			f := relay(t, dialecttest.Script(t, "parallel-tools", 1), relayOptions{})
			return dialecttest.Insert(f, dialecttest.Index(t, f, toolEnd, 0), dialecttest.Raw(`{"type":"tool_end","toolName":"lookup_population","failed":false}`))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// tool_end without failed: the outcome cannot be read.
		{"tool_end without failed", "preamble-tool", func(t *testing.T) []string {
			f := relay(t, dialecttest.Script(t, "preamble-tool", 1), relayOptions{})
			return dialecttest.Replace(f, dialecttest.Index(t, f, toolEnd, 0), dialecttest.Raw(`{"type":"tool_end","toolName":"get_weather"}`))
		}, []protocol.Rule{protocol.RFraming}},
		// tool_end without output is allowed: failed carries the outcome.
		{"tool_end without output", "preamble-tool", func(t *testing.T) []string {
			f := relay(t, dialecttest.Script(t, "preamble-tool", 1), relayOptions{})
			return dialecttest.Replace(f, dialecttest.Index(t, f, toolEnd, 0), dialecttest.Raw(`{"type":"tool_end","toolName":"get_weather","failed":false}`))
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			frames := tc.frames(t)
			if vs := check(t, frames, dialecttest.Session(dialecttest.Script(t, tc.scenario, 1))); !dialecttest.SameRules(vs, tc.want) {
				t.Errorf("violations %v, want rules %v\nframes:\n%s", vs, tc.want, strings.Join(frames, ""))
			}
			// The fast path reaches the same verdict as the general path on every variant.
			s := dialecttest.Session(dialecttest.Script(t, tc.scenario, 1))
			fast, general := NewChecker(s), NewChecker(s)
			general.generalOnly = true
			dialecttest.FastPathAgrees(t, []byte(strings.Join(frames, "")), fast, general)
		})
	}
}

// interleave alternates the id-less argument pieces of index 0 and index 1, keeping each call's
// own order and each first (id-bearing) delta before its pieces.
func interleave(t *testing.T, f []string) []string {
	t.Helper()
	start := dialecttest.Index(t, f, argsDelta, 0)
	end := start
	for end < len(f) && strings.Contains(f[end], argsDelta) {
		end++
	}
	var firsts, zero, one []string
	for _, fr := range f[start:end] {
		switch {
		case strings.Contains(fr, `"id"`):
			firsts = append(firsts, fr)
		case strings.Contains(fr, `"index":0`):
			zero = append(zero, fr)
		default:
			one = append(one, fr)
		}
	}
	if len(firsts) != 2 || len(zero) == 0 || len(one) == 0 {
		t.Fatalf("expected two parallel calls, saw %d first deltas", len(firsts))
	}
	mixed := append([]string(nil), firsts...)
	for len(zero) > 0 || len(one) > 0 {
		if len(zero) > 0 {
			mixed, zero = append(mixed, zero[0]), zero[1:]
		}
		if len(one) > 0 {
			mixed, one = append(mixed, one[0]), one[1:]
		}
	}
	out := append(append([]string(nil), f[:start]...), mixed...)
	return append(out, f[end:]...)
}

// dropLifecycle removes tool_start and tool_end frames, as a runtime that declines the calls.
func dropLifecycle(f []string) []string {
	var out []string
	for _, fr := range f {
		if !strings.Contains(fr, toolStart) && !strings.Contains(fr, toolEnd) {
			out = append(out, fr)
		}
	}
	return out
}

// decodeFrame decodes the JSON of one "data: …" frame into v.
func decodeFrame(t *testing.T, frame string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(frame), "data: ")), v); err != nil {
		t.Fatalf("frame %q: %v", frame, err)
	}
}

// TestToolEndMatchedByOutcome: tool_end has no call id, so parallel tools of one toolName that
// settle out of order are told apart by their outcome; an outcome no open call has is reported.
func TestToolEndMatchedByOutcome(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "parallel-tools", 1)
	if len(sc.Turns[0].ToolCalls) != 2 || sc.Turns[0].ToolCalls[0].Name != sc.Turns[0].ToolCalls[1].Name {
		t.Fatalf("parallel-tools: expected two calls of one tool, saw %+v", sc.Turns[0].ToolCalls)
	}
	sc.Turns[0].ToolCalls[1].Outcome = scenarios.OutcomeError // the second call fails
	frames := relay(t, sc, relayOptions{})
	a, b := dialecttest.Index(t, frames, toolEnd, 0), dialecttest.Index(t, frames, toolEnd, 1)
	reversed := append([]string(nil), frames...)
	reversed[a], reversed[b] = reversed[b], reversed[a]
	if vs := check(t, reversed, dialecttest.Session(sc)); len(vs) != 0 {
		t.Errorf("failed tool settling first: unexpected violations %v", vs)
	}
	// Both settle as successes: one of them contradicts the script.
	bothOK := dialecttest.Replace(frames, b, strings.Replace(frames[b], `"failed":true`, `"failed":false`, 1))
	if vs := check(t, bothOK, dialecttest.Session(sc)); !dialecttest.SameRules(vs, []protocol.Rule{protocol.RToolLifecycle}) {
		t.Errorf("both succeed: violations %v, want R-tool-lifecycle", vs)
	}
}

// TestDeclinedCallDoesNotCaptureToolStart: a call the runtime declined (arguments streamed, no
// tool_start) must not take a later call's tool_start of the same toolName; the tool_start
// goes to the call whose streamed arguments it shows.
func TestDeclinedCallDoesNotCaptureToolStart(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "tool-chain", 1)
	sc.Turns[1].ToolCalls[0].Name = sc.Turns[0].ToolCalls[0].Name // both turns call one tool
	frames := relay(t, sc, relayOptions{})
	// The first turn's call is declined: its tool_start and tool_end are gone.
	frames = dialecttest.Remove(frames, dialecttest.Index(t, frames, toolEnd, 0))
	frames = dialecttest.Remove(frames, dialecttest.Index(t, frames, toolStart, 0))
	if vs := check(t, frames, dialecttest.Session(sc)); len(vs) != 0 {
		t.Errorf("unexpected violations %v\nframes:\n%s", vs, strings.Join(frames, ""))
	}
	// A tool_start whose input is neither call's arguments is still reported.
	i := dialecttest.Index(t, frames, toolStart, 0)
	wrong := dialecttest.Replace(frames, i, dialecttest.Raw(`{"type":"tool_start","toolName":"`+sc.Turns[0].ToolCalls[0].Name+`","input":{"other":1}}`))
	if vs := check(t, wrong, dialecttest.Session(sc)); !dialecttest.SameRules(vs, []protocol.Rule{RArgs}) {
		t.Errorf("wrong input: violations %v, want R-compose-args", vs)
	}
}

// BenchmarkCheckerRecorded judges the recorded parallel-tools stream of compose-market/runtime
// (index-only argument deltas, a frame per token), general path against the fast path.
func BenchmarkCheckerRecorded(b *testing.B) {
	rec := dialecttest.ReadRecording(b, filepath.Join("testdata", "interop", "compose-runtime-48e5908", "parallel-tools.frames"))
	events := dialecttest.DecodeAll(b, rec.Frames)
	s := recordedSession(b, rec)
	for _, generalOnly := range []bool{false, true} {
		b.Run(map[bool]string{false: "fast", true: "general"}[generalOnly], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := NewChecker(s)
				c.generalOnly = generalOnly
				for i := range events {
					c.Observe(&events[i])
				}
				if vs := c.Finish(nil); len(vs) != 0 {
					b.Fatal(vs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/frame")
		})
	}
}
