package langgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// script is a two-turn ReAct run: a preamble and one call, then the answer.
func script() *protocol.Session {
	return &protocol.Session{ID: "s1", Target: "agent", Expected: scenarios.Expected{FailedTurn: -1, Turns: []scenarios.ExpectedTurn{
		{Text: "Let me look.", ToolCalls: []scenarios.ScriptToolCall{{ID: "call_1", Name: "search", Arguments: `{"q":"go"}`}}},
		{Text: "Found it.", Final: true},
	}}}
}

// ev is one event of a test stream; data is raw (a newline makes a second data: line).
type ev struct{ name, data string }

const (
	metaEv   = `{"run_id":"r1","attempt":1}`
	inputEv  = `{"messages":[{"type":"human","id":"h1","content":"hi"}]}`
	chunkMD  = `{"langgraph_node":"agent","langgraph_step":1}`
	aiTurn0  = `{"type":"ai","id":"ai1","content":"Let me look.","tool_calls":[{"name":"search","args":{"q":"go"},"id":"call_1","type":"tool_call"}]}`
	toolMsg  = `{"type":"tool","id":"t1","content":"result","tool_call_id":"call_1","name":"search","status":"success"}`
	aiTurn1  = `{"type":"ai","id":"ai2","content":"Found it."}`
	state1   = `{"messages":[{"type":"human","id":"h1","content":"hi"},` + aiTurn0 + `]}`
	state2   = `{"messages":[{"type":"human","id":"h1","content":"hi"},` + aiTurn0 + `,` + toolMsg + `]}`
	state3   = `{"messages":[{"type":"human","id":"h1","content":"hi"},` + aiTurn0 + `,` + toolMsg + `,` + aiTurn1 + `]}`
	errorEv  = `{"error":"ProviderError","message":"overloaded"}`
	upAgent0 = `{"agent":{"messages":[` + aiTurn0 + `]}}`
	upTools  = `{"tools":{"messages":[` + toolMsg + `]}}`
	upAgent1 = `{"agent":{"messages":[` + aiTurn1 + `]}}`
)

func chunk(id, content string) ev {
	return ev{EventMessages, `[{"type":"AIMessageChunk","id":"` + id + `","content":` + content + `},` + chunkMD + `]`}
}

func callChunk(id, extra string) ev {
	return ev{EventMessages, `[{"type":"AIMessageChunk","id":"` + id + `","content":"","tool_call_chunks":[` + extra + `]},` + chunkMD + `]`}
}

// valid is the whole run as the server streams it.
func valid() []ev {
	return []ev{
		{EventMetadata, metaEv},
		{EventValues, inputEv},
		chunk("ai1", `"Let me"`), chunk("ai1", `" look."`),
		callChunk("ai1", `{"index":0,"id":"call_1","name":"search","args":"{\"q\":"}`),
		callChunk("ai1", `{"index":0,"args":"\"go\"}"}`),
		{EventUpdates, upAgent0}, {EventValues, state1},
		{EventMessages, `[` + toolMsg + `,{"langgraph_node":"tools"}]`},
		{EventUpdates, upTools}, {EventValues, state2},
		chunk("ai2", `"Found"`), chunk("ai2", `[{"type":"text","text":" it."}]`),
		{EventUpdates, upAgent1}, {EventValues, state3},
	}
}

// render writes evs as SSE, with an id: each.
func render(evs []ev) string {
	var b bytes.Buffer
	for i, e := range evs {
		ev := sse.Event{Type: e.name, Data: []byte(e.data), ID: "1000-" + string(rune('a'+i%26))}
		ev.ID = "1000-" + itoa(i)
		b.Write(sse.AppendEvent(nil, &ev))
	}
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// judge feeds raw through the SSE decoder to a checker and returns the rules it reported and
// the in-band error it saw.
func judge(t *testing.T, s *protocol.Session, ngt bool, raw string, streamErr error) ([]protocol.Rule, string) {
	t.Helper()
	c := NewChecker(s, ngt)
	d := sse.NewDecoder(strings.NewReader(raw))
	var e sse.Event
	inBand := ""
	for {
		err := d.Next(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Observe(&e); o.Error != "" {
			inBand = o.Error
		}
	}
	var rules []protocol.Rule
	for _, v := range c.Finish(streamErr) {
		if !slices.Contains(rules, v.Rule) {
			rules = append(rules, v.Rule)
		}
		t.Logf("%s: %s", v.Rule, v.Detail)
	}
	slices.Sort(rules)
	return rules, inBand
}

func with(evs []ev, at int, repl ...ev) []ev {
	out := slices.Clone(evs[:at])
	out = append(out, repl...)
	return append(out, evs[at+1:]...)
}

func TestChecker(t *testing.T) {
	t.Parallel()
	scripted := func() *protocol.Session {
		s := script()
		s.Expected.ProviderError, s.Expected.FailedTurn = "overloaded", 1
		return s
	}
	v := valid()
	last := len(v) - 1
	cut := errors.New("cut")
	for _, tc := range []struct {
		name   string
		s      *protocol.Session
		ngt    bool
		evs    []ev
		raw    string // instead of evs
		err    error
		want   []protocol.Rule
		inBand bool
	}{
		// The whole run, against the script: clean.
		{name: "valid", s: script(), evs: v},
		// The same with every event's JSON indented over several data: lines (the JS server).
		{name: "multi-line data", s: script(), raw: multiLine(v)},
		// An explicit end event after the final state is accepted.
		{name: "end event", s: script(), evs: append(slices.Clone(v), ev{EventEnd, "null"})},
		// A subgraph's namespaced events are their mode's.
		{name: "subgraph values", s: script(), evs: with(v, 1, ev{"values|sub:1", inputEv})},
		// Another model's text, structure only: clean.
		{name: "no ground truth", s: script(), ngt: true, evs: with(with(v, 11, chunk("ai2", `"Other"`)), 12, chunk("ai2", `" words."`)), want: []protocol.Rule{RMessage}},
		// No metadata first.
		{name: "no metadata", s: script(), evs: v[1:], want: []protocol.Rule{RLifecycle}},
		// Metadata without a run_id.
		{name: "metadata without run_id", s: script(), evs: with(v, 0, ev{EventMetadata, `{"attempt":1}`}), want: []protocol.Rule{RLifecycle}},
		// Closed while the state still waits for its tools.
		{name: "closed mid-loop", s: script(), ngt: true, evs: v[:8], want: []protocol.Rule{RLifecycle}},
		// The same cut by the transport: judged on what arrived, no violation.
		{name: "cut mid-loop", s: script(), evs: v[:8], err: cut},
		// Something after the end event.
		{name: "after end", s: script(), evs: append(slices.Clone(v), ev{EventEnd, "null"}, ev{EventValues, state3}), want: []protocol.Rule{RLifecycle}},
		// The legacy messages/partial name.
		{name: "legacy event name", s: script(), ngt: true, evs: with(v, 2, ev{"messages/partial", `[{"type":"AIMessageChunk","id":"ai1","content":"Let me"},{}]`}),
			want: []protocol.Rule{REvent, RMessage}},
		// A values event that is not JSON.
		{name: "bad json", s: script(), ngt: true, evs: with(v, 1, ev{EventValues, `{"messages":[`}), want: []protocol.Rule{REvent}},
		// A messages event that is not a pair.
		{name: "not a pair", s: script(), ngt: true, evs: with(v, 1, ev{EventMessages, `{"type":"AIMessageChunk"}`}), want: []protocol.Rule{REvent}},
		// Ids that go backwards.
		{name: "ids backwards", s: script(), raw: strings.Replace(render(v), "id: 1000-3\n", "id: 999-3\n", 1), want: []protocol.Rule{REvent}},
		// The state's content is not what the chunks streamed.
		{name: "state differs", s: script(), evs: with(v, last, ev{EventValues, strings.Replace(state3, "Found it.", "Found it!", 1)}),
			want: []protocol.Rule{RMessage}},
		// A tool call's args in the state are not its chunks'.
		{name: "args differ", s: script(), evs: with(v, 6, ev{EventUpdates, strings.Replace(upAgent0, `"go"`, `"no"`, 1)}),
			want: []protocol.Rule{RContent, RMessage}},
		// A chunk without its message id.
		{name: "chunk without id", s: script(), ngt: true, evs: with(v, 2, chunk("", `"Let me"`)), want: []protocol.Rule{RMessage}},
		// A call's first chunk without its name.
		{name: "call without name", s: script(), ngt: true, evs: with(v, 4, callChunk("ai1", `{"index":0,"id":"call_1","args":"{\"q\":"}`)), want: []protocol.Rule{RMessage}},
		// A message streamed that no state holds.
		{name: "streamed never held", s: script(), ngt: true, evs: with(v, 12, chunk("ai2", `" it."`), chunk("ai9", `"stray"`)), want: []protocol.Rule{RMessage}},
		// Text that is not the script's.
		{name: "text differs", s: script(), evs: with(with(v, 2, chunk("ai1", `"Let us"`)), 6, ev{EventUpdates, strings.Replace(upAgent0, "Let me look.", "Let us look.", 1)}),
			want: []protocol.Rule{RContent, RMessage}},
		// The scripted failure as an error event: the scripted error, clean.
		{name: "scripted error", s: scripted(), evs: append(slices.Clone(v[:11]), chunk("ai2", `"Found"`), ev{EventError, errorEv}), inBand: true},
		// The scripted failure never comes.
		{name: "scripted error missing", s: scripted(), evs: v, want: []protocol.Rule{RError}},
		// An error event of another shape.
		{name: "error shape", s: scripted(), evs: append(slices.Clone(v[:11]), ev{EventError, `{"detail":"overloaded"}`}), want: []protocol.Rule{RError}, inBand: true},
		// An unscripted error: the session's outcome, not a violation here.
		{name: "unscripted error", s: script(), evs: append(slices.Clone(v[:8]), ev{EventError, errorEv}), inBand: true},
		// Nothing after an error.
		{name: "after error", s: scripted(), evs: append(slices.Clone(v[:11]), ev{EventError, errorEv}, ev{EventValues, state3}), want: []protocol.Rule{RLifecycle}, inBand: true},
		// An empty stream.
		{name: "empty", s: script(), ngt: true, raw: "", want: []protocol.Rule{RLifecycle}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			raw := tc.raw
			if tc.evs != nil {
				raw = render(tc.evs)
			}
			got, inBand := judge(t, tc.s, tc.ngt, raw, tc.err)
			want := slices.Sorted(slices.Values(tc.want))
			if !slices.Equal(got, want) {
				t.Errorf("rules %v, want %v", got, want)
			}
			if (inBand != "") != tc.inBand {
				t.Errorf("in-band error %q, want one: %v", inBand, tc.inBand)
			}
		})
	}
}

// multiLine renders evs with their JSON indented, so each spans several data: lines.
func multiLine(evs []ev) string {
	var b bytes.Buffer
	w := NewWriter(&b, 1000)
	for _, e := range evs {
		var out bytes.Buffer
		if err := jsonIndent(&out, []byte(e.data)); err != nil {
			panic(err)
		}
		_ = w.Raw(e.name, out.Bytes())
	}
	return b.String()
}

func jsonIndent(dst *bytes.Buffer, src []byte) error { return json.Indent(dst, src, "", "  ") }
