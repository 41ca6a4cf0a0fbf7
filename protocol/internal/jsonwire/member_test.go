package jsonwire

import (
	"strings"
	"testing"
)

// TestMemberReaders reads one member of an object (StrIn "m", IntegerIn "n") and skips the
// rest: absent, null, repeated and mistyped members, and an object that is null or not one.
func TestMemberReaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		isObject bool
		str      string // StrIn's value; "<nil>" for nil
		n        int    // IntegerIn's value
		present  bool
		strErr   string // a substring of Finish's error after StrIn, "" for none
		intErr   string // the same after IntegerIn
	}{
		// Both members among others, which are validated and skipped.
		{`{"a":[1,{"b":2}],"m":"x","n":3,"z":null}`, true, "x", 3, true, "", ""},
		// Neither member.
		{`{"a":1}`, true, "<nil>", 0, false, "", ""},
		// Both null: absent.
		{`{"m":null,"n":null}`, true, "<nil>", 0, false, "", ""},
		// Repeated: the last wins.
		{`{"m":"x","m":"y","n":1,"n":2}`, true, "y", 2, true, "", ""},
		// A null object is no object, without an error.
		{`null`, false, "<nil>", 0, false, "", ""},
		// A string where the object goes: a type error naming the object.
		{`"x"`, false, "<nil>", 0, false, "obj", "obj"},
		// Mistyped members: a type error naming the one read.
		{`{"m":1,"n":"x"}`, true, "<nil>", 0, false, "obj.m", "obj.n"},
		// An invalid skipped member is still an error.
		{`{"a":tru}`, true, "<nil>", 0, false, "invalid", "invalid"},
	}
	for _, tt := range tests {
		var sc Scanner
		sc.Reset([]byte(tt.in))
		var str []byte
		isObject := sc.StrIn("obj", "m", "obj.m", &str)
		checkErr(t, tt.in+" StrIn", sc.Finish(), tt.strErr)
		got := "<nil>"
		if str != nil {
			got = string(str)
		}
		if isObject != tt.isObject || (tt.strErr == "" && got != tt.str) {
			t.Errorf("%s: StrIn %t %q, want %t %q", tt.in, isObject, got, tt.isObject, tt.str)
		}
		sc.Reset([]byte(tt.in))
		var n int
		var present bool
		isObject = sc.IntegerIn("obj", "n", "obj.n", &n, &present)
		checkErr(t, tt.in+" IntegerIn", sc.Finish(), tt.intErr)
		if isObject != tt.isObject || (tt.intErr == "" && (n != tt.n || present != tt.present)) {
			t.Errorf("%s: IntegerIn %t %d %t, want %t %d %t", tt.in, isObject, n, present, tt.isObject, tt.n, tt.present)
		}
	}
}

// checkErr fails t unless err is nil for want "" and otherwise contains want.
func checkErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if (err == nil) != (want == "") || (err != nil && !strings.Contains(err.Error(), want)) {
		t.Errorf("%s: error %v, want one with %q", what, err, want)
	}
}

// TestMemberReadersMerge: a second object without the member leaves the first one's value,
// as encoding/json does for a repeated object.
func TestMemberReadersMerge(t *testing.T) {
	t.Parallel()
	var sc Scanner
	var str []byte
	var n int
	var present bool
	sc.Reset([]byte(`[{"m":"x","n":1},{"a":2}]`))
	for first := sc.Array("list"); sc.Element(&first); {
		sc.StrIn("obj", "m", "obj.m", &str)
	}
	if err := sc.Finish(); err != nil || string(str) != "x" {
		t.Errorf("StrIn: %q, %v; want \"x\"", str, err)
	}
	sc.Reset([]byte(`[{"m":"x","n":1},{"a":2}]`))
	for first := sc.Array("list"); sc.Element(&first); {
		sc.IntegerIn("obj", "n", "obj.n", &n, &present)
	}
	if err := sc.Finish(); err != nil || n != 1 || !present {
		t.Errorf("IntegerIn: %d %t, %v; want 1 true", n, present, err)
	}
}

// TestMemberReadersSkip: an object without the member read is judged for its presence and
// validity, not its content.
func TestMemberReadersSkip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		isObject bool
		valid    bool
	}{
		{`{"a":{"b":[1,2]},"c":"d"}`, true, true}, // nested members, skipped
		{`null`, false, true},                     // null: no object, no error
		{`[1]`, false, false},                     // an array: a type error
		{`{"a":}`, true, false},                   // an invalid member
	}
	for _, tt := range tests {
		var sc Scanner
		sc.Reset([]byte(tt.in))
		var str []byte
		isObject := sc.StrIn("obj", "m", "obj.m", &str)
		err := sc.Finish()
		if isObject != tt.isObject || (err == nil) != tt.valid {
			t.Errorf("%s: object %t, error %v; want object %t, valid %t", tt.in, isObject, err, tt.isObject, tt.valid)
		}
	}
}

// BenchmarkIntegerIn reads a usage object's count: no allocation.
func BenchmarkIntegerIn(b *testing.B) {
	data := []byte(`{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}`)
	var sc Scanner
	b.ReportAllocs()
	for b.Loop() {
		sc.Reset(data)
		var n int
		var present bool
		if sc.IntegerIn("usage", "completion_tokens", "usage.completion_tokens", &n, &present); n != 2 {
			b.Fatal(n)
		}
	}
}

// BenchmarkSkipNumbers validates and skips an object of numbers of every form (integers,
// fractions, exponents): no allocation.
func BenchmarkSkipNumbers(b *testing.B) {
	data := []byte(`{"a":0,"b":-12,"c":3.25,"d":-0.5e-3,"e":6E+10,"f":1234567890,"g":[1,2.5,3e2]}`)
	var sc Scanner
	b.ReportAllocs()
	for b.Loop() {
		sc.Reset(data)
		sc.Skip()
		if err := sc.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}
