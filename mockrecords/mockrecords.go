// Package mockrecords reads what the mock provider saw of each request (GET
// /_streambench/sessions): the record's wire form and a small client for it. The mock
// (mockprovider) writes these records; the load generator joins its sessions with them
// (cancel latency, R-abort, provider requests and retries) through this package alone, so it
// needs no part of the mock.
package mockrecords

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"time"
)

// Path is where the mock serves its records.
const Path = "/_streambench/sessions"

// Outcome is how a request to the mock ended.
type Outcome string

// Request outcomes as reported in records.
const (
	OutcomeStreaming       Outcome = "streaming"        // the request is still being served.
	OutcomeCompleted       Outcome = "completed"        // the turn was played to its end.
	OutcomeProviderError   Outcome = "provider-error"   // the scenario injected a mid-stream provider error.
	OutcomeClientCancelled Outcome = "client-cancelled" // the client went away before the turn ended.
	OutcomeHTTPError       Outcome = "http-error"       // bad input, an injected HTTP fault or a full queue.
)

// Record is what the mock saw of one request. Times are wall-clock, zero when unset.
type Record struct {
	// Session is the session id from the directive or X-Streambench-Session ("" when unset).
	Session string
	// Scenario and Seed identify the script played ("" and 0 when selection failed).
	Scenario string
	Seed     uint64
	// Wire is "openai", "anthropic" or "openai-responses".
	Wire string
	// Turn is the zero-based turn played.
	Turn int
	// Start is when the request arrived, FirstByte when its first frame was flushed, End
	// when the mock finished with it (zero while streaming), ClientGone when it noticed the
	// client had gone away.
	Start, FirstByte, End, ClientGone time.Time
	// Queued is how long the request waited for a stream slot (capacity model).
	Queued time.Duration
	// Tokens and Frames count what was sent.
	Tokens, Frames int
	// Outcome is how the request ended.
	Outcome Outcome
	// Status is the HTTP status answered; Error describes an http-error or provider-error.
	Status int
	Error  string
	// Child is the swarm child's path when the request was a child agent's ("" for the root).
	Child string
	// PromptDigests are an endpoint request's PromptDigests of its last user message.
	PromptDigests []string
}

// JSON is a record's wire form: RFC3339Nano times, null for unset ones.
type JSON struct {
	Session    string     `json:"session"`
	Scenario   string     `json:"scenario"`
	Seed       uint64     `json:"seed"`
	Wire       string     `json:"wire"`
	Turn       int        `json:"turn"`
	Start      time.Time  `json:"start"`
	QueuedMs   float64    `json:"queuedMs"`
	FirstByte  *time.Time `json:"firstByte"`
	End        *time.Time `json:"end"`
	ClientGone *time.Time `json:"clientGone"`
	Tokens     int        `json:"tokens"`
	Frames     int        `json:"frames"`
	Outcome    Outcome    `json:"outcome"`
	Status     int        `json:"status"`
	Error      string     `json:"error,omitempty"`
	Child      string     `json:"child,omitempty"`
	Digests    []string   `json:"promptDigests,omitempty"`
}

// MarshalJSON writes the record's wire form.
func (r Record) MarshalJSON() ([]byte, error) {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.Round(0) // wall clock only: the monotonic reading means nothing to other processes
		return &t
	}
	return json.Marshal(JSON{
		Session: r.Session, Scenario: r.Scenario, Seed: r.Seed, Wire: r.Wire, Turn: r.Turn,
		Start: r.Start.Round(0), QueuedMs: float64(r.Queued) / float64(time.Millisecond),
		FirstByte: opt(r.FirstByte), End: opt(r.End), ClientGone: opt(r.ClientGone),
		Tokens: r.Tokens, Frames: r.Frames, Outcome: r.Outcome, Status: r.Status, Error: r.Error, Child: r.Child, Digests: r.PromptDigests,
	})
}

// UnmarshalJSON reads the wire form MarshalJSON writes.
func (r *Record) UnmarshalJSON(b []byte) error {
	var j JSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	*r = Record{
		Session: j.Session, Scenario: j.Scenario, Seed: j.Seed, Wire: j.Wire, Turn: j.Turn,
		Start: j.Start, Queued: time.Duration(j.QueuedMs * float64(time.Millisecond)),
		FirstByte: val(j.FirstByte), End: val(j.End), ClientGone: val(j.ClientGone),
		Tokens: j.Tokens, Frames: j.Frames, Outcome: j.Outcome, Status: j.Status, Error: j.Error, Child: j.Child, PromptDigests: j.Digests,
	}
	return nil
}

// PromptDigests are text's cumulative digests, one a KiB, at most 32: digest i is the FNV-1a
// (32 bits, 8 hex digits) of its first i+1 KiB (all of it for the last), so prompts that share
// their first k KiB share their first k digests: a record shows a shared prefix without the text.
func PromptDigests(text string) []string {
	h := fnv.New32a()
	var out []string
	for i := 0; i < len(text) && len(out) < 32; i += 1024 {
		io.WriteString(h, text[i:min(i+1024, len(text))])
		out = append(out, fmt.Sprintf("%08x", h.Sum32()))
	}
	return out
}

// Client reads a mock's records.
type Client struct {
	// HTTP sends the request (nil: http.DefaultClient).
	HTTP *http.Client
	// URL is the mock's base URL.
	URL string
}

// Sessions reads every record the mock holds, in one request, oldest first.
func (c Client) Sessions(ctx context.Context) ([]Record, error) {
	client := cmp.Or(c.HTTP, http.DefaultClient)
	u := strings.TrimSuffix(c.URL, "/") + Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("mock sessions: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mock sessions: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("mock sessions: GET %s: HTTP %d", u, resp.StatusCode)
	}
	var body struct {
		Sessions []Record `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("mock sessions: GET %s: decode JSON: %w", u, err)
	}
	return body.Sessions, nil
}
