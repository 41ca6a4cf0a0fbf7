package protocol

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRecordingRoundTrip: a recording written is read back the same, a frame with a line break
// included; a gzipped one reads as the plain one; a file without a scenario header, and a frame
// the format cannot hold, are refused.
func TestRecordingRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := Recording{
		Header: []string{"# a runtime; scenario plain-answer seed 7; one SSE frame a line", "# fault some-fault"},
		Frames: []string{"data: {\"a\":\"x\\ny\"}\n\n", "event: done\ndata: {}\n\n", ": ping\n\n"},
	}
	path := filepath.Join(dir, "r.frames")
	if err := rec.Write(path); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if want := "event: done\\ndata: {}\n"; !strings.Contains(string(raw), want) {
		t.Errorf("written:\n%s\nwant a line %q", raw, want)
	}
	gz := filepath.Join(dir, "r.frames.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	z := gzip.NewWriter(f)
	_, _ = z.Write(raw)
	if err := z.Close(); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, gz} {
		got, err := ReadRecording(p)
		if err != nil {
			t.Fatal(err)
		}
		if got.Path != p || got.Scenario != "plain-answer" || got.Seed != 7 || !slices.Equal(got.Header, rec.Header) || !slices.Equal(got.Frames, rec.Frames) {
			t.Errorf("%s read back as %+v, want %+v", p, got, rec)
		}
		if got.Stream() != strings.Join(rec.Frames, "") {
			t.Errorf("%s: Stream() = %q", p, got.Stream())
		}
	}
	none := filepath.Join(dir, "none.frames")
	if err := os.WriteFile(none, []byte("# no script\ndata: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecording(none); err == nil || !strings.Contains(err.Error(), "scenario NAME seed N") {
		t.Errorf("a recording without its scenario: %v", err)
	}
	bad := Recording{Frames: []string{"data: {\"a\":\"\\ndata: b\"}\n\n"}}
	if err := bad.Write(filepath.Join(dir, "bad.frames")); err == nil {
		t.Error("a frame holding \\n before a field name was written")
	}
}

// TestCaptureReads: a capture reads as one frame, all of it, its comment line the header naming
// the script.
func TestCaptureReads(t *testing.T) {
	t.Parallel()
	raw := ": scenario tool-chain seed 3 (a server)\nevent: x\ndata: {}\n\ndata: y\n\n"
	path := filepath.Join(t.TempDir(), "c.sse")
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenario != "tool-chain" || got.Seed != 3 || len(got.Header) != 1 || got.Stream() != raw {
		t.Errorf("capture read as %+v", got)
	}
}
