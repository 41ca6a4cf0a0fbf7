package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol"
)

const maxErrorBody = 64 << 10

// ReadProviderError reads a provider's non-2xx response into a ProviderError: the message and
// type of its {"error":{"type":…,"message":…}}, else the trimmed body (or status text) and
// defaultType.
func ReadProviderError(resp *http.Response, defaultType string) *protocol.ProviderError {
	perr := &protocol.ProviderError{Status: resp.StatusCode, Type: defaultType}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var parsed struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	switch {
	case json.Unmarshal(body, &parsed) == nil && parsed.Error != nil:
		perr.Message = parsed.Error.Message
		if parsed.Error.Type != "" {
			perr.Type = parsed.Error.Type
		}
	case len(bytes.TrimSpace(body)) > 0:
		perr.Message = string(bytes.TrimSpace(body))
	case err != nil:
		perr.Message = fmt.Sprintf("%s (reading body: %v)", http.StatusText(resp.StatusCode), err)
	default:
		perr.Message = http.StatusText(resp.StatusCode)
	}
	return perr
}
