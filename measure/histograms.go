// Package measure is the data model of a run's results, as the load generator saves them and
// every other command reads them back.
package measure

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Key identifies one histogram: a metric for one scenario on one dialect.
type Key struct {
	Metric   Metric `json:"metric"`
	Scenario string `json:"scenario"`
	Dialect  string `json:"dialect"`
}

// String is the hlog tag form "metric/scenario/dialect".
func (k Key) String() string { return string(k.Metric) + "/" + k.Scenario + "/" + k.Dialect }

// Compare orders keys by metric (report order), then scenario, then dialect.
func (k Key) Compare(o Key) int {
	return cmp.Or(cmp.Compare(k.Metric.Rank(), o.Metric.Rank()), cmp.Compare(k.Metric, o.Metric),
		cmp.Compare(k.Scenario, o.Scenario), cmp.Compare(k.Dialect, o.Dialect))
}

// tagPart escapes as %XX what an hlog tag cannot carry (commas, whitespace, its '/').
func tagPart(s string) string {
	if !strings.ContainsAny(s, "%/, \t\r\n") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%', '/', ',', ' ', '\t', '\r', '\n':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (k Key) tag() string {
	return tagPart(string(k.Metric)) + "/" + tagPart(k.Scenario) + "/" + tagPart(k.Dialect)
}

// parseTag is the inverse of Key.tag.
func parseTag(tag string) (Key, error) {
	parts := strings.Split(tag, "/")
	if len(parts) != 3 || parts[0] == "" {
		return Key{}, fmt.Errorf("tag %q: want metric/scenario/dialect", tag)
	}
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil {
			return Key{}, fmt.Errorf("tag %q: %w", tag, err)
		}
		parts[i] = u
	}
	return Key{Metric: Metric(parts[0]), Scenario: parts[1], Dialect: parts[2]}, nil
}

const (
	lowestMicros  = 1
	highestMicros = int64(time.Hour / time.Microsecond)
	sigFigs       = 3
)

// NewHistogram returns an empty histogram of the range every streambench histogram uses.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(lowestMicros, highestMicros, sigFigs)
}

// denseAfter is when a key goes from packed (a few KB, ~10× slower to record) to dense (188 KB):
// most of a worker's hundreds of keys hold few samples.
const denseAfter = 1024

// keyHistogram is one key's histogram: packed while it holds few samples, then dense.
type keyHistogram struct {
	packed *hdrhistogram.PackedHistogram // nil once dense
	dense  *hdrhistogram.Histogram
}

func newKeyHistogram(k Key) *keyHistogram {
	p := hdrhistogram.NewPacked(lowestMicros, highestMicros, sigFigs)
	p.SetTag(k.String())
	return &keyHistogram{packed: p}
}

// histogramForm is what a key's histogram is read by, dense or packed.
type histogramForm interface {
	histogramStats
	EndTimeMs() int64
	SetEndTimeMs(int64)
}

func (kh *keyHistogram) form() histogramForm {
	if kh.dense != nil {
		return kh.dense
	}
	return kh.packed
}

// densify switches to the dense form once the key is busy (or when forced).
func (kh *keyHistogram) densify(force bool) {
	if kh.dense != nil || (!force && kh.packed.TotalCount() < denseAfter) {
		return
	}
	kh.dense, kh.packed = kh.toDense(), nil // same geometry: nothing is dropped
}

func (kh *keyHistogram) recordN(v, n int64) error {
	if kh.dense != nil {
		return kh.dense.RecordValues(v, n)
	}
	err := kh.packed.RecordValues(v, n)
	kh.densify(false)
	return err
}

func (kh *keyHistogram) merge(from *keyHistogram) (dropped int64) {
	switch {
	case from.dense != nil:
		kh.densify(true)
		dropped = kh.dense.Merge(from.dense)
	case kh.dense != nil:
		dropped = from.packed.MergeInto(kh.dense)
	default:
		dropped = kh.packed.Merge(from.packed)
		kh.densify(false)
	}
	return dropped
}

// toDense returns the dense form: the histogram itself when dense, else a copy.
func (kh *keyHistogram) toDense() *hdrhistogram.Histogram {
	if kh.dense != nil {
		return kh.dense
	}
	d := NewHistogram()
	d.SetTag(kh.packed.Tag())
	d.SetStartTimeMs(kh.packed.StartTimeMs())
	d.SetEndTimeMs(kh.packed.EndTimeMs())
	kh.packed.MergeInto(d)
	return d
}

// Histograms is a set of HdrHistograms keyed by Key, recorded in microseconds. Not safe for
// concurrent use: keep one per worker and merge them.
type Histograms struct {
	byKey map[Key]*keyHistogram
}

// NewHistograms returns an empty set; histograms are created on first Record.
func NewHistograms() *Histograms {
	return &Histograms{byKey: make(map[Key]*keyHistogram)}
}

// ErrOutOfRange is returned by Record for a negative duration or one over an hour.
var ErrOutOfRange = errors.New("duration outside the histogram range (0 .. 1h)")

// Record adds d to k's histogram; out of range is an ErrOutOfRange for the caller to count.
func (h *Histograms) Record(k Key, d time.Duration) error { return h.RecordN(k, d, 1) }

// RecordN adds n values d to k's histogram at once, as Record; n <= 0 records nothing.
func (h *Histograms) RecordN(k Key, d time.Duration, n int64) error {
	r := h.For(k)
	return r.RecordN(d, n)
}

// For returns a recorder into k's histogram that looks k up once, on its first value, for a
// caller recording many values of one key: use it while nothing else records into h.
func (h *Histograms) For(k Key) KeyRecorder { return KeyRecorder{h: h, k: k} }

// KeyRecorder records into one key's histogram of a Histograms (see For).
type KeyRecorder struct {
	h  *Histograms
	k  Key
	kh *keyHistogram // nil until the first value in range
}

// RecordN is Histograms.RecordN for r's key.
func (r *KeyRecorder) RecordN(d time.Duration, n int64) error {
	if n <= 0 {
		return nil
	}
	if d < 0 || d > time.Hour {
		return fmt.Errorf("record %s = %v: %w", r.k, d, ErrOutOfRange)
	}
	if r.kh == nil {
		r.kh = r.h.key(r.k)
	}
	if err := r.kh.recordN(d.Microseconds(), n); err != nil {
		return fmt.Errorf("record %s = %v: %w: %w", r.k, d, ErrOutOfRange, err)
	}
	return nil
}

// Merge adds every histogram of from into h and returns how many values fell outside the range.
func (h *Histograms) Merge(from *Histograms) (dropped int64) {
	if from == nil {
		return 0
	}
	for k, src := range from.byKey {
		dropped += h.key(k).merge(src)
	}
	return dropped
}

// key returns k's histogram, made empty if it has none.
func (h *Histograms) key(k Key) *keyHistogram {
	kh := h.byKey[k]
	if kh == nil {
		kh = newKeyHistogram(k)
		h.byKey[k] = kh
	}
	return kh
}

// Merged merges the histograms whose key keep accepts (nil: all) into a new one, and counts them.
func (h *Histograms) Merged(keep func(Key) bool) (merged *hdrhistogram.Histogram, n int) {
	merged = NewHistogram()
	if h == nil {
		return merged, 0
	}
	for _, k := range h.Keys() {
		if keep != nil && !keep(k) {
			continue
		}
		kh := h.byKey[k]
		if kh.dense != nil {
			merged.Merge(kh.dense)
		} else {
			kh.packed.MergeInto(merged)
		}
		n++
	}
	return merged, n
}

// Get returns k's histogram (nil: none), read-only and not for a hot path.
func (h *Histograms) Get(k Key) *hdrhistogram.Histogram {
	kh := h.byKey[k]
	if kh == nil {
		return nil
	}
	return kh.toDense()
}

// Count is how many values k's histogram holds (0 when absent), without building it.
func (h *Histograms) Count(k Key) int64 {
	if kh := h.byKey[k]; kh != nil {
		return kh.form().TotalCount()
	}
	return 0
}

// Set stores a copy of hist under k and returns how many of its values fell outside the range.
func (h *Histograms) Set(k Key, hist *hdrhistogram.Histogram) (dropped int64) {
	kh := newKeyHistogram(k)
	kh.densify(true)
	dropped = kh.dense.Merge(hist)
	kh.dense.SetStartTimeMs(hist.StartTimeMs())
	kh.dense.SetEndTimeMs(hist.EndTimeMs())
	h.byKey[k] = kh
	return dropped
}

// Keys returns every key with a histogram, sorted by Key.Compare.
func (h *Histograms) Keys() []Key {
	return slices.SortedFunc(maps.Keys(h.byKey), Key.Compare)
}

// Len is the number of histograms in the set.
func (h *Histograms) Len() int { return len(h.byKey) }

// WriteLog writes the set as an HdrHistogram interval log, an interval per key.
func (h *Histograms) WriteLog(w io.Writer, start time.Time) error {
	lw := hdrhistogram.NewHistogramLogWriter(w)
	// The log format has no sign for times before 1970 (a zero time.Time): clamp to the epoch.
	startMs := max(start.UnixMilli(), 0)
	if err := cmp.Or(lw.OutputLogFormatVersion(), lw.OutputStartTime(startMs), lw.OutputBaseTime(startMs)); err != nil {
		return fmt.Errorf("write hlog header: %w", err)
	}
	enc := newIntervalEncoder()
	for _, k := range h.Keys() {
		kh := h.byKey[k]
		if err := enc.writeInterval(w, k.tag(), startMs, max(kh.form().EndTimeMs(), startMs), startMs, kh); err != nil {
			return fmt.Errorf("write hlog: key %s: %w", k, err)
		}
	}
	return nil
}

// ReadLog reads an interval log tagged as WriteLog tags it, decoding packed (not the library
// reader's 188 KB a key) so that a log takes memory in proportion to its values.
func ReadLog(r io.Reader) (*Histograms, error) {
	br := bufio.NewReader(r)
	out := NewHistograms()
	var times logTimes
	for n, intervals := 1, 0; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if le := (*LimitError)(nil); errors.As(rerr, &le) {
			return nil, rerr
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", n, rerr)
		}
		text := bytes.TrimRight(line, "\r\n")
		switch {
		case len(bytes.TrimSpace(text)) == 0, bytes.HasPrefix(text, []byte(`"StartTimestamp"`)):
		case text[0] == '#':
			times.header(text)
		case logInterval.Match(text):
			intervals++
			if err := out.readInterval(text, &times); err != nil {
				return nil, fmt.Errorf("interval %d: %w", intervals, err)
			}
		default:
			return nil, fmt.Errorf("line %d is not an hlog interval or comment: %s", n, quoteStart(text))
		}
		if rerr != nil {
			return out, nil
		}
	}
}

// logInterval is an interval line: an optional tag, start, length and max, the histogram.
var logInterval = regexp.MustCompile(`^(Tag=[^,]*,)?[0-9]+(\.[0-9]*)?,[0-9]+(\.[0-9]*)?,[0-9]+(\.[0-9]*)?,HIST[A-Za-z0-9+/=]+$`)

// logTimes are a log's start and base times, read as hdrhistogram's reader reads them.
type logTimes struct {
	start, base             float64
	sawStart, sawBase, read bool
}

var logTimeHeader = regexp.MustCompile(`^#\[(StartTime|BaseTime): ([\d.]*)`)

func (lt *logTimes) header(line []byte) {
	m := logTimeHeader.FindSubmatch(line)
	if m == nil {
		return
	}
	v, _ := strconv.ParseFloat(string(m[2]), 64)
	if string(m[1]) == "StartTime" {
		lt.start, lt.sawStart = v, true
	} else {
		lt.base, lt.sawBase = v, true
	}
}

// endMs is when an interval that starts at ts and lasts length ended, in ms since the epoch.
func (lt *logTimes) endMs(ts, length float64) int64 {
	if !lt.read {
		lt.read = true
		if !lt.sawStart {
			lt.start = ts
		}
		if !lt.sawBase && ts < lt.start-365*24*3600 { // times relative to the start, not absolute
			lt.base = lt.start
		}
	}
	return int64((ts + lt.base + length) * 1000)
}

// readInterval adds one interval line (logInterval) to h.
func (h *Histograms) readInterval(line []byte, times *logTimes) error {
	var tag string
	if rest, ok := bytes.CutPrefix(line, []byte("Tag=")); ok {
		comma := bytes.IndexByte(rest, ',')
		tag, line = string(rest[:comma]), rest[comma+1:]
	}
	f := bytes.SplitN(line, []byte(","), 4) // start, length, max, histogram
	ts, _ := strconv.ParseFloat(string(f[0]), 64)
	length, _ := strconv.ParseFloat(string(f[1]), 64)
	end := times.endMs(ts, length)
	k, err := parseTag(tag)
	if err != nil {
		return err
	}
	p, err := hdrhistogram.DecodePacked(f[3])
	if err != nil {
		return err
	}
	kh := h.key(k)
	if dropped := kh.merge(&keyHistogram{packed: p}); dropped > 0 {
		return fmt.Errorf("%s: %d values outside 1µs..1h", k, dropped)
	}
	form := kh.form()
	form.SetEndTimeMs(max(form.EndTimeMs(), end))
	return nil
}

// quoteStart quotes the first bytes of b, for an error.
func quoteStart(b []byte) string {
	const most = 40
	if len(b) > most {
		return fmt.Sprintf("%q…", b[:most])
	}
	return fmt.Sprintf("%q", b)
}
