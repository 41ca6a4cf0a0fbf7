package endpoint

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
)

// TraceRow is one request of a production trace (load --trace): when it was sent, from the
// trace's first request, and its lengths in tokens. Blocks are Mooncake's hash_ids: the
// prompt's TraceBlockTokens-token blocks, the same id the same text, so requests that share
// leading ids share a prefix a server's KV cache can reuse.
type TraceRow struct {
	At            time.Duration
	Input, Output int
	Blocks        []uint64
}

// TraceBlockTokens is the length of a Mooncake hash_ids block, in tokens.
const TraceBlockTokens = 512

// The trace formats LoadTrace reads.
const (
	// Mooncake is JSON Lines of {"timestamp": MS, "input_length": N, "output_length": N, "hash_ids": [ID, …]}.
	Mooncake = "mooncake"
	// Azure is the Azure LLM inference trace's CSV: TIMESTAMP, ContextTokens and GeneratedTokens columns.
	Azure = "azure"
)

// LoadTrace reads a trace in format (Mooncake, Azure, or "": Mooncake when the file begins with
// '{'), sorted by time, each At from the first request; lengths of 0 are sent as 1.
func LoadTrace(path, format string) ([]TraceRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if format == "" {
		format = Azure
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			format = Mooncake
		}
	}
	var rows []TraceRow
	switch format {
	case Mooncake:
		rows, err = mooncakeRows(path, data)
	case Azure:
		rows, err = azureRows(path, data)
	default:
		return nil, fmt.Errorf("trace format %q: want %s or %s", format, Mooncake, Azure)
	}
	if err == nil && len(rows) == 0 {
		err = fmt.Errorf("%s: no request in the trace", path)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(rows, func(a, b TraceRow) int { return cmp.Compare(a.At, b.At) })
	first := rows[0].At
	for i := range rows {
		rows[i].At -= first
	}
	return rows, nil
}

func mooncakeRows(path string, data []byte) ([]TraceRow, error) {
	var rows []TraceRow
	for i, line := range bytes.Split(data, []byte("\n")) {
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		var rec struct {
			Timestamp *float64 `json:"timestamp"`
			Input     int      `json:"input_length"`
			Output    int      `json:"output_length"`
			HashIDs   []uint64 `json:"hash_ids"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Timestamp == nil || rec.Input < 0 || rec.Output < 0 {
			return nil, fmt.Errorf(`%s:%d: %s: want {"timestamp": MS, "input_length": N, "output_length": N, "hash_ids": [ID, …]}`, path, i+1, protocol.Quote(string(line), 60))
		}
		rows = append(rows, TraceRow{At: time.Duration(*rec.Timestamp * float64(time.Millisecond)), Input: max(rec.Input, 1), Output: max(rec.Output, 1), Blocks: rec.HashIDs})
	}
	return rows, nil
}

func azureRows(path string, data []byte) ([]TraceRow, error) {
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i + 1 // 0: no such column
	}
	ts, in, out := col["TIMESTAMP"]-1, col["ContextTokens"]-1, col["GeneratedTokens"]-1
	if err != nil || ts < 0 || in < 0 || out < 0 {
		return nil, fmt.Errorf("%s:1: want a header with the columns TIMESTAMP, ContextTokens and GeneratedTokens (an Azure LLM inference trace) or a Mooncake JSON line", path)
	}
	var rows []TraceRow
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		at, err := time.Parse("2006-01-02 15:04:05.999999999Z07:00", rec[ts])
		if err != nil {
			at, err = time.Parse(time.DateTime+".999999999", rec[ts])
		}
		n, err1 := strconv.Atoi(rec[in])
		m, err2 := strconv.Atoi(rec[out])
		if line, _ := r.FieldPos(0); err != nil || err1 != nil || err2 != nil || n < 0 || m < 0 {
			return nil, fmt.Errorf("%s:%d: %s: want TIMESTAMP as 2023-11-16 18:15:46.6805900 and token counts", path, line, protocol.Quote(strings.Join(rec, ","), 60))
		}
		rows = append(rows, TraceRow{At: time.Duration(at.UnixNano()), Input: max(n, 1), Output: max(m, 1)})
	}
}
