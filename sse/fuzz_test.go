package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
	"time"
)

// refDecode is a deliberately naive transcription of the WHATWG event-stream interpretation,
// working on the whole input at once, used as the oracle for the streaming decoder. It returns
// the events and the comment count; it has no limits.
func refDecode(in []byte) (events []Event, comments int64) {
	in = bytes.TrimPrefix(in, []byte("\uFEFF"))
	var lines [][]byte
	for start, i := 0, 0; i < len(in); i++ {
		switch in[i] {
		case '\n':
			lines = append(lines, in[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, in[start:i])
			if i+1 < len(in) && in[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
		// Bytes after the last line end are an incomplete line and are dropped.
	}
	var data, typ []byte
	var id string
	var retry time.Duration
	for _, line := range lines {
		if len(line) == 0 {
			if len(data) > 0 {
				events = append(events, Event{Type: string(typ), Data: bytes.Clone(data[:len(data)-1]), ID: id, Retry: retry})
			}
			data, typ, retry = nil, nil, 0
			continue
		}
		if line[0] == ':' {
			comments++
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			typ = value
		case "data":
			data = append(append(data, value...), '\n')
		case "id":
			if !bytes.Contains(value, []byte{0}) {
				id = string(value)
			}
		case "retry":
			digits := len(value) > 0
			for _, c := range value {
				digits = digits && c >= '0' && c <= '9'
			}
			if ms, err := strconv.ParseInt(string(value), 10, 64); digits && err == nil && ms <= int64(1<<63-1)/int64(time.Millisecond) {
				retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	return events, comments
}

// fuzzSeeds are table inputs and edge cases that seed both fuzz targets.
var fuzzSeeds = []string{
	"",
	"\uFEFFdata: x\n\n",
	"\xEF\xBBdata: x\n\n",
	"data: a\rdata: b\r\ndata: c\n\r\n",
	"data: a\r\r\ndata: b\r\n\r\n",
	": ping\n\n",
	"event: receipt\nid: 1\nretry: 100\ndata: {}\n\n",
	"id: 1\x002\ndata: a\n\n",
	"retry: 99999999999999999999\ndata: a\n\n",
	"data\ndata\n\n",
	"data:  x\n\n",
	"data: héllo 日本語\n\n",
	"data: \xff\xfe\n\n",
	"data: a\n\ndata: b",
}

// FuzzDecode checks the decoder never panics, agrees with the naive oracle, and decodes the
// same events whatever the read sizes.
func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		want, wantComments := refDecode(in)
		for _, r := range []io.Reader{
			bytes.NewReader(in),
			iotest.OneByteReader(bytes.NewReader(in)),
			&chunkReader{bytes.NewReader(in), int(chunk%7) + 1},
		} {
			d := NewDecoder(r)
			got, err := decodeAll(d)
			if err != io.EOF {
				t.Fatalf("err = %v on %q", err, in)
			}
			if !eventsEqual(got, want) {
				t.Fatalf("input %q\n got  %s\n want %s", in, fmtEvents(got), fmtEvents(want))
			}
			if d.comments != wantComments {
				t.Fatalf("comments = %d, want %d on %q", d.comments, wantComments, in)
			}
		}
		// With tiny limits the decoder either agrees with the oracle or stops with a limit
		// error, having produced a prefix of the oracle's events; never anything else.
		d := NewDecoderLimits(&chunkReader{bytes.NewReader(in), int(chunk%5) + 1}, Limits{MaxLine: 8, MaxEvent: 12})
		got, err := decodeAll(d)
		var le *LimitError
		switch {
		case err == io.EOF:
			if !eventsEqual(got, want) {
				t.Fatalf("limited decode disagrees on %q", in)
			}
		case errors.As(err, &le):
			if len(got) > len(want) || !eventsEqual(got, want[:len(got)]) {
				t.Fatalf("limited decode produced events not in the oracle's prefix on %q", in)
			}
		default:
			t.Fatalf("limited decode err = %v", err)
		}
	})
}

// normalizeBreaks maps CRLF and lone CR to LF: the encoder writes each as a data line break,
// so the decoder returns LF for all three. That is the defined round trip for Data.
func normalizeBreaks(p []byte) []byte {
	p = bytes.ReplaceAll(p, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(p, []byte("\r"), []byte("\n"))
}

// FuzzRoundTrip checks AppendEvent then Decode returns the event: Type and ID exactly, Retry to
// the millisecond, Data with line breaks normalized to LF, for every event Validate accepts.
func FuzzRoundTrip(f *testing.F) {
	f.Add("", "", []byte("x"), uint32(0))
	f.Add("receipt", "rct_1", []byte("{}"), uint32(1500))
	f.Add("a b", " id", []byte("a\r\nb\rc\n"), uint32(7))
	f.Add("bad\n", "", []byte(""), uint32(0))
	for _, s := range fuzzSeeds {
		f.Add("", "", []byte(s), uint32(0))
	}
	f.Fuzz(func(t *testing.T, typ, id string, data []byte, retryMs uint32) {
		ev := Event{Type: typ, ID: id, Data: data, Retry: time.Duration(retryMs) * time.Millisecond}
		if err := ev.Validate(); err != nil {
			if !errors.Is(err, ErrInvalidField) {
				t.Fatalf("Validate = %v, want ErrInvalidField", err)
			}
			return
		}
		frame := AppendEvent(nil, &ev)
		d := NewDecoder(iotest.HalfReader(bytes.NewReader(frame)))
		var got Event
		if err := d.Next(&got); err != nil {
			t.Fatalf("decode %q: %v", frame, err)
		}
		if got.Type != typ || got.ID != id || got.Retry != ev.Retry || !bytes.Equal(got.Data, normalizeBreaks(data)) {
			t.Fatalf("round trip of %+v via %q gave %+v", ev, frame, got)
		}
		if err := d.Next(&got); err != io.EOF {
			t.Fatalf("extra data after the event: %v", err)
		}
	})
}
