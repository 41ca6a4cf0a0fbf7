package sse

import (
	"mime"
	"net/http"
)

// ContentType is the media type of an event stream.
const ContentType = "text/event-stream"

// IsEventStream reports whether a Content-Type header value declares an event stream:
// text/event-stream, parameters such as charset allowed (a malformed parameter is not).
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
