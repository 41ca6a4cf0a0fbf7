package selfbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// TestAbuseUnknownPart: a part name that does not exist is refused before anything runs, with
// the names that do.
func TestAbuseUnknownPart(t *testing.T) {
	t.Parallel()
	_, err := Abuse(context.Background(), Options{Parts: []string{"abort-storm", "hostile"}})
	if err == nil || !strings.Contains(err.Error(), `unknown part "hostile"`) || !strings.Contains(err.Error(), "abort-storm, stalled-readers") {
		t.Errorf("error %v: want it to name the unknown part and the known ones", err)
	}
}

// TestAbuseNotesOnce: each part notes its own load and steal when several run; a part run alone
// leaves them to the whole run's notes, so they are not printed twice.
func TestAbuseNotesOnce(t *testing.T) {
	t.Parallel()
	part := func(name string) Measurement {
		return Measurement{name, "a part", func(context.Context, Options) (*Report, error) {
			rep := &Report{Command: name}
			rep.note("%s's own note", name)
			return rep, nil
		}}
	}
	parts := []Measurement{part("one"), part("two")}
	count := func(rep *Report, sub string) (n int) {
		for _, note := range rep.Notes {
			if strings.Contains(note, sub) {
				n++
			}
		}
		return n
	}
	rep, err := abuse(context.Background(), Options{Parts: []string{"two"}}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if count(rep, "load average") != 0 || count(rep, "two: two's own note") != 1 || count(rep, "one's") != 0 {
		t.Errorf("one part: notes %q, want its own note only (the whole run adds load and steal)", rep.Notes)
	}
	rep, err = abuse(context.Background(), Options{}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if count(rep, "one: load average") != 1 || count(rep, "two: load average") != 1 {
		t.Errorf("two parts: notes %q, want each part's load noted once", rep.Notes)
	}
}

// TestStormScenarios: every abort-storm scenario is valid, every trigger point has one, and
// each scenario's client leaves (abort or stop) before its natural end.
func TestStormScenarios(t *testing.T) {
	t.Parallel()
	points := stormPoints()
	seen := map[string]bool{}
	for _, p := range points {
		if len(p.scenarios) == 0 {
			t.Errorf("point %q has no scenario", p.name)
		}
		for name, doc := range p.scenarios {
			sc, err := scenarios.Parse(name+".yaml", []byte(doc))
			if err != nil {
				t.Errorf("point %q: %v", p.name, err)
				continue
			}
			if sc.Name != name || (sc.Client.Abort == nil && sc.Client.Stop == nil) {
				t.Errorf("scenario %s: name %q, client %+v: want its own name and a client action", name, sc.Name, sc.Client)
			}
			seen[sc.Client.String()] = true
		}
	}
	for _, want := range []string{"abort before headers", "abort after 50ms", "abort after 20 chunks", "abort during thinking", "abort during tool", "stop during tool", "stop after 3 chunks"} {
		if !seen[want] {
			t.Errorf("no storm scenario does %q (have %v)", want, seen)
		}
	}
	if _, err := stormMix(points); err != nil {
		t.Error(err)
	}
}

// TestStalledReaderStopsReading: a server streaming to a stalled reader is blocked after a
// bounded number of bytes (the reader's small window plus the kernel's send buffer), and its
// write fails on its deadline: what the runtime's slow-client drop sees.
func TestStalledReaderStopsReading(t *testing.T) {
	t.Parallel()
	type result struct {
		written int
		err     error
	}
	done := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		chunk := []byte("data: " + strings.Repeat("x", 1000) + "\n\n")
		written := 0
		for written < 64<<20 {
			_ = rc.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
			n, err := w.Write(chunk)
			if err == nil {
				err = rc.Flush()
			}
			written += n
			if err != nil {
				done <- result{written, err}
				return
			}
		}
		done <- result{written, nil}
	}))
	defer srv.Close()
	s := &protocol.Session{ID: "s1", Target: "x", Input: "hi"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := openStalledReader(ctx, srv.URL, s)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := <-done
	if !errors.Is(res.err, os.ErrDeadlineExceeded) {
		t.Fatalf("server wrote %d bytes and ended with %v: want its write to time out", res.written, res.err)
	}
	// Loopback buffers autotune to megabytes for a reader with default buffers; the small
	// window and segment keep a stalled reader's share to a few hundred KB.
	if res.written > 2<<20 {
		t.Errorf("server wrote %d bytes before blocking: want the stalled reader to stop it within 2 MiB", res.written)
	}
}

// TestOpenStalledReaderErrors: a stream that does not open is an error naming what came back.
func TestOpenStalledReaderErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such deployment", http.StatusNotFound)
	}))
	defer srv.Close()
	_, err := openStalledReader(context.Background(), srv.URL, &protocol.Session{ID: "s1", Target: "x", Input: "hi"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("error %v: want the HTTP status", err)
	}
}

func TestScrapeMetric(t *testing.T) {
	t.Parallel()
	const text = "# TYPE dropped_total counter\ndropped_total 3\n" +
		"# TYPE open gauge\nopen{dialect=\"a\"} 2\nopen{dialect=\"b\"} 5\n" +
		"# TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 1\nlat_sum 1\nlat_count 1\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, text)
	}))
	t.Cleanup(srv.Close) // the parallel subtests outlive this function's body
	for _, tc := range []struct {
		name, path, metric string
		want               float64
		wantErr            string
	}{
		// a counter's value
		{"counter", "/metrics", "dropped_total", 3, ""},
		// a gauge summed over its label sets
		{"gauge over labels", "/metrics", "open", 7, ""},
		// a histogram is neither: refused, not read as zero
		{"histogram", "/metrics", "lat", 0, "not a counter or gauge"},
		// a metric the endpoint does not export
		{"missing", "/metrics", "nope", 0, "no nope"},
		// the endpoint failing
		{"HTTP error", "/broken", "open", 0, "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := scrapeMetric(context.Background(), srv.URL+tc.path, tc.metric)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("= %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
