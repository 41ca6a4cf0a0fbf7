package workload

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/loadgen"
)

// TestShardFromFlags: --shard, --shards with $JOB_COMPLETION_INDEX and --start-at, and what is
// wrong with each bad combination.
func TestShardFromFlags(t *testing.T) {
	t.Parallel()
	type flags = Shard // load's --shard, --shards and --start-at
	for _, tc := range []struct {
		name    string
		flags   flags
		runID   string
		env     string
		want    loadgen.Shard
		wantErr string
	}{
		// the index and count given
		{"shard", flags{shard: "2/4"}, "r", "", loadgen.Shard{Index: 2, Count: 4}, ""},
		// the count given, the index from the Indexed Job's environment
		{"job index", flags{shards: 4}, "r", "3", loadgen.Shard{Index: 3, Count: 4}, ""},
		// the run id derived from --start-at is enough
		{"start-at", flags{shard: "0/2", startAt: "2026-12-01T15:00:00Z"}, "", "", loadgen.Shard{Count: 2}, ""},
		// both forms
		{"both", flags{shard: "1/4", shards: 4}, "r", "1", loadgen.Shard{}, "not both"},
		// --shards outside a Job
		{"no env", flags{shards: 4}, "r", "", loadgen.Shard{}, "JOB_COMPLETION_INDEX is not set"},
		// an index that is no integer
		{"bad env", flags{shards: 4}, "r", "x", loadgen.Shard{}, `JOB_COMPLETION_INDEX="x"`},
		// an index past the count
		{"env out of range", flags{shards: 4}, "r", "4", loadgen.Shard{}, "0 to 3"},
		// no run id the shards could share
		{"no run id", flags{shard: "1/4"}, "", "", loadgen.Shard{}, "--run-id"},
		// a start time that is not RFC3339
		{"bad start-at", flags{startAt: "15:00"}, "", "", loadgen.Shard{}, "RFC3339"},
		// a malformed shard
		{"bad shard", flags{shard: "4/4"}, "r", "", loadgen.Shard{}, "--shard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadgen.Config{RunID: tc.runID}
			err := tc.flags.Apply(&cfg, func(k string) string {
				if k == loadgen.JobIndexEnv {
					return tc.env
				}
				return ""
			})
			sh := cfg.Shard
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || sh != tc.want {
				t.Fatalf("shard %v, err %v; want %v", sh, err, tc.want)
			}
		})
	}
}
