package measure

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// File names inside a run directory.
const (
	SummaryFile    = "summary.json"
	HistogramsFile = "histograms.hlog"
	TimelineFile   = "timeline.csv"
	SamplesFile    = "violations.jsonl"
)

var timelineHeader = []string{"second", "active", "started", "completed", "frames", "errors", "violations"}

// WriteRun writes r into dir, each file synced and renamed into place (no reader sees half a
// file), summary.json last (so it comes with the other files of its write).
func WriteRun(dir string, r *Run) error {
	if r == nil {
		return errors.New("write run: nil run")
	}
	s := r.Summary
	if len(s.Metrics) == 0 {
		s.Metrics = Summarize(cmp.Or(r.Histograms, NewHistograms()))
	}
	if len(s.Overall) == 0 {
		s.Overall = SummarizeOverall(r.Histograms)
	}
	return writeRun(dir, r, &s, true)
}

// WriteSnapshot writes r, a run still going, as WriteRun does but cheaper, as it repeats every
// few seconds: no metrics in summary.json, no sync (it survives a killed process, not a crash).
func WriteSnapshot(dir string, r *Run) error {
	if r == nil {
		return errors.New("write snapshot: nil run")
	}
	s := r.Summary
	s.Incomplete, s.Metrics, s.Overall = true, nil, nil
	return writeRun(dir, r, &s, false)
}

// writeRun writes r's files with summary s; a new directory is renamed into place whole.
func writeRun(dir string, r *Run, s *Summary, sync bool) error {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return writeNewRun(dir, r, s, sync)
	}
	return writeRunFiles(dir, r, s, sync)
}

// writeNewRun is writeRun for a directory that does not exist (yet: another writer may make it).
func writeNewRun(dir string, r *Run, s *Summary, sync bool) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	// MkdirTemp makes the directory private; results are meant to be shared and published.
	err = os.Chmod(tmp, 0o755)
	if err == nil {
		err = writeRunFiles(tmp, r, s, sync)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
		if err != nil {
			if _, serr := os.Stat(dir); serr == nil {
				_ = os.RemoveAll(tmp)
				return writeRunFiles(dir, r, s, sync)
			}
		}
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("write run %s: %w", dir, err)
	}
	return nil
}

func writeRunFiles(dir string, r *Run, s *Summary, sync bool) error {
	s.Schema = SchemaVersion
	summary, err := MarshalSummary(s)
	if err != nil {
		return fmt.Errorf("write run: %w", err)
	}
	for _, f := range []struct {
		name   string
		encode func(*bytes.Buffer) error
	}{
		{HistogramsFile, func(b *bytes.Buffer) error { return cmp.Or(r.Histograms, NewHistograms()).WriteLog(b, s.Started) }},
		{TimelineFile, func(b *bytes.Buffer) error {
			cw := csv.NewWriter(b)
			_ = cw.Write(timelineHeader)
			for _, p := range r.Timeline {
				_ = cw.Write([]string{strconv.Itoa(p.Second), i64(p.Active), i64(p.Started), i64(p.Completed),
					i64(p.Frames), i64(p.Errors), i64(p.Violations)})
			}
			cw.Flush()
			return cw.Error()
		}},
		{SamplesFile, func(b *bytes.Buffer) error {
			enc := json.NewEncoder(b)
			enc.SetEscapeHTML(false)
			for i := range r.Samples {
				if err := enc.Encode(&r.Samples[i]); err != nil {
					return fmt.Errorf("sample %d: %w", i+1, err)
				}
			}
			return nil
		}},
	} {
		var buf bytes.Buffer
		if err := f.encode(&buf); err != nil {
			return fmt.Errorf("write run: %s: %w", f.name, err)
		}
		if err := writeFile(dir, f.name, buf.Bytes(), sync); err != nil {
			return err
		}
	}
	return writeFile(dir, SummaryFile, summary, sync)
}

// MarshalSummary is summary.json's exact encoding: indented, HTML not escaped, newline-terminated.
func MarshalSummary(s *Summary) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", SummaryFile, err)
	}
	return buf.Bytes(), nil
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// writeFile writes data to dir/name through a temporary file and a rename.
func writeFile(dir, name string, data []byte, sync bool) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	// CreateTemp makes the file private; results are meant to be shared and published.
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	return nil
}

// ReadRun reads a run directory; only summary.json is required. Errors name file and line.
func ReadRun(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run directory %s: not a directory", dir)
	}
	r := &Run{}
	s, err := ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, err
	}
	r.Summary = *s

	if r.Histograms, err = readHistograms(dir, s); err != nil {
		return nil, err
	}
	if s.Incomplete && len(s.Metrics) == 0 {
		r.Summary.Metrics = Summarize(r.Histograms) // a snapshot's (WriteSnapshot)
	}
	if len(r.Summary.Overall) == 0 && r.Histograms.Len() > 0 {
		r.Summary.Overall = SummarizeOverall(r.Histograms)
	}
	if err := cmp.Or(readOptional(dir, TimelineFile, r.readTimeline), readOptional(dir, SamplesFile, r.readSamples)); err != nil {
		return nil, err
	}
	return r, nil
}

// readHistograms reads dir's histograms.hlog (empty when missing) and checks it against s.
func readHistograms(dir string, s *Summary) (*Histograms, error) {
	h := NewHistograms()
	err := readOptional(dir, HistogramsFile, func(f io.Reader) (err error) {
		if h, err = ReadLog(f); err != nil {
			return err
		}
		return checkHistograms(s, h)
	})
	return h, err
}

// checkHistograms checks that h holds what s has figures for: a cut or alien hlog would be
// judged as if its lacks were never recorded.
func checkHistograms(s *Summary, h *Histograms) error {
	var missing, differ []string
	with := 0
	for _, m := range s.Metrics {
		if m.Count == 0 {
			continue
		}
		with++
		switch n := h.Count(m.Key); {
		case n == 0:
			missing = append(missing, m.Key.String())
		case n != m.Count:
			differ = append(differ, fmt.Sprintf("%s (%d values, %s says %d)", m.Key, n, SummaryFile, m.Count))
		}
	}
	list := func(keys []string) string {
		const most = 5
		if len(keys) > most {
			return strings.Join(keys[:most], ", ") + fmt.Sprintf(" and %d more", len(keys)-most)
		}
		return strings.Join(keys, ", ")
	}
	switch {
	case len(missing) > 0:
		return fmt.Errorf("%d of the %d histograms %s has figures for are missing: %s", len(missing), with, SummaryFile, list(missing))
	case len(differ) > 0:
		return fmt.Errorf("%d of the %d histograms %s has figures for disagree with it: %s", len(differ), with, SummaryFile, list(differ))
	}
	return nil
}

// ReadSummary reads and validates one summary.json.
func ReadSummary(path string) (*Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read summary: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(&capReader{r: f, left: readLimits[SummaryFile].bytes, limits: readLimits[SummaryFile]})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var s Summary
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		lineAt := func(offset int64) int { return 1 + bytes.Count(data[:offset], []byte("\n")) }
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s:%d: %w", path, lineAt(se.Offset), err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s:%d: field %s: %w", path, lineAt(te.Offset), te.Field, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s: schema version %d, this streambench reads version %d", path, s.Schema, SchemaVersion)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// readLimit bounds the reading of one file of a run directory: its size and, for a file of
// lines, a line's length. Each is many times what a run writes, so only a file that is not a
// run's (/dev/zero, a runaway write) reaches it, as an error rather than all the memory there is.
type readLimit struct {
	bytes int64
	line  int // 0: not a file of lines
}

var readLimits = map[string]readLimit{
	SummaryFile:    {bytes: 64 << 20},
	HistogramsFile: {bytes: 256 << 20, line: 16 << 20},
	SamplesFile:    {bytes: 256 << 20, line: 16 << 20},
	TimelineFile:   {bytes: 64 << 20, line: 64 << 10},
	RepeatsFile:    {bytes: 16 << 20},
}

// LimitError is a run's file over a read limit (its size, or a line's length).
type LimitError struct{ msg string }

func (e *LimitError) Error() string { return e.msg }

// capReader reads r up to its limits, then fails saying which one the file exceeds.
type capReader struct {
	r      io.Reader
	left   int64
	limits readLimit
	run    int // bytes since the last newline, for the line limit
	line   int // newlines seen
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the limit: only the file's end may follow.
		var one [1]byte
		if n, err := c.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, &LimitError{fmt.Sprintf("larger than %s, the most a run's file can be", sizeText(c.limits.bytes))}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.limits.line > 0 {
		for i, b := range p[:n] {
			if b == '\n' {
				c.run = 0
				c.line++
				continue
			}
			if c.run++; c.run > c.limits.line {
				return i, &LimitError{fmt.Sprintf("line %d is longer than %s, the most a line of it can be", c.line+1, sizeText(int64(c.limits.line)))}
			}
		}
	}
	return n, err
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func readOptional(dir, name string, read func(io.Reader) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	lim := readLimits[name]
	if err := read(bufio.NewReader(&capReader{r: f, left: lim.bytes, limits: lim})); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// readTimeline reads timeline.csv into r.Timeline.
func (r *Run) readTimeline(f io.Reader) error {
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = len(timelineHeader)
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	if strings.Join(header, ",") != strings.Join(timelineHeader, ",") {
		return fmt.Errorf("line 1: header %q, want %q", strings.Join(header, ","), strings.Join(timelineHeader, ","))
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line, _ := cr.FieldPos(0)
		var v [7]int64
		for i, field := range rec {
			v[i], err = strconv.ParseInt(field, 10, 64)
			if err != nil {
				return fmt.Errorf("line %d: column %s: %q is not an integer", line, timelineHeader[i], field)
			}
		}
		r.Timeline = append(r.Timeline, TimelinePoint{Second: int(v[0]), Active: v[1], Started: v[2], Completed: v[3],
			Frames: v[4], Errors: v[5], Violations: v[6]})
	}
}

// readSamples reads violations.jsonl into r.Samples.
func (r *Run) readSamples(f io.Reader) error {
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		text, err := br.ReadBytes('\n')
		if le := (*LimitError)(nil); errors.As(err, &le) {
			return err
		}
		if len(bytes.TrimSpace(text)) > 0 {
			var s ViolationSample
			if jerr := json.Unmarshal(text, &s); jerr != nil {
				return fmt.Errorf("line %d: %w", line, jerr)
			}
			r.Samples = append(r.Samples, s)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
	}
}

// RunDir is where a run's results go under out: out/RUN-ID, and out/RUN-ID/shard-I for a
// shard (the shards of a run on a shared volume must not write over each other).
func RunDir(out string, s *Summary) string {
	dir := filepath.Join(out, s.RunID)
	if s.Shard != nil {
		dir = filepath.Join(dir, fmt.Sprintf("shard-%d", s.Shard.Index))
	}
	return dir
}

// SnapshotWriter returns a loadgen.SnapshotFunc writing each snapshot into RunDir(out, …), where
// the final results go too, and calling first(dir) (if not nil) once, after the first write.
func SnapshotWriter(out string, first func(dir string)) func(*Run) error {
	var once sync.Once
	return func(r *Run) error {
		dir := RunDir(out, &r.Summary)
		if err := WriteSnapshot(dir, r); err != nil {
			return err
		}
		if first != nil {
			once.Do(func() { first(dir) })
		}
		return nil
	}
}
