package workload

import (
	"strings"
	"testing"
)

// TestBurstinessFlag: --burstiness is gamma's shape, refused without --arrival gamma or when
// not a positive, finite number, naming the flag.
func TestBurstinessFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    workload
		want string
	}{
		// gamma's shape, of gamma alone
		{workload{Rate: 5, Burstiness: 0.5}, "--burstiness 0.5: want a positive, finite shape of --arrival gamma"},
		{workload{Rate: 5, Arrival: "gamma", Burstiness: -1}, "--burstiness -1"},
	} {
		tc.w.TimeScale, tc.w.SnapshotEvery = 1, 1
		if _, err := tc.w.build(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.w, err, tc.want)
		}
	}
	if cfg, err := (workload{Rate: 5, Arrival: "gamma", Burstiness: 0.5, TimeScale: 1, SnapshotEvery: 1}).build(); err != nil || cfg.Burstiness != 0.5 || cfg.Arrival != "gamma" {
		t.Errorf("gamma arrivals: %v, %+v", err, cfg)
	}
}
