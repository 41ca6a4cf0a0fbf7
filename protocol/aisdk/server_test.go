package aisdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// breakage is one way the test route breaks the UI message stream on purpose; each makes one
// rule fail (see the table in TestBreakages).
type breakage string

const (
	breakNone             breakage = ""
	breakHeader           breakage = "no stream header"        // R-headers
	breakDeltaBeforeStart breakage = "text delta before start" // R-aisdk-parts
	breakClosedTwice      breakage = "text part closed twice"  // R-aisdk-parts
	breakUnclosed         breakage = "text part never closed"  // R-aisdk-parts
	breakToolDeltaFirst   breakage = "tool delta before start" // R-aisdk-parts
	breakInputVsDeltas    breakage = "input differs from deltas"
	breakToolInput        breakage = "tool input differs from script" // R-aisdk-tool
	breakToolOutcome      breakage = "tool outcome flipped"           // R-aisdk-tool
	breakText             breakage = "text differs from script"       // R-aisdk-text
	breakTwoTerminals     breakage = "two finishes"                   // R-terminal
	breakMissingDone      breakage = "no [DONE]"                      // R-terminal
	breakStopLoop         breakage = "route stops after step 1"       // R-terminal
	breakUnknownType      breakage = "unknown part type"              // R-framing
	breakNotJSON          breakage = "part not JSON"                  // R-framing
	breakExtraParts       breakage = "data-*, custom, metadata parts" // allowed: no violation
	breakReasoning        breakage = "reasoning forwarded"            // thinking streamed as reasoning parts
)

// part builds one part's JSON with its members in the order given (as the SDK writes them).
func part(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, err := json.Marshal(kv[i+1])
		if raw, ok := kv[i+1].(json.RawMessage); ok {
			v, err = raw, nil
		}
		if err != nil {
			panic(err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// scriptParts renders a script as the parts a streamText route with the script's tools sends
// (the order recorded from ai 7.0.173 with @ai-sdk/openai 4.0.118 in front of the mock): one
// step per turn, text, tool input streamed then available, tool outputs, finish-step; a
// provider error mid-turn as error, the open text's end, finish-step, finish "error"; an HTTP
// error as a bare error part. reasoning adds each turn's thinking as a reasoning part, as a
// route on a provider adapter that forwards it does. stopAfterFirst ends after step 1 with
// finishReason tool-calls, as a route without tools does.
func scriptParts(script *scenarios.Script, reasoning, stopAfterFirst bool) []string {
	out := []string{part("type", "start")}
	for ti := range script.Turns {
		turn := &script.Turns[ti]
		if turn.HTTPStatus != 0 {
			return append(out, part("type", "error", "errorText", turn.ErrorMessage), "[DONE]")
		}
		out = append(out, part("type", "start-step"))
		textID, reasoningID := "txt-"+strconv.Itoa(ti), "rs-"+strconv.Itoa(ti)
		textOpen, reasoningOpen := false, false
		started := make([]bool, len(turn.ToolCalls))
		// delta opens the part of kind (text or reasoning) id once, then sends text as its delta.
		delta := func(open *bool, kind, id, text string) {
			if !*open {
				out = append(out, part("type", kind+"-start", "id", id))
				*open = true
			}
			out = append(out, part("type", kind+"-delta", "id", id, "delta", text))
		}
		end := func(open *bool, kind, id string) {
			if *open {
				out = append(out, part("type", kind+"-end", "id", id))
				*open = false
			}
		}
		closeReasoning := func() { end(&reasoningOpen, "reasoning", reasoningID) }
		for si := range turn.Steps {
			st := &turn.Steps[si]
			switch st.Kind {
			case scenarios.StepThinking:
				if reasoning {
					delta(&reasoningOpen, "reasoning", reasoningID, st.Text)
				}
			case scenarios.StepText:
				closeReasoning()
				delta(&textOpen, "text", textID, st.Text)
			case scenarios.StepToolArgs:
				closeReasoning()
				tc := &turn.ToolCalls[st.Tool]
				if !started[st.Tool] {
					started[st.Tool] = true
					out = append(out, part("type", "tool-input-start", "toolCallId", tc.ID, "toolName", tc.Name))
				}
				out = append(out, part("type", "tool-input-delta", "toolCallId", tc.ID, "inputTextDelta", st.Text))
			}
			if turn.ErrorAfterStep == si {
				out = append(out, part("type", "error", "errorText", turn.ErrorMessage))
				end(&textOpen, "text", textID)
				return append(out, part("type", "finish-step"), part("type", "finish", "finishReason", "error"), "[DONE]")
			}
		}
		closeReasoning()
		end(&textOpen, "text", textID)
		for _, tc := range turn.ToolCalls {
			out = append(out, part("type", "tool-input-available", "toolCallId", tc.ID, "toolName", tc.Name, "input", json.RawMessage(tc.Arguments)))
		}
		if stopAfterFirst && len(turn.ToolCalls) > 0 {
			return append(out, part("type", "finish-step"), part("type", "finish", "finishReason", "tool-calls"), "[DONE]")
		}
		for _, tc := range turn.ToolCalls {
			if tc.Outcome == scenarios.OutcomeError {
				out = append(out, part("type", "tool-output-error", "toolCallId", tc.ID, "errorText", tc.Result))
			} else {
				out = append(out, part("type", "tool-output-available", "toolCallId", tc.ID, "output", tc.Result))
			}
		}
		out = append(out, part("type", "finish-step"))
	}
	return append(out, part("type", "finish", "finishReason", "stop"), "[DONE]")
}

// index returns the position of the first part containing sub, or -1.
func index(parts []string, sub string) int {
	return slices.IndexFunc(parts, func(p string) bool { return strings.Contains(p, sub) })
}

// breakParts applies b to a clean part list. It reports false when the script has nothing b
// could break (no text, no tool call).
func breakParts(parts []string, script *scenarios.Script, b breakage) ([]string, bool) {
	at := func(sub string) int { return index(parts, sub) }
	fields := func(i int) map[string]any {
		var p map[string]any
		_ = json.Unmarshal([]byte(parts[i]), &p)
		return p
	}
	switch b {
	case breakNone, breakHeader, breakStopLoop, breakReasoning:
		return parts, true
	case breakDeltaBeforeStart:
		i, j := at(`"text-start"`), at(`"text-delta"`)
		if i < 0 || j < 0 {
			return nil, false
		}
		parts[i], parts[j] = parts[j], parts[i]
	case breakClosedTwice:
		i := at(`"text-end"`)
		if i < 0 {
			return nil, false
		}
		parts = slices.Insert(parts, i+1, parts[i])
	case breakUnclosed:
		i := at(`"text-end"`)
		if i < 0 {
			return nil, false
		}
		parts = slices.Delete(parts, i, i+1)
	case breakToolDeltaFirst:
		i, j := at(`"tool-input-start"`), at(`"tool-input-delta"`)
		if i < 0 || j < 0 {
			return nil, false
		}
		parts[i], parts[j] = parts[j], parts[i]
	case breakInputVsDeltas, breakToolInput:
		// Replace the first call's input with other JSON; for breakToolInput also its deltas,
		// so they still agree with the input and only the script disagrees.
		i := at(`"tool-input-available"`)
		if i < 0 {
			return nil, false
		}
		p := fields(i)
		id := p["toolCallId"].(string)
		wrong := `{"wrong":true}`
		parts[i] = part("type", "tool-input-available", "toolCallId", id, "toolName", p["toolName"], "input", json.RawMessage(wrong))
		if b == breakToolInput {
			first := true
			parts = slices.DeleteFunc(parts, func(s string) bool {
				if !strings.Contains(s, `"tool-input-delta"`) || !strings.Contains(s, id) {
					return false
				}
				keep := first
				first = false
				return !keep
			})
			j := index(parts, `"tool-input-delta"`)
			parts[j] = part("type", "tool-input-delta", "toolCallId", id, "inputTextDelta", wrong)
		}
	case breakToolOutcome:
		i := at(`"tool-output-error"`)
		if i < 0 {
			return nil, false
		}
		parts[i] = part("type", "tool-output-available", "toolCallId", fields(i)["toolCallId"], "output", "fine")
	case breakText:
		i := at(`"text-delta"`)
		if i < 0 {
			return nil, false
		}
		p := fields(i)
		parts[i] = part("type", "text-delta", "id", p["id"], "delta", "NOT "+p["delta"].(string))
	case breakTwoTerminals:
		i := at(`"finish"`)
		if i < 0 {
			return nil, false
		}
		parts = slices.Insert(parts, i+1, part("type", "finish"))
	case breakMissingDone:
		parts = parts[:len(parts)-1]
	case breakUnknownType:
		parts = slices.Insert(parts, 1, part("type", "text-chunk", "id", "x"))
	case breakNotJSON:
		parts = slices.Insert(parts, 1, `{"type":"text-delta",`)
	case breakExtraParts:
		extra := []string{
			part("type", "data-weather", "id", "w1", "data", map[string]any{"city": "Paris"}),
			part("type", "data-status", "data", "working", "transient", true),
			part("type", "message-metadata", "messageMetadata", map[string]any{"model": "mock"}),
			part("type", "custom", "kind", "acme.note"),
			part("type", "source-url", "sourceId", "s1", "url", "https://example.test/"),
		}
		parts = slices.Insert(parts, 2, extra...)
	default:
		panic("unknown breakage " + string(b))
	}
	return parts, true
}

// route is the Go test route: an httptest server that answers the dialect's request with the
// parts of sc's script for seed, broken by b. It checks the request is useChat's body, so the
// dialect's request is tested on every stream.
func route(t *testing.T, sc *scenarios.Scenario, seed uint64, b breakage) (*httptest.Server, bool) {
	t.Helper()
	script := sc.Render(seed)
	parts, ok := breakParts(scriptParts(script, b == breakReasoning, b == breakStopLoop), script, b)
	if !ok {
		return nil, false
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkChatRequest(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		if b != breakHeader {
			h.Set(StreamHeader, StreamVersion)
		}
		for _, p := range parts {
			fmt.Fprintf(w, "data: %s\n\n", p)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, true
}

// checkChatRequest checks r is what useChat's DefaultChatTransport POSTs for a first message.
func checkChatRequest(r *http.Request) error {
	if r.Method != http.MethodPost || r.URL.Path != DefaultPath {
		return fmt.Errorf("expected POST %s, got %s %s", DefaultPath, r.Method, r.URL.Path)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return fmt.Errorf("expected Content-Type application/json, got %q", ct)
	}
	var body struct {
		ID       string `json:"id"`
		Trigger  string `json:"trigger"`
		Messages []struct {
			ID    string `json:"id"`
			Role  string `json:"role"`
			Parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"messages"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	if body.ID == "" || body.Trigger != "submit-message" || len(body.Messages) != 1 {
		return fmt.Errorf("expected id, trigger submit-message and one message, got %+v", body)
	}
	m := body.Messages[0]
	if m.ID == "" || m.Role != "user" || len(m.Parts) != 1 || m.Parts[0].Type != "text" || !strings.Contains(m.Parts[0].Text, "[[streambench ") {
		return fmt.Errorf("expected one user message with one text part holding the directive, got %+v", m)
	}
	return nil
}
