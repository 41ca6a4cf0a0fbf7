package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
)

// ParseCase is a request body and what a wire's ParseRequest makes of it: Want, or an error
// containing WantErr.
type ParseCase[R comparable] struct {
	Name, Body string
	Want       R
	WantErr    string
}

// ParseRequests runs parse over every case.
func ParseRequests[R comparable](t *testing.T, parse func([]byte) (*R, error), cases []ParseCase[R]) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, err := parse([]byte(tt.Body))
			if tt.WantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.WantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.WantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.Want {
				t.Errorf("got %+v, want %+v", *got, tt.Want)
			}
		})
	}
}

// FuzzParse checks parse on body against oracle: a request or an error, never both; what the
// oracle calls valid accepted and invalid refused; a non-empty error; and no accepted request
// for which wrong(req, verdict, assistant messages) holds.
func FuzzParse[R any](t *testing.T, body []byte, parse func([]byte) (*R, error), oracle MessagesOracle, wrong func(req *R, v Verdict, assistants int) bool) {
	req, err := parse(body)
	if (req == nil) == (err == nil) {
		t.Fatalf("ParseRequest returned (%v, %v): want exactly one", req, err)
	}
	v, why, assistants := oracle.Judge(body)
	switch {
	case v == Invalid && err == nil:
		t.Fatalf("accepted %q, which is invalid: %s", body, why)
	case v == Valid && err != nil:
		t.Fatalf("refused %q, which is valid: %v", body, err)
	case err != nil && err.Error() == "":
		t.Fatalf("refused %q with an empty error", body)
	case err == nil && wrong(req, v, assistants):
		t.Fatalf("accepted %q as %+v; the body has %d assistant message(s)", body, req, assistants)
	}
}

// MessagesOracle reads a chat request body without the parser under test. Judge says Invalid
// for what no request can be (empty, not UTF-8, not JSON, not an object, no model, no
// messages, a message whose role is neither assistant nor in Roles, or what Extra refuses),
// Valid for the plain shape every client sends (Keys once each and lower-case, a string
// model, messages of a role and a string content), else Unsure; and the assistant messages.
type MessagesOracle struct {
	Keys  []string
	Roles []string
	// Extra judges the wire's own members: why non-empty is Invalid, !plain leaves Valid.
	Extra func(ms []Member) (plain bool, why string)
}

// Judge is the oracle's verdict on body, why it is Invalid, and its assistant messages.
func (o MessagesOracle) Judge(body []byte) (v Verdict, why string, assistants int) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return Invalid, "empty", 0
	case !utf8.Valid(body):
		return Invalid, "not UTF-8", 0
	case !json.Valid(body):
		return Invalid, "not JSON", 0
	}
	ms, ok := Members(body)
	if !ok {
		return Invalid, "not an object", 0
	}
	plain := true
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Key] || !slices.Contains(o.Keys, m.Key) {
			plain = false
		}
		seen[m.Key] = true
	}
	if model, _ := Field(ms, "model"); model == nil || model == "" {
		return Invalid, "no model", 0
	} else if _, isString := model.(string); !isString {
		return Invalid, "model not a string", 0
	}
	if o.Extra != nil {
		extraPlain, why := o.Extra(ms)
		if why != "" {
			return Invalid, why, 0
		}
		plain = plain && extraPlain
	}
	if stream, n := Field(ms, "stream"); n > 0 {
		if _, isBool := stream.(bool); !isBool {
			plain = false
		}
	}
	msgs, _ := Field(ms, "messages")
	list, isList := msgs.([]any)
	if !isList || len(list) == 0 {
		if msgs != nil && !isList {
			return Unsure, "", 0 // a type error, which ParseRequest also refuses, named its way
		}
		return Invalid, "no messages", 0
	}
	for _, raw := range Elements(ms, "messages") {
		mm, isObject := Members(raw)
		if !isObject {
			plain = false
			continue
		}
		role, roles := Field(mm, "role")
		content, contents := Field(mm, "content")
		name, isString := role.(string)
		_, contentIsString := content.(string)
		if len(mm) != 2 || roles != 1 || contents != 1 || !isString || !contentIsString {
			plain = false
		}
		if roles == 1 && isString {
			switch {
			case name == "assistant":
				assistants++
			case !slices.Contains(o.Roles, name):
				return Invalid, "role " + name, 0
			}
		}
	}
	if plain {
		return Valid, "", assistants
	}
	return Unsure, "", assistants
}

// Captured is a request as a fake provider saw it.
type Captured struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Send sends w's request for req to a fake provider at its URL + suffix, which answers 204,
// checks the request line (POST wantPath) and the headers in wantHeader, and returns the request.
func Send(t *testing.T, w protocol.ProviderWire, suffix string, req *protocol.ModelRequest, wantPath string, wantHeader map[string]string) Captured {
	t.Helper()
	ch := make(chan Captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		ch <- Captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: raw}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	hr, err := w.NewRequest(context.Background(), srv.URL+suffix, req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := <-ch
	if c.Method != http.MethodPost || c.Path != wantPath {
		t.Errorf("request line = %s %s", c.Method, c.Path)
	}
	for k, want := range wantHeader {
		if v := c.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	return c
}
