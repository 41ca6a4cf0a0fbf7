package wiretest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The request-body fuzz oracles' pieces read a body with encoding/json's tokens, independently
// of the wire's parser, so duplicate and mistyped members stay visible.

// Member is one key and its raw value in a JSON object, in document order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members lists the members of the JSON object data, duplicates included (ok false: no object).
func Members(data []byte) (out []Member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, Member{key, raw})
	}
	return out, true
}

// Field is the last member named name (case-insensitively, as in encoding/json) and the count.
func Field(ms []Member, name string) (last any, count int) {
	for _, m := range ms {
		if strings.EqualFold(m.Key, name) {
			last = nil
			_ = json.Unmarshal(m.Value, &last)
			count++
		}
	}
	return last, count
}

// Elements are the raw elements of the last member named name (nil: not an array).
func Elements(ms []Member, name string) []json.RawMessage {
	var raws []json.RawMessage
	for _, m := range ms {
		if strings.EqualFold(m.Key, name) {
			raws = nil
			_ = json.Unmarshal(m.Value, &raws)
		}
	}
	return raws
}

// Verdict is a fuzz oracle's independent reading of a request body.
type Verdict int

// The verdicts.
const (
	Unsure  Verdict = iota // outside what the oracle decides
	Valid                  // must be accepted
	Invalid                // must be refused
)
