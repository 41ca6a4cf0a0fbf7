package jsonwire

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// failingBody returns an error on the first read.
type failingBody struct{}

func (failingBody) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
func (failingBody) Close() error             { return nil }

func TestReadProviderError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		body        io.ReadCloser
		wantType    string
		wantMessage string
	}{
		// The envelope's type and message win.
		{"envelope", io.NopCloser(strings.NewReader(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)), "overloaded_error", "Overloaded"},
		// An envelope without a type keeps the dialect's default for the status.
		{"no type", io.NopCloser(strings.NewReader(`{"error":{"message":"slow down"}}`)), "default_type", "slow down"},
		// A body that is not the envelope becomes the message as is, trimmed.
		{"plain", io.NopCloser(strings.NewReader("  upstream down\n")), "default_type", "upstream down"},
		// An empty body falls back to the status text.
		{"empty", io.NopCloser(strings.NewReader("")), "default_type", "Too Many Requests"},
		// A body that cannot be read says so.
		{"read error", failingBody{}, "default_type", "Too Many Requests (reading body: connection reset)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: http.StatusTooManyRequests, Body: tt.body}
			got := ReadProviderError(resp, map[int]string{http.StatusTooManyRequests: "default_type"}, "server_type")
			if got.Status != http.StatusTooManyRequests || got.Type != tt.wantType || got.Message != tt.wantMessage {
				t.Errorf("ReadProviderError = %+v, want status 429, type %q, message %q", got, tt.wantType, tt.wantMessage)
			}
		})
	}
}

// TestReadProviderErrorTypes: without a type in the body, a status is typed by the wire's table,
// else as a server error at 500 and above, else as an invalid request.
func TestReadProviderErrorTypes(t *testing.T) {
	t.Parallel()
	types := map[int]string{http.StatusTooManyRequests: "rate", 529: "overloaded"}
	for status, want := range map[int]string{429: "rate", 529: "overloaded", 503: "server", 400: "invalid_request_error"} {
		resp := &http.Response{StatusCode: status, Body: io.NopCloser(strings.NewReader(""))}
		if got := ReadProviderError(resp, types, "server"); got.Type != want {
			t.Errorf("status %d: type %q, want %q", status, got.Type, want)
		}
	}
}
