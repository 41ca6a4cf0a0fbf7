package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The V2 encoding's cookies and header size, as hdrhistogram-go writes them.
const (
	v2EncodingCookie           = 0x1c849303 | 0x10
	v2CompressedEncodingCookie = 0x1c849304 | 0x10
	v2HeaderSize               = 40
	msToNs                     = 1e6 // the log's max value column is in units of 1e6 (hdrhistogram-go's MsToNsRatio)
)

// intervalEncoder writes interval-log lines as hdrhistogram-go's HistogramLogWriter does, but
// through one reused zlib writer at BestSpeed, not a ~1 MB BestCompression writer per histogram
// (any reader reads either level).
type intervalEncoder struct {
	zw      *zlib.Writer
	payload []byte
	zbuf    bytes.Buffer
	out     []byte
	scratch *hdrhistogram.Histogram // packed histograms are expanded into it
}

func newIntervalEncoder() *intervalEncoder {
	e := &intervalEncoder{scratch: NewHistogram()}
	e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.BestSpeed) // a valid level: no error
	return e
}

// writeInterval writes kh's line, its times in ms since the epoch, relative to baseMs.
func (e *intervalEncoder) writeInterval(w io.Writer, tag string, startMs, endMs, baseMs int64, kh *keyHistogram) error {
	h := kh.dense
	if h == nil {
		e.scratch.Reset()
		kh.packed.MergeInto(e.scratch) // the same geometry: nothing dropped
		h = e.scratch
	}
	snap := h.Export()
	counts := snap.Counts
	limit := len(counts)
	for limit > 1 && counts[limit-1] == 0 {
		limit--
	}
	// Counts as ZigZag LEB128, a run of zeros as its negated length.
	e.payload = e.payload[:0]
	for i := 0; i < limit; {
		c := counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		e.payload = appendZigZag(e.payload, c)
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	var header [v2HeaderSize]byte
	binary.BigEndian.PutUint32(header[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(header[4:], uint32(len(e.payload)))
	binary.BigEndian.PutUint32(header[8:], 0) // normalizing index offset: counts are unrotated
	binary.BigEndian.PutUint32(header[12:], uint32(int32(snap.SignificantFigures)))
	binary.BigEndian.PutUint64(header[16:], uint64(snap.LowestTrackableValue))
	binary.BigEndian.PutUint64(header[24:], uint64(snap.HighestTrackableValue))
	binary.BigEndian.PutUint64(header[32:], math.Float64bits(ratio))

	e.zbuf.Reset()
	e.zbuf.Write(make([]byte, 8)) // room for the compressed cookie and length
	e.zw.Reset(&e.zbuf)
	if _, err := e.zw.Write(header[:]); err != nil {
		return err
	}
	if _, err := e.zw.Write(e.payload); err != nil {
		return err
	}
	if err := e.zw.Close(); err != nil {
		return err
	}
	compressed := e.zbuf.Bytes()
	binary.BigEndian.PutUint32(compressed[0:], v2CompressedEncodingCookie)
	binary.BigEndian.PutUint32(compressed[4:], uint32(len(compressed)-8))

	e.out = e.out[:0]
	e.out = fmt.Appendf(e.out, "Tag=%s,%f,%f,%f,", tag, float64(startMs-baseMs)/1000, float64(endMs-startMs)/1000, float64(maxOf(h, counts, limit))/msToNs)
	e.out = base64.StdEncoding.AppendEncode(e.out, compressed)
	e.out = append(e.out, '\n')
	_, err := w.Write(e.out)
	return err
}

// appendZigZag appends v in HdrHistogram's ZigZag LEB128-64b9B.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}

// maxOf is h.Max() from its counts up to limit (the last non-zero index + 1): h.Max() walks
// every bucket, more than half the cost of writing a dense histogram, while in streambench's
// geometry (2,048 sub-buckets, half of them per bucket after the first) the index gives it.
func maxOf(h *hdrhistogram.Histogram, counts []int64, limit int) int64 {
	if h.LowestTrackableValue() != lowestMicros || h.SignificantFigures() != sigFigs || limit == 0 || counts[limit-1] == 0 {
		return h.Max()
	}
	const halfMagnitude, half = 10, 1 << 10 // the sub-bucket count of 2,048 for 3 digits (2 × 10³), halved
	idx := int64(limit - 1)
	bucket, sub := int64(0), idx
	if idx >= half {
		bucket, sub = idx>>halfMagnitude-1, idx&(half-1)+half
	}
	return sub<<bucket + 1<<bucket - 1
}
