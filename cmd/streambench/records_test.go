package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestOutDashStreamsRecords: with --out -, stdout carries records.jsonl's lines alone, one per
// request as it ends, and the summary goes to stderr; nothing is written to disk.
func TestOutDashStreamsRecords(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	cmd := exec.Command(os.Args[0], "run", "--dialect", "openai-chat", "--sessions", "12", "--clients", "3", "--time-scale", "0.2", "--quiet", "--out", "-")
	cmd.Env, cmd.Dir = append(os.Environ(), benchChildEnv+"=1"), wd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stderr.String(), "verdict: PASS") {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	sessions := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r measure.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Session == "" || r.Outcome == "" {
			t.Fatalf("stdout line %q is not a record: %v", sc.Text(), err)
		}
		sessions[r.Session] = true
	}
	if len(sessions) != 12 {
		t.Errorf("stdout holds records of %d sessions, want 12", len(sessions))
	}
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Errorf("--out - left %d entries in the working directory", len(entries))
	}
}
