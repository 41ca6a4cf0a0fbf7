package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
)

// chunkReader returns at most n bytes per Read, to split input at every possible boundary.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// readers are the ways every table case is fed to the decoder.
var readers = []struct {
	name string
	wrap func(string) io.Reader
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
	{"1-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	{"2-byte", func(s string) io.Reader { return &chunkReader{strings.NewReader(s), 2} }},
	{"3-byte", func(s string) io.Reader { return &chunkReader{strings.NewReader(s), 3} }},
	{"data+EOF", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
}

// ev builds an expected event.
func ev(typ, data, id string) Event {
	return Event{Type: typ, Data: []byte(data), ID: id}
}

// decodeAll decodes every event from r, copying Data, and returns the terminal error.
func decodeAll(d *Decoder) ([]Event, error) {
	var out []Event
	var e Event
	for {
		err := d.Next(&e)
		if err != nil {
			return out, err
		}
		e.Data = bytes.Clone(e.Data)
		if e.Data == nil {
			e.Data = []byte{}
		}
		out = append(out, e)
		if len(out) > 10000 {
			return out, errors.New("runaway decoder")
		}
	}
}

func eventsEqual(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].ID != b[i].ID || a[i].Retry != b[i].Retry || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func fmtEvents(evs []Event) string {
	var sb strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&sb, "{Type:%q Data:%q ID:%q Retry:%v} ", e.Type, e.Data, e.ID, e.Retry)
	}
	return sb.String()
}

type decodeCase struct {
	name      string
	in        string
	want      []Event
	comments  int64
	truncated bool
}

// runDecodeCases runs each case with every reader in readers.
func runDecodeCases(t *testing.T, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				t.Parallel()
				d := NewDecoder(rd.wrap(tc.in))
				got, err := decodeAll(d)
				if err != io.EOF {
					t.Fatalf("Next error = %v, want io.EOF", err)
				}
				if !eventsEqual(got, tc.want) {
					t.Errorf("input %q\n got  %s\n want %s", tc.in, fmtEvents(got), fmtEvents(tc.want))
				}
				if d.comments != tc.comments {
					t.Errorf("comments = %d, want %d", d.comments, tc.comments)
				}
				if d.BytesRead() != int64(len(tc.in)) {
					t.Errorf("BytesRead() = %d, want %d", d.BytesRead(), len(tc.in))
				}
				if d.Truncated() != tc.truncated {
					t.Errorf("Truncated() = %v, want %v", d.Truncated(), tc.truncated)
				}
				// Errors are sticky.
				var e Event
				if err := d.Next(&e); err != io.EOF {
					t.Errorf("Next after EOF = %v, want io.EOF", err)
				}
			})
		}
	}
}

func TestDecodeBOM(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// A leading BOM is stripped.
		{name: "leading", in: "\uFEFFdata: x\n\n", want: []Event{ev("", "x", "")}},
		// Only one BOM: the second becomes part of the field name, an unknown field.
		{name: "double", in: "\uFEFF\uFEFFdata: x\n\ndata: y\n\n", want: []Event{ev("", "y", "")}},
		// A BOM after the start is data, not stripped.
		{name: "later", in: "data: \uFEFFx\n\n", want: []Event{ev("", "\uFEFFx", "")}},
		// A BOM at the start of a later line is part of the field name.
		{name: "later-line", in: "data: a\n\n\uFEFFdata: b\n\n", want: []Event{ev("", "a", "")}},
		// A partial BOM prefix is not a BOM; the line's field name is unknown.
		{name: "partial", in: "\xEF\xBBdata: x\n\ndata: y\n\n", want: []Event{ev("", "y", "")}},
		// A stream that is only a BOM is empty.
		{name: "only-bom", in: "\uFEFF"},
		// A stream cut inside the BOM is empty, with the partial line discarded.
		{name: "cut-bom", in: "\xEF\xBB", truncated: true},
		// An empty stream.
		{name: "empty", in: ""},
	})
}

func TestDecodeLineEndings(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// LF.
		{name: "lf", in: "data: a\n\n", want: []Event{ev("", "a", "")}},
		// CRLF.
		{name: "crlf", in: "data: a\r\n\r\n", want: []Event{ev("", "a", "")}},
		// Lone CR.
		{name: "cr", in: "data: a\r\r", want: []Event{ev("", "a", "")}},
		// Mixed endings within one event.
		{name: "mixed", in: "data: a\rdata: b\r\ndata: c\n\r\n", want: []Event{ev("", "a\nb\nc", "")}},
		// LF then CR is two line ends (the second a blank line that dispatches).
		{name: "lf-cr", in: "data: a\n\rdata: b\n\n", want: []Event{ev("", "a", ""), ev("", "b", "")}},
		// CR CR LF is a CR line end, then a CRLF blank line.
		{name: "cr-crlf", in: "data: a\r\r\ndata: b\r\n\r\n", want: []Event{ev("", "a", ""), ev("", "b", "")}},
		// A CRLF split across reads (the 1- and 2-byte readers split it) is one line end.
		{name: "crlf-events", in: "data: 1\r\n\r\ndata: 2\r\n\r\n", want: []Event{ev("", "1", ""), ev("", "2", "")}},
		// Several blank lines in a row dispatch nothing extra.
		{name: "blank-run", in: "\n\r\n\r\ndata: a\n\n\n\n", want: []Event{ev("", "a", "")}},
		// A final CR after the blank-line-to-be completes the event at EOF.
		{name: "cr-at-eof", in: "data: a\n\r", want: []Event{ev("", "a", "")}},
	})
}

func TestDecodeComments(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// A heartbeat comment is counted and dispatches nothing.
		{name: "ping", in: ": ping\n\n", comments: 1},
		// A bare colon is a comment.
		{name: "bare", in: ":\n\n", comments: 1},
		// A comment inside an event neither dispatches nor adds data.
		{name: "inside", in: "data: a\n:comment\ndata: b\n\n", want: []Event{ev("", "a\nb", "")}, comments: 1},
		// Comments with CR endings and a colon-looking body.
		{name: "cr", in: ":data: x\r:\r\r", comments: 2},
	})
}

func TestDecodeFields(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// No space after the colon.
		{name: "no-space", in: "data:x\n\n", want: []Event{ev("", "x", "")}},
		// Only one leading space is removed.
		{name: "two-spaces", in: "data:  x\n\n", want: []Event{ev("", " x", "")}},
		// A tab is not a space.
		{name: "tab", in: "data:\tx\n\n", want: []Event{ev("", "\tx", "")}},
		// Trailing spaces are kept.
		{name: "trailing", in: "data: x \n\n", want: []Event{ev("", "x ", "")}},
		// Only the first colon splits name from value.
		{name: "colon-in-value", in: "data: a:b: c\n\n", want: []Event{ev("", "a:b: c", "")}},
		// A field without a colon has an empty value: an empty data line dispatches empty data.
		{name: "no-colon-data", in: "data\n\n", want: []Event{ev("", "", "")}},
		// Two empty data lines join to one LF.
		{name: "no-colon-data-twice", in: "data\ndata\n\n", want: []Event{ev("", "\n", "")}},
		// "data:" with nothing after it is the same as "data".
		{name: "empty-value", in: "data:\n\n", want: []Event{ev("", "", "")}},
		// An event field without colon resets the type to the default.
		{name: "no-colon-event", in: "event: x\nevent\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// Unknown fields are ignored.
		{name: "unknown", in: "foo: bar\ndata: a\nbaz\n\n", want: []Event{ev("", "a", "")}},
		// Field names are case-sensitive.
		{name: "case", in: "Data: a\nDATA: b\ndata: c\n\n", want: []Event{ev("", "c", "")}},
		// A space before the colon makes a different (unknown) field name.
		{name: "space-before-colon", in: "data : a\ndata: b\n\n", want: []Event{ev("", "b", "")}},
		// A line that is only a space is a field named " ", ignored; it does not dispatch.
		{name: "space-line", in: "data: a\n \ndata: b\n\n", want: []Event{ev("", "a\nb", "")}},
	})
}

func TestDecodeData(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// Data lines join with LF.
		{name: "join", in: "data: a\ndata: b\ndata: c\n\n", want: []Event{ev("", "a\nb\nc", "")}},
		// Only the final trailing LF is removed; an empty last line leaves one LF.
		{name: "trailing-empty", in: "data: a\ndata:\n\n", want: []Event{ev("", "a\n", "")}},
		// Leading empty data line.
		{name: "leading-empty", in: "data:\ndata: a\n\n", want: []Event{ev("", "\na", "")}},
		// Multibyte UTF-8 passes through, whatever the read size splits.
		{name: "utf8", in: "data: héllo 日本語 🎉\n\n", want: []Event{ev("", "héllo 日本語 🎉", "")}},
		// Invalid UTF-8 passes through as bytes.
		{name: "invalid-utf8", in: "data: \xff\xfe\xc3\n\n", want: []Event{ev("", "\xff\xfe\xc3", "")}},
		// NUL in data is data.
		{name: "nul", in: "data: a\x00b\n\n", want: []Event{ev("", "a\x00b", "")}},
		// Consecutive events reuse buffers without leaking data between them.
		{name: "sequence", in: "data: long-first\n\ndata: s\n\n", want: []Event{ev("", "long-first", ""), ev("", "s", "")}},
		// JSON frames as the dialects send them.
		{name: "json", in: "data: {\"blockId\":\"b1\",\"chunk\":\"Hi\"}\n\ndata: \"[DONE]\"\n\n", want: []Event{ev("", `{"blockId":"b1","chunk":"Hi"}`, ""), ev("", `"[DONE]"`, "")}},
	})
}

func TestDecodeEventType(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// A named event.
		{name: "named", in: "event: receipt\ndata: {}\n\n", want: []Event{ev("receipt", "{}", "")}},
		// The type resets after each dispatch.
		{name: "reset", in: "event: a\ndata: 1\n\ndata: 2\n\n", want: []Event{ev("a", "1", ""), ev("", "2", "")}},
		// The last event field wins.
		{name: "last-wins", in: "event: a\nevent: b\ndata: 1\n\n", want: []Event{ev("b", "1", "")}},
		// A type on an event with no data is discarded with it.
		{name: "discarded", in: "event: a\n\ndata: 1\n\n", want: []Event{ev("", "1", "")}},
		// Many different names, more than the intern cache holds, stay correct.
		{name: "many", in: "event: a\ndata: 1\n\nevent: b\ndata: 1\n\nevent: c\ndata: 1\n\nevent: d\ndata: 1\n\nevent: e\ndata: 1\n\nevent: f\ndata: 1\n\nevent: g\ndata: 1\n\nevent: h\ndata: 1\n\nevent: i\ndata: 1\n\nevent: a\ndata: 1\n\n",
			want: []Event{ev("a", "1", ""), ev("b", "1", ""), ev("c", "1", ""), ev("d", "1", ""), ev("e", "1", ""), ev("f", "1", ""), ev("g", "1", ""), ev("h", "1", ""), ev("i", "1", ""), ev("a", "1", "")}},
	})
}

func TestDecodeID(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// The id persists across events.
		{name: "persists", in: "id: 1\ndata: a\n\ndata: b\n\n", want: []Event{ev("", "a", "1"), ev("", "b", "1")}},
		// An empty id resets the last event ID.
		{name: "reset", in: "id: 1\ndata: a\n\nid\ndata: b\n\n", want: []Event{ev("", "a", "1"), ev("", "b", "")}},
		// An id containing NUL is ignored.
		{name: "nul", in: "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", want: []Event{ev("", "a", "1"), ev("", "b", "1")}},
		// An id on a block without data still updates the ID for later events.
		{name: "no-data", in: "id: 7\n\ndata: a\n\n", want: []Event{ev("", "a", "7")}},
		// The id may come after data in the same event.
		{name: "after-data", in: "data: a\nid: 9\n\n", want: []Event{ev("", "a", "9")}},
		// An id with spaces and UTF-8 is kept verbatim (one leading space removed).
		{name: "verbatim", in: "id:  x é\ndata: a\n\n", want: []Event{ev("", "a", " x é")}},
	})
}

func TestDecodeRetry(t *testing.T) {
	t.Parallel()
	withRetry := func(e Event, d time.Duration) Event { e.Retry = d; return e }
	runDecodeCases(t, []decodeCase{
		// A valid retry in milliseconds.
		{name: "valid", in: "retry: 1500\ndata: a\n\n", want: []Event{withRetry(ev("", "a", ""), 1500*time.Millisecond)}},
		// Retry applies only to the event that carried it.
		{name: "per-event", in: "retry: 10\ndata: a\n\ndata: b\n\n", want: []Event{withRetry(ev("", "a", ""), 10*time.Millisecond), ev("", "b", "")}},
		// Non-digits make it ignored.
		{name: "non-digit", in: "retry: 1a\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// A sign is not a digit.
		{name: "negative", in: "retry: -5\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// Two spaces leave one, which is not a digit.
		{name: "space", in: "retry:  5\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// An empty value is ignored.
		{name: "empty", in: "retry\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// A value that overflows a Duration is ignored rather than wrapped.
		{name: "overflow", in: "retry: 99999999999999999999999\ndata: a\n\n", want: []Event{ev("", "a", "")}},
		// A later invalid retry does not cancel an earlier valid one in the same event.
		{name: "valid-then-invalid", in: "retry: 20\nretry: x\ndata: a\n\n", want: []Event{withRetry(ev("", "a", ""), 20*time.Millisecond)}},
		// An empty value is ignored: it neither sets 0 nor clears an earlier valid retry.
		{name: "empty-after-valid", in: "retry: 5\nretry\ndata: a\n\n", want: []Event{withRetry(ev("", "a", ""), 5*time.Millisecond)}},
		// Non-ASCII digits are not digits.
		{name: "unicode-digit", in: "retry: ٣\ndata: a\n\n", want: []Event{ev("", "a", "")}},
	})
}

func TestDecodeDispatchAndEOF(t *testing.T) {
	t.Parallel()
	runDecodeCases(t, []decodeCase{
		// A blank line with no data dispatches nothing.
		{name: "no-data", in: "event: x\nretry: 5\n\n"},
		// Data without a final blank line is discarded at EOF.
		{name: "no-blank", in: "data: a\n", truncated: true},
		// An unterminated last line is discarded at EOF.
		{name: "unterminated", in: "data: a\n\ndata: b", want: []Event{ev("", "a", "")}, truncated: true},
		// An unterminated id line does not count.
		{name: "unterminated-id", in: "id: 1\ndata: a\n\nid: 2", want: []Event{ev("", "a", "1")}, truncated: true},
		// A complete stream is not truncated even with trailing comments.
		{name: "clean", in: "data: a\n\n: bye\n", want: []Event{ev("", "a", "")}, comments: 1},
	})
}

// TestDecodeRetryAccessors checks the stream-level Retry and LastEventID, which see fields of
// events that are never dispatched.
func TestDecodeRetryAccessors(t *testing.T) {
	t.Parallel()
	d := NewDecoder(strings.NewReader("retry: 3000\nid: 42\n\n"))
	var e Event
	if err := d.Next(&e); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if d.retryAll != 3*time.Second || d.LastEventID() != "42" {
		t.Errorf("retryAll = %v, LastEventID() = %q; want 3s, \"42\"", d.retryAll, d.LastEventID())
	}
}

// TestDecodeLongLinesGrowBuffer feeds lines longer than the initial read buffer.
func TestDecodeLongLinesGrowBuffer(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3*maxReadSize+17)
	in := "data: " + long + "\r\ndata: " + long + "\r\n\r\n"
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeAll(NewDecoder(rd.wrap(in)))
			if err != io.EOF || len(got) != 1 || string(got[0].Data) != long+"\n"+long {
				t.Fatalf("got %d events, err %v; want one event of %d bytes", len(got), err, 2*len(long)+1)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	t.Parallel()
	lim := Limits{MaxLine: 16, MaxEvent: 20}
	line16 := "data: 0123456789" // exactly 16 bytes
	cases := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
		offset  int64
	}{
		// A line of exactly MaxLine bytes is fine with each terminator.
		{name: "line-at-limit-lf", in: line16 + "\n\n", want: []Event{ev("", "0123456789", "")}},
		{name: "line-at-limit-crlf", in: line16 + "\r\n\r\n", want: []Event{ev("", "0123456789", "")}},
		{name: "line-at-limit-cr", in: line16 + "\r\r", want: []Event{ev("", "0123456789", "")}},
		// One byte over MaxLine fails, terminated or not.
		{name: "line-over-lf", in: line16 + "x\n\n", wantErr: ErrLineTooLong, offset: 0},
		{name: "line-over-unterminated", in: line16 + "xyzxyzxyzxyz", wantErr: ErrLineTooLong, offset: 0},
		// The offset names where the offending line starts, after earlier events.
		{name: "line-over-offset", in: "data: a\n\n" + line16 + "x\n\n", want: []Event{ev("", "a", "")}, wantErr: ErrLineTooLong, offset: 9},
		// Comments count against MaxLine too.
		{name: "comment-over", in: ": " + strings.Repeat("p", 20) + "\n", wantErr: ErrLineTooLong, offset: 0},
		// An endless line without terminator is stopped at the limit, not buffered forever.
		{name: "endless", in: strings.Repeat("z", 10000), wantErr: ErrLineTooLong, offset: 0},
		// Joined data of exactly MaxEvent bytes is fine (10 + LF + 9).
		{name: "event-at-limit", in: "data: 0123456789\ndata: 012345678\n\n", want: []Event{ev("", "0123456789\n012345678", "")}},
		// One byte over MaxEvent fails at the line that crosses it.
		{name: "event-over", in: "data: 0123456789\ndata: 0123456789\n\n", wantErr: ErrEventTooLarge, offset: 17},
		// Many small lines cross MaxEvent too.
		{name: "event-many-lines", in: strings.Repeat("data: ab\n", 10) + "\n", wantErr: ErrEventTooLarge, offset: 63},
	}
	for _, tc := range cases {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				t.Parallel()
				d := NewDecoderLimits(rd.wrap(tc.in), lim)
				got, err := decodeAll(d)
				if !eventsEqual(got, tc.want) {
					t.Errorf("got %s, want %s", fmtEvents(got), fmtEvents(tc.want))
				}
				if tc.wantErr == nil {
					if err != io.EOF {
						t.Fatalf("err = %v, want io.EOF", err)
					}
					return
				}
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				var le *LimitError
				if !errors.As(err, &le) {
					t.Fatalf("err %T is not a *LimitError", err)
				}
				if le.Offset != tc.offset {
					t.Errorf("Offset = %d, want %d (%v)", le.Offset, tc.offset, err)
				}
				if d.BytesRead() > int64(lim.MaxLine+minReadSize+len(tc.want)*32) {
					t.Errorf("read %d bytes before failing; the limit should stop reading early", d.BytesRead())
				}
				var e Event
				if err2 := d.Next(&e); err2 != err {
					t.Errorf("second Next = %v, want the same sticky error", err2)
				}
			})
		}
	}
}

func TestLimitErrorMessage(t *testing.T) {
	t.Parallel()
	err := error(&LimitError{What: "line", Limit: 10, Offset: 99})
	if !strings.Contains(err.Error(), "line exceeds limit of 10 bytes") || !strings.Contains(err.Error(), "offset 99") {
		t.Errorf("message %q does not say what and where", err)
	}
	if errors.Is(err, ErrEventTooLarge) {
		t.Error("line error matches ErrEventTooLarge")
	}
	wrapped := fmt.Errorf("stream 3: %w", &LimitError{What: "event", Limit: 1, Offset: 0})
	if !errors.Is(wrapped, ErrEventTooLarge) || errors.Is(wrapped, ErrLineTooLong) {
		t.Error("wrapped event error does not match exactly ErrEventTooLarge")
	}
}

// TestDecodeReaderErrors checks that reader failures surface wrapped, after the events that
// arrived before them.
func TestDecodeReaderErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name string
		r    io.Reader
		want []Event
	}{
		// The error comes after the complete event that preceded it.
		{name: "after-event", r: io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)), want: []Event{ev("", "a", "")}},
		// An immediate error.
		{name: "immediate", r: iotest.ErrReader(boom)},
		// Data and an error in the same Read: the events come first, then that error, even
		// though the reader would return (0, nil) if asked again.
		{name: "data-with-error", r: &dataThenErr{data: "data: a\n\ndata: b\n\n", err: boom}, want: []Event{ev("", "a", ""), ev("", "b", "")}},
		// A timeout-style error after one read.
		{name: "timeout", r: iotest.TimeoutReader(strings.NewReader("data: a\n\n")), want: []Event{ev("", "a", "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeAll(NewDecoder(tc.r))
			if err == nil || err == io.EOF {
				t.Fatalf("err = %v, want a read error", err)
			}
			if tc.name != "timeout" && !errors.Is(err, boom) {
				t.Errorf("err = %v does not wrap the reader's error", err)
			}
			if !strings.Contains(err.Error(), "sse: read") {
				t.Errorf("err = %q lacks context", err)
			}
			if !eventsEqual(got, tc.want) {
				t.Errorf("got %s, want %s", fmtEvents(got), fmtEvents(tc.want))
			}
		})
	}
}

// dataThenErr returns all its data with err in one Read, then (0, nil) forever.
type dataThenErr struct {
	data string
	err  error
	done bool
}

func (r *dataThenErr) Read(p []byte) (int, error) {
	if r.done {
		return 0, nil
	}
	r.done = true
	return copy(p, r.data), r.err
}

// stuckReader returns (0, nil) forever, which io.Reader discourages but permits.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestDecodeNoProgress(t *testing.T) {
	t.Parallel()
	var e Event
	if err := NewDecoder(stuckReader{}).Next(&e); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestDecodeCRDispatchesWithoutWaiting shows a CR-terminated event is delivered at once, not
// held until the next byte arrives (which on a live stream may be many seconds later).
func TestDecodeCRDispatchesWithoutWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		d := NewDecoder(pr)
		got := make(chan string, 2)
		go func() {
			var e Event
			for d.Next(&e) == nil {
				got <- string(e.Data)
			}
			close(got)
		}()
		if _, err := pw.Write([]byte("data: a\r\r")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case s := <-got:
			if s != "a" {
				t.Fatalf("got %q, want \"a\"", s)
			}
		default:
			t.Fatal("event ending in CR was not dispatched before more input arrived")
		}
		// The LF that completes a CRLF in the next read is not a second blank line.
		if _, err := pw.Write([]byte("\ndata: b\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		pw.Close()
		if s := <-got; s != "b" {
			t.Fatalf("got %q, want \"b\"", s)
		}
		if _, ok := <-got; ok {
			t.Fatal("unexpected extra event")
		}
	})
}

// TestDecodeEventDataAliasing documents that Data is reused by the next call.
func TestDecodeEventDataAliasing(t *testing.T) {
	t.Parallel()
	d := NewDecoder(strings.NewReader("data: first\n\ndata: other\n\n"))
	var a, b Event
	if err := d.Next(&a); err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(a.Data)
	if err := d.Next(&b); err != nil {
		t.Fatal(err)
	}
	if string(kept) != "first" || string(b.Data) != "other" {
		t.Errorf("kept %q, second %q", kept, b.Data)
	}
}

// TestDecodeTypeInterned checks repeated event names do not allocate.
// Not parallel: testing.AllocsPerRun refuses to run in parallel tests.
func TestDecodeTypeInterned(t *testing.T) {
	frame := "event: content_block_delta\ndata: {}\n\nevent: ping\ndata: {}\n\n"
	r := &repeatReader{block: []byte(strings.Repeat(frame, 64))}
	d := NewDecoder(r)
	var e Event
	for range 10 {
		if err := d.Next(&e); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := d.Next(&e); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.2f allocs per named event, want 0", allocs)
	}
}

// TestDecodeMemoryBounded checks buffers stay within their documented bounds: the read buffer
// never exceeds max(maxReadSize, MaxLine+2) and the data buffer never exceeds MaxEvent+1,
// however long the stream runs.
func TestDecodeMemoryBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		frames string
		limits Limits
	}{
		// Many small frames from large reads: the buffer grows adaptively but stops at maxReadSize.
		{name: "small-frames", frames: "data: {\"chunk\":\"hi\"}\n\n"},
		// Lines near a large MaxLine grow the buffer to MaxLine+2 and no further.
		{name: "long-lines", frames: "data: " + strings.Repeat("y", 40000) + "\n\n", limits: Limits{MaxLine: 40006}},
		// Events near MaxEvent built from many lines.
		{name: "big-events", frames: strings.Repeat("data: "+strings.Repeat("z", 99)+"\n", 50) + "\n", limits: Limits{MaxEvent: 5000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := NewDecoderLimits(&repeatReader{block: []byte(strings.Repeat(tc.frames, 8))}, tc.limits)
			var e Event
			for range 2000 {
				if err := d.Next(&e); err != nil {
					t.Fatal(err)
				}
			}
			if limit := max(maxReadSize, d.limits.MaxLine+2); len(d.buf) > limit {
				t.Errorf("read buffer %d bytes, want <= %d", len(d.buf), limit)
			}
			// append may round capacity up, so allow its size-class slack.
			if cap(d.data) > 2*(d.limits.MaxEvent+1) {
				t.Errorf("data buffer cap %d, want about <= %d", cap(d.data), d.limits.MaxEvent+1)
			}
		})
	}
}

// TestDecodeIdleStreamIsSmall checks a stream that has delivered one small event holds only
// the initial read buffer, which is what 100k mostly idle load-generator streams cost.
func TestDecodeIdleStreamIsSmall(t *testing.T) {
	t.Parallel()
	d := NewDecoder(strings.NewReader(": ping\n\ndata: x\n\n"))
	var e Event
	if err := d.Next(&e); err != nil {
		t.Fatal(err)
	}
	if len(d.buf) != minReadSize {
		t.Errorf("read buffer %d bytes after one tiny event, want %d", len(d.buf), minReadSize)
	}
}

// TestDecodeReset checks a reset decoder starts clean (no BOM state, ID, pending data, counts
// or sticky error carried over) and reuses its buffers.
func TestDecodeReset(t *testing.T) {
	t.Parallel()
	d := NewDecoderLimits(strings.NewReader("id: 1\n: c\ndata: a\n\ndata: pending"), Limits{MaxLine: 100})
	got, err := decodeAll(d)
	if err != io.EOF || len(got) != 1 || !d.Truncated() {
		t.Fatalf("first stream: %s, %v", fmtEvents(got), err)
	}
	d.Reset(strings.NewReader("\uFEFFdata: b\n\n"))
	got, err = decodeAll(d)
	if err != io.EOF || !eventsEqual(got, []Event{ev("", "b", "")}) {
		t.Fatalf("after Reset: %s, %v", fmtEvents(got), err)
	}
	if d.comments != 0 || d.Truncated() || d.BytesRead() != 12 || d.LastEventID() != "" {
		t.Errorf("state carried over: comments %d truncated %v bytes %d id %q", d.comments, d.Truncated(), d.BytesRead(), d.LastEventID())
	}
	// Limits survive a reset, and a sticky error does not.
	d.Reset(strings.NewReader(strings.Repeat("x", 200)))
	if _, err := decodeAll(d); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong with the kept limit", err)
	}
	d.Reset(strings.NewReader("data: c\n\n"))
	if got, err := decodeAll(d); err != io.EOF || len(got) != 1 {
		t.Fatalf("after Reset from error: %s, %v", fmtEvents(got), err)
	}
}
