package jsonwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// scanAll validates data as one JSON value with the scanner.
func scanAll(data []byte) error {
	var sc Scanner
	sc.Reset(data)
	sc.Skip()
	return sc.Finish()
}

func TestScannerValidity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		valid bool
	}{
		{`{}`, true}, // empty object
		{` { "a" : [ 1 , -0.5e+3 , true , false , null , "x" ] } `, true}, // every kind, with whitespace
		{`"\u00e9\ud83d\ude00\/\b\f\n\r\t"`, true},                        // every escape
		{`{"a":1,}`, false}, // trailing comma in object
		{`[1,]`, false},     // trailing comma in array
		{`[1 2]`, false},    // missing comma
		{`{"a" 1}`, false},  // missing colon
		{`{a:1}`, false},    // unquoted key
		{`01`, false},       // leading zero
		{`1.`, false},       // no fraction digit
		{`1e`, false},       // no exponent digit
		{`-`, false},        // lone minus
		{`"a`, false},       // unterminated string
		{"\"a\tb\"", false}, // raw control character
		{`"\x"`, false},     // bad escape
		{`"\u12g4"`, false}, // bad hex
		{`nul`, false},      // truncated literal
		{`{} {}`, false},    // two top-level values
		{``, false},         // nothing
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false}, // too deep
	}
	for _, tt := range tests {
		err := scanAll([]byte(tt.in))
		if (err == nil) != tt.valid {
			t.Errorf("scan(%.40q) = %v, want valid=%v", tt.in, err, tt.valid)
		}
		if json.Valid([]byte(tt.in)) != tt.valid {
			t.Errorf("the table is wrong about %.40q: json.Valid disagrees", tt.in)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json: the same inputs are valid, and
// every string decodes to the same text.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00\ud800x\udc00"`, "\"\xff\xfe\"", `-0.1e-7`, `[1,]`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := scanAll(data)
		if valid := json.Valid(data); valid != (err == nil) {
			t.Fatalf("scanner says %v, json.Valid says %v for %q", err, valid, data)
		}
		if err != nil || len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		var sc Scanner
		sc.Reset(data)
		got := sc.Str("s")
		if sc.Finish() != nil || string(got) != want {
			t.Fatalf("string %q decoded to %q, encoding/json %q (err %v)", data, got, want, sc.Err())
		}
	})
}

func TestScannerIntegers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    int
		present bool
		wantErr string
	}{
		{"42", 42, true, ""},   // plain
		{"-7", -7, true, ""},   // negative
		{"null", 0, false, ""}, // null is absent
		{"1.5", 0, false, "f: expected an integer, got 1.5"},                               // fraction
		{"1e3", 0, false, "f: expected an integer, got 1e3"},                               // exponent
		{`"3"`, 0, false, "f: expected an integer, got a string"},                          // string
		{"99999999999999999999", 0, false, "f: integer 99999999999999999999 out of range"}, // overflow
	}
	for _, tt := range tests {
		var sc Scanner
		sc.Reset([]byte(tt.in))
		n, present := sc.Integer("f")
		err := sc.Finish()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("integer(%s) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || n != tt.want || present != tt.present {
			t.Errorf("integer(%s) = %d, %v, %v; want %d, %v", tt.in, n, present, err, tt.want, tt.present)
		}
	}
}
