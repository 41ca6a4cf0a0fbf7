package loadgen

import (
	"testing"
	"time"
)

// TestConfigSmall: which runs play the mock and runtime in process.
func TestConfigSmall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want bool
	}{
		// few sessions, whatever the clients
		{"sessions", Config{Sessions: 200, Clients: 1000}, true},
		// a low rate
		{"low rate", Config{Rate: 20}, true},
		// a high rate
		{"high rate", Config{Rate: 21}, false},
		// a ramp is never small
		{"stages", Config{Stages: []Stage{{Duration: time.Second, Target: 1}}}, false},
		// few clients
		{"clients", Config{Clients: 50}, true},
		// many clients
		{"many clients", Config{Clients: 51}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.cfg.Small(); got != tc.want {
				t.Fatalf("Small() = %v, want %v", got, tc.want)
			}
		})
	}
}
