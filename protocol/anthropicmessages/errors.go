package anthropicmessages

import (
	"encoding/json"
)

// errorMessage reads the API's error JSON ({"type":"error","error":{"type":…,"message":…}})
// from a non-200 body; the rare path, so encoding/json.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    *string `json:"type"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error == nil || e.Error.Type == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
