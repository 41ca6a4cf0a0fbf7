package openaichat

import (
	"encoding/json"
)

// errorMessage reads the API's error JSON ({"error":{"message":…}}) from a non-200 body; the
// rare path, so encoding/json.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Error *struct {
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
