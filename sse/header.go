package sse

import (
	"mime"
	"net/http"
)

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// IsEventStream reports whether a Content-Type is text/event-stream (parameters allowed).
func IsEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == ContentType
}

// SetHeaders sets the headers of an event stream: type, no caching, no proxy buffering.
func SetHeaders(h http.Header) {
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
}
