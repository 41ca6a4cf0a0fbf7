package jsonwire

import (
	"bytes"
	"encoding/json"
)

// MarshalNoHTML encodes v as JSON without HTML escaping and without a trailing newline, as
// the provider SDKs send request bodies, so a recorded body reads the same as theirs.
func MarshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
