package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streambench/streambench/loadgen"
)

// TestShardFlags: --shard, --shards with $JOB_COMPLETION_INDEX and --start-at, and what is
// wrong with each bad combination.
func TestShardFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   shardFlags
		runID   string
		env     string
		want    loadgen.Shard
		wantErr string
	}{
		// the index and count given
		{"shard", shardFlags{shard: "2/4"}, "r", "", loadgen.Shard{Index: 2, Count: 4}, ""},
		// the count given, the index from the Indexed Job's environment
		{"job index", shardFlags{shards: 4}, "r", "3", loadgen.Shard{Index: 3, Count: 4}, ""},
		// the run id derived from --start-at is enough
		{"start-at", shardFlags{shard: "0/2", startAt: "2026-12-01T15:00:00Z"}, "", "", loadgen.Shard{Count: 2}, ""},
		// both forms
		{"both", shardFlags{shard: "1/4", shards: 4}, "r", "1", loadgen.Shard{}, "not both"},
		// --shards outside a Job
		{"no env", shardFlags{shards: 4}, "r", "", loadgen.Shard{}, "JOB_COMPLETION_INDEX is not set"},
		// an index that is no integer
		{"bad env", shardFlags{shards: 4}, "r", "x", loadgen.Shard{}, `JOB_COMPLETION_INDEX="x"`},
		// an index past the count
		{"env out of range", shardFlags{shards: 4}, "r", "4", loadgen.Shard{}, "0 to 3"},
		// no run id the shards could share
		{"no run id", shardFlags{shard: "1/4"}, "", "", loadgen.Shard{}, "--run-id"},
		// a start time that is not RFC3339
		{"bad start-at", shardFlags{startAt: "15:00"}, "", "", loadgen.Shard{}, "RFC3339"},
		// a malformed shard
		{"bad shard", shardFlags{shard: "4/4"}, "r", "", loadgen.Shard{}, "--shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadgen.Config{RunID: tc.runID}
			err := tc.flags.apply(&cfg, func(k string) string {
				if k == jobIndexEnv {
					return tc.env
				}
				return ""
			})
			if tc.wantErr != "" {
				if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a usage error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || cfg.Shard != tc.want {
				t.Fatalf("shard %v, err %v; want %v", cfg.Shard, err, tc.want)
			}
		})
	}
}

// TestLeaksCommand: the baseline step writes a file the verify step reads; verify passes when
// the gauges came back, fails (exit 1) when one grew, and refuses another runtime's URL.
func TestLeaksCommand(t *testing.T) {
	t.Parallel()
	var open atomic.Int64
	rt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE demo_streams_open gauge\ndemo_streams_open %d\n", open.Load())
	}))
	t.Cleanup(rt.Close)
	file := filepath.Join(t.TempDir(), "baseline.json")
	var out bytes.Buffer
	if err := leaksMain([]string{"baseline", "--runtime-metrics", rt.URL, "--out", file}, &out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "demo_streams_open") {
		t.Fatalf("baseline file: %v %s", err, b)
	}
	verify := []string{"verify", "--baseline", file, "--runtime-metrics", rt.URL, "--leak-grace", "200ms"}
	out.Reset()
	if err := leaksMain(verify, &out); err != nil || !strings.Contains(out.String(), "ok   runtime demo_streams_open") {
		t.Fatalf("clean: %v\n%s", err, out.String())
	}
	open.Store(3)
	out.Reset()
	if err := leaksMain(verify, &out); exitCode(err) != exitFailure || !strings.Contains(out.String(), "LEAK runtime demo_streams_open: 0 → 3") {
		t.Fatalf("leaked: exit %d %v\n%s", exitCode(err), err, out.String())
	}
	err := leaksMain([]string{"verify", "--baseline", file, "--runtime-metrics", rt.URL + "/other"}, &out)
	if exitCode(err) != exitUsage || !strings.Contains(err.Error(), "the baseline read "+rt.URL) {
		t.Fatalf("another URL: %v", err)
	}
	if err := leaksMain([]string{"verify", "--runtime-metrics", rt.URL}, &out); exitCode(err) != exitUsage {
		t.Fatalf("no --baseline: %v", err)
	}
	if err := leaksMain([]string{"verify", "--baseline", filepath.Join(t.TempDir(), "none.json"), "--runtime-metrics", rt.URL}, &out); exitCode(err) != exitUsage {
		t.Fatalf("missing baseline file: %v", err)
	}
}
