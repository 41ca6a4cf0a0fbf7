package measure

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// RecordsFile is the run's per-request records, one JSON object a line, written as requests end.
const RecordsFile = "records.jsonl"

// MaxRecordsBytes bounds records.jsonl: about a million records; the rest are counted, not kept.
const MaxRecordsBytes = 256 << 20

// recordsQueue is how many records wait for the disk before more are left out (a few MiB).
const recordsQueue = 8192

// Record is one request of a run: a session, or one turn of a conversation (Turn from 1).
// Latencies count from Start, the request's intended start; 0 means not measured.
type Record struct {
	Session      string    `json:"session"`
	Turn         int       `json:"turn,omitempty"`
	Scenario     string    `json:"scenario"`
	Dialect      string    `json:"dialect"`
	Target       string    `json:"target,omitempty"`
	Start        time.Time `json:"start"`
	TTFTMs       float64   `json:"ttft_ms,omitempty"`
	TTFCMs       float64   `json:"ttfc_ms,omitempty"`
	E2EMs        float64   `json:"e2e_ms,omitempty"`
	ITLMs        float64   `json:"itl_ms,omitempty"` // the request's mean gap between output tokens (its tpot)
	OutputTokens int64     `json:"output_tokens"`
	Outcome      Outcome   `json:"outcome"`
	Rules        []string  `json:"rules,omitempty"`  // the rules it broke
	Warmup       bool      `json:"warmup,omitempty"` // started in the warm-up: not in the histograms
}

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// RecordsInfo is what became of a run's records (summary.json "records").
type RecordsInfo struct {
	Written int64 `json:"written"`
	// LeftOut counts the records not written, and Why says why (the file's bound, the disk
	// falling behind, or a write error).
	LeftOut int64  `json:"left_out,omitempty"`
	Why     string `json:"why,omitempty"`
}

// RecordsWriter writes a run's records into RecordsFile as they come, from one goroutine:
// Add never waits for the disk. Records added before Open wait in its queue.
type RecordsWriter struct {
	queue   chan []byte
	open    chan string
	to      io.Writer // a stream instead of the file (NewRecordsStream)
	done    chan struct{}
	closing sync.Once
	leftOut atomic.Int64
	full    atomic.Bool // the queue was full once: the disk fell behind
	max     int64       // the file's bound, MaxRecordsBytes
	info    RecordsInfo
}

// NewRecordsWriter starts a writer whose file is opened by Open.
func NewRecordsWriter() *RecordsWriter { return newRecordsWriter(nil, MaxRecordsBytes) }

func newRecordsWriter(to io.Writer, max int64) *RecordsWriter {
	w := &RecordsWriter{queue: make(chan []byte, recordsQueue), open: make(chan string, 1), done: make(chan struct{}),
		max: max, to: to}
	go w.write()
	return w
}

// NewRecordsStream writes the records to w as they come (load --out -: stdout), unbounded: a
// reader gone (a closed pipe) leaves the rest counted as left out, and the run goes on.
func NewRecordsStream(to io.Writer) *RecordsWriter {
	w := newRecordsWriter(to, math.MaxInt64)
	w.Open("-") // no directory: the stream is open already
	return w
}

// Open names the run's directory, once; later calls do nothing.
func (w *RecordsWriter) Open(dir string) {
	select {
	case w.open <- dir:
	default:
	}
}

// Record queues r (safe for concurrent use; r is not kept): a loadgen.RecordOutput.
func (w *RecordsWriter) Record(r *Record) {
	line, err := json.Marshal(r)
	if err != nil {
		w.leftOut.Add(1)
		return
	}
	select {
	case w.queue <- append(line, '\n'):
	default:
		w.full.Store(true)
		w.leftOut.Add(1)
	}
}

// Close writes what is queued, closes the file and says what became of the records. Nothing
// may be added after; a writer never opened writes nothing; a nil one is none.
func (w *RecordsWriter) Close() RecordsInfo {
	if w == nil {
		return RecordsInfo{}
	}
	w.closing.Do(func() {
		w.Open("")
		close(w.queue)
	})
	<-w.done
	info := w.info
	info.LeftOut += w.leftOut.Load()
	if w.full.Load() {
		info.Why = joinWhy(info.Why, map[bool]string{false: "the disk fell behind", true: "the stream's reader fell behind"}[w.to != nil])
	}
	return info
}

func (w *RecordsWriter) write() {
	defer close(w.done)
	dir := <-w.open
	if dir == "" {
		w.drain("no results directory")
		return
	}
	var f io.WriteCloser = nopCloser{w.to}
	if w.to == nil {
		var err error
		if f, err = os.OpenFile(filepath.Join(dir, RecordsFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			w.drain(err.Error())
			return
		}
	}
	buf := bufio.NewWriterSize(f, 64<<10)
	var size int64
	for line := range w.queue {
		if size += int64(len(line)); size > w.max {
			w.info.LeftOut++
			w.info.Why = fmt.Sprintf("%s reached its bound, %d MiB", RecordsFile, w.max>>20)
			continue
		}
		if _, err := buf.Write(line); err != nil {
			w.info.LeftOut++
			w.drain(err.Error())
			break
		}
		w.info.Written++
		if w.to != nil && len(w.queue) == 0 { // the stream's reader (a pipe) sees each record soon
			if err := buf.Flush(); err != nil {
				w.drain(err.Error())
				break
			}
		}
	}
	if err := buf.Flush(); err != nil {
		w.info.Why = joinWhy(w.info.Why, err.Error())
	}
	if err := f.Close(); err != nil {
		w.info.Why = joinWhy(w.info.Why, err.Error())
	}
}

// drain counts every record still to come as left out, for why.
func (w *RecordsWriter) drain(why string) {
	for range w.queue {
		w.info.LeftOut++
	}
	w.info.Why = joinWhy(w.info.Why, why)
}

func joinWhy(a, b string) string {
	if a == "" || a == b {
		return b
	}
	return a + "; " + b
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
