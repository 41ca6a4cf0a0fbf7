package sse

import (
	"net/http"
	"testing"
)

// TestIsEventStream: text/event-stream with or without parameters is an event stream; another
// type, a missing one or a malformed one is not. SetHeaders declares one.
func TestIsEventStream(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"text/event-stream":                true,  // the type alone
		"text/event-stream; charset=utf-8": true,  // a parameter
		"Text/Event-Stream":                true,  // media types are case-insensitive
		"application/json":                 false, // another type
		"":                                 false, // none
		"text/event-stream; charset":       false, // a malformed parameter
		"text/event-stream-extra":          false, // a longer type
		"text/html; charset=utf-8":         false, // an HTML page
	} {
		if got := IsEventStream(ct); got != want {
			t.Errorf("IsEventStream(%q) = %t, want %t", ct, got, want)
		}
	}
	h := http.Header{}
	SetHeaders(h)
	if !IsEventStream(h.Get("Content-Type")) || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Errorf("SetHeaders: %v", h)
	}
}
