// Package sse is the Server-Sent Events codec every streambench dialect shares: a strict,
// allocation-free WHATWG event-stream decoder with hard size limits (docs/PROTOCOLS.md, "SSE
// framing"; it works on bytes, so reads split anywhere decode the same), and AppendEvent, which
// builds an event's frame.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Default limits used when a Limits field is zero.
const (
	DefaultMaxLine  = 64 << 10 // bytes in one line, terminator excluded
	DefaultMaxEvent = 1 << 20  // bytes of joined data in one event
)

// Read buffer sizes: small, so 100k idle streams stay cheap (net/http buffers the connection),
// doubling up to maxReadSize while reads fill it (a long line grows it up to MaxLine).
const (
	minReadSize = 256
	maxReadSize = 16 << 10
)

// typeCacheSize is how many event names a decoder interns (a handful: a scan beats a map).
const typeCacheSize = 8

// maxInternedType bounds interned names, so a hostile stream cannot pin large strings.
const maxInternedType = 64

// Event is one dispatched event.
type Event struct {
	// Type is the "event" field; "" means the default ("message").
	Type string
	// Data is the data lines joined with "\n"; decoded, it aliases the decoder's buffer until Next.
	Data []byte
	// ID is the last event ID at dispatch time (it persists until an "id" field changes it).
	ID string
	// Retry is > 0 when this event carried a valid retry field (milliseconds, as a Duration).
	Retry time.Duration
}

// Limits caps what one stream may send (zero fields: the defaults), bounding a hostile peer.
type Limits struct {
	// MaxLine is the largest line in bytes, line terminator excluded (default 64 KiB).
	MaxLine int
	// MaxEvent is the largest joined data of one event in bytes (default 1 MiB).
	MaxEvent int
}

// Sentinel errors, returned wrapped in *LimitError; test with errors.Is.
var (
	// ErrLineTooLong means a line exceeded Limits.MaxLine.
	ErrLineTooLong = errors.New("sse: line too long")
	// ErrEventTooLarge means an event's data exceeded Limits.MaxEvent.
	ErrEventTooLarge = errors.New("sse: event too large")
)

// LimitError reports which limit a stream broke and where.
type LimitError struct {
	// What is "line" or "event".
	What string
	// Limit is the configured cap in bytes.
	Limit int
	// Offset is the stream offset (bytes, BOM included) of the start of the offending line.
	Offset int64
}

// Error describes the broken limit.
func (e *LimitError) Error() string {
	return fmt.Sprintf("sse: %s exceeds limit of %d bytes (line starting at stream offset %d)", e.What, e.Limit, e.Offset)
}

// Unwrap returns the sentinel so errors.Is and errors.As both work.
func (e *LimitError) Unwrap() error {
	if e.What == "line" {
		return ErrLineTooLong
	}
	return ErrEventTooLarge
}

// Decoder reads events from an event stream; its first error sticks. Not safe for concurrent use.
type Decoder struct {
	r      io.Reader
	limits Limits

	buf       []byte // read buffer; buf[pos:end] is not yet parsed
	pos       int
	end       int
	base      int64 // stream offset of buf[0]
	bytesRead int64

	// nextLF caches the next '\n' in buf, so lone-CR streams do not rescan for it per line; -1:
	// none in buf[:lfScanned].
	nextLF    int
	lfScanned int

	readFilled bool // the last Read filled the whole free buffer
	skipLF     bool // the previous line ended in CR, so a '\n' right now is part of that line end
	bomChecked bool
	eof        bool
	pending    bool // some field line has been seen since the last dispatch
	aliased    bool // alias holds the pending event's data
	truncated  bool
	err        error // sticky
	readErr    error // a read error that came with data, reported after that data is parsed

	// alias is the pending event's only data line while in buf (aliased), dispatched without a
	// copy; fill, which moves buf, first copies it into data.
	alias  []byte
	data   []byte // data buffer: each data line followed by '\n'
	typ    []byte // event type buffer
	lastID string
	retry  time.Duration // retry carried by the pending event

	// Cold: touched only by comment lines, retry fields and named events.
	retryAll time.Duration // latest valid retry seen on the stream
	comments int64
	types    [typeCacheSize]string
	typeNext int
}

// NewDecoder returns a decoder reading from r with the default limits.
func NewDecoder(r io.Reader) *Decoder {
	return NewDecoderLimits(r, Limits{})
}

// NewDecoderLimits returns a decoder reading from r with l (zero or negative fields: defaults).
func NewDecoderLimits(r io.Reader, l Limits) *Decoder {
	if l.MaxLine <= 0 {
		l.MaxLine = DefaultMaxLine
	}
	if l.MaxEvent <= 0 {
		l.MaxEvent = DefaultMaxEvent
	}
	return &Decoder{r: r, limits: l, buf: make([]byte, min(minReadSize, l.MaxLine+2)), nextLF: -1}
}

// Reset makes d decode a new stream from r, keeping its buffers unless a long line grew them,
// so a worker opening stream after stream allocates nothing.
func (d *Decoder) Reset(r io.Reader) {
	buf, data := d.buf, d.data[:0]
	if len(buf) > maxReadSize {
		buf = make([]byte, min(minReadSize, d.limits.MaxLine+2))
	}
	if cap(data) > maxReadSize {
		data = nil
	}
	*d = Decoder{r: r, limits: d.limits, buf: buf, data: data, typ: d.typ[:0], nextLF: -1, types: d.types}
}

// BytesRead returns the number of bytes read from the underlying reader so far.
func (d *Decoder) BytesRead() int64 { return d.bytesRead }

// LastEventID returns the WHATWG "last event ID buffer", set as soon as an id field is read.
func (d *Decoder) LastEventID() string { return d.lastID }

// Truncated reports whether the stream ended inside a line or an event (discarded, per WHATWG).
func (d *Decoder) Truncated() bool { return d.truncated }

// Next decodes the next event into ev, reusing ev's storage. It returns io.EOF at the end, a
// *LimitError past the limits, or the reader's error wrapped. A line ending in CR is complete
// at once (waiting for a possible LF would delay dispatch); a following LF, even in a later
// read, is consumed as part of the same line end.
func (d *Decoder) Next(ev *Event) error {
	if d.err != nil {
		return d.err
	}
	for {
		line, ok, err := d.readLine()
		if err != nil {
			d.err = err
			return err
		}
		if !ok {
			continue
		}
		if len(line) == 0 {
			if d.dispatch(ev) {
				return nil
			}
			continue
		}
		if err := d.field(line); err != nil {
			d.err = err
			return err
		}
	}
}

// readLine returns the next complete line without its terminator, aliasing d.buf until the
// next readLine; ok is false when the caller should call again (more input was read).
func (d *Decoder) readLine() (line []byte, ok bool, err error) {
	if d.skipLF && d.pos < d.end {
		d.skipLF = false
		if d.buf[d.pos] == '\n' {
			d.pos++
		}
	}
	if !d.bomChecked {
		rest := d.buf[d.pos:d.end]
		n := min(len(rest), len(bom))
		if string(rest[:n]) == bom[:n] {
			if n < len(bom) && !d.eof {
				return nil, false, d.fill() // could still be a BOM split across reads
			}
			if n == len(bom) {
				d.pos += len(bom)
			}
		}
		d.bomChecked = true
	}
	if d.pos < d.end {
		rest := d.buf[d.pos:d.end]
		lf := d.findLF()
		var seg []byte
		if lf >= 0 {
			seg = d.buf[d.pos:lf]
		} else {
			seg = rest
		}
		if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
			line = seg[:cr]
			d.pos += cr + 1
			d.skipLF = true
			return d.checkLine(line)
		}
		if lf >= 0 {
			line = seg
			d.pos = lf + 1
			return d.checkLine(line)
		}
		if len(rest) > d.limits.MaxLine {
			return nil, false, &LimitError{What: "line", Limit: d.limits.MaxLine, Offset: d.base + int64(d.pos)}
		}
	}
	if d.eof {
		if d.pos < d.end || d.pending {
			d.truncated = true
		}
		d.pos = d.end
		return nil, false, io.EOF
	}
	return nil, false, d.fill()
}

// bom is the UTF-8 byte order mark, stripped once at the start of a stream.
const bom = "\uFEFF"

func (d *Decoder) checkLine(line []byte) ([]byte, bool, error) {
	if len(line) > d.limits.MaxLine {
		start := d.base + int64(d.pos) - int64(len(line)) - 1
		return nil, false, &LimitError{What: "line", Limit: d.limits.MaxLine, Offset: start}
	}
	return line, true, nil
}

// findLF returns the absolute index of the next '\n' at or after d.pos, or -1.
func (d *Decoder) findLF() int {
	if d.nextLF >= d.pos {
		return d.nextLF
	}
	from := max(d.pos, d.lfScanned)
	if from >= d.end {
		return -1
	}
	if i := bytes.IndexByte(d.buf[from:d.end], '\n'); i >= 0 {
		d.nextLF = from + i
		d.lfScanned = d.nextLF + 1
		return d.nextLF
	}
	d.nextLF = -1
	d.lfScanned = d.end
	return -1
}

// fill reads more input, moving unparsed bytes to the front and growing the buffer as needed.
func (d *Decoder) fill() error {
	if d.readErr != nil {
		return d.readErr
	}
	if d.aliased {
		d.unalias()
	}
	if d.pos > 0 {
		n := copy(d.buf, d.buf[d.pos:d.end])
		d.base += int64(d.pos)
		if d.nextLF >= d.pos {
			d.nextLF -= d.pos
		} else {
			d.nextLF = -1
		}
		d.lfScanned = max(d.lfScanned-d.pos, 0)
		d.pos, d.end = 0, n
	}
	if d.end == len(d.buf) {
		// readLine checked the line is within MaxLine: MaxLine+2 (line, CR, spare) suffices.
		size := min(2*len(d.buf), d.limits.MaxLine+2)
		if size <= len(d.buf) {
			size = len(d.buf) + 1
		}
		nb := make([]byte, size)
		copy(nb, d.buf[:d.end])
		d.buf = nb
	} else if d.readFilled && len(d.buf) < maxReadSize {
		// The last read filled the buffer: fewer, larger reads pay off.
		nb := make([]byte, min(2*len(d.buf), maxReadSize))
		copy(nb, d.buf[:d.end])
		d.buf = nb
	}
	// io.Reader permits reads of no data and no error, but a well-behaved one makes progress.
	for range 100 {
		free := len(d.buf) - d.end
		n, err := d.r.Read(d.buf[d.end:])
		if n < 0 || n > free {
			return fmt.Errorf("sse: read: reader returned invalid count %d", n)
		}
		d.readFilled = n == free
		d.end += n
		d.bytesRead += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				d.eof = true
				return nil
			}
			err = fmt.Errorf("sse: read at stream offset %d: %w", d.bytesRead, err)
			if n > 0 {
				// Parse what arrived first; report the error on the next fill.
				d.readErr = err
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	return fmt.Errorf("sse: read: %w", io.ErrNoProgress)
}

func (d *Decoder) field(line []byte) error {
	if line[0] == ':' {
		d.comments++
		return nil
	}
	d.pending = true
	var name, value []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	} else {
		name = line
	}
	switch string(name) {
	case "data":
		if d.aliased {
			d.unalias()
		}
		if len(d.data)+len(value) > d.limits.MaxEvent {
			// d.pos is just past the one-byte terminator (CR or LF) of this line.
			start := d.base + int64(d.pos) - int64(len(line)) - 1
			return &LimitError{What: "event", Limit: d.limits.MaxEvent, Offset: start}
		}
		if len(d.data) == 0 {
			d.alias, d.aliased = value, true
			return nil
		}
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
	case "event":
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			if string(value) != d.lastID {
				d.lastID = string(value)
			}
		}
	case "retry":
		if ms, ok := parseRetry(value); ok {
			d.retry = ms
			d.retryAll = ms
		}
	}
	return nil
}

// parseRetry accepts only a non-empty run of ASCII digits that fits a Duration in milliseconds.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const maxMs = int64(1<<63-1) / int64(time.Millisecond)
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		ms = ms*10 + int64(c-'0')
		if ms > maxMs {
			return 0, false
		}
	}
	return time.Duration(ms) * time.Millisecond, true
}

// dispatch runs the WHATWG dispatch step, reporting whether an event came (empty data: none).
func (d *Decoder) dispatch(ev *Event) bool {
	retry := d.retry
	d.retry = 0
	d.pending = false
	if d.aliased {
		ev.Data = d.alias
		d.alias, d.aliased = nil, false
	} else if len(d.data) == 0 {
		d.typ = d.typ[:0]
		return false
	} else {
		ev.Data = d.data[:len(d.data)-1]
	}
	ev.Type = d.internType()
	ev.ID = d.lastID
	ev.Retry = retry
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	return true
}

// unalias copies the pending data line into data before buf moves or a second line joins.
func (d *Decoder) unalias() {
	d.data = append(d.data, d.alias...)
	d.data = append(d.data, '\n')
	d.alias, d.aliased = nil, false
}

// internType returns the pending event type, a cached string for recent names (no allocation).
func (d *Decoder) internType() string {
	if len(d.typ) == 0 {
		return ""
	}
	for _, s := range d.types {
		if s == string(d.typ) {
			return s
		}
	}
	s := string(d.typ)
	if len(s) <= maxInternedType {
		d.types[d.typeNext] = s
		d.typeNext = (d.typeNext + 1) % typeCacheSize
	}
	return s
}
