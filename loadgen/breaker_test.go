package loadgen

import (
	"errors"
	"fmt"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestBreaker: the breaker trips once, when its first n sessions all ended in the same error
// but for their ids and URLs; any other end among them disarms it.
func TestBreaker(t *testing.T) {
	t.Parallel()
	refused := func(id, path string) error {
		return fmt.Errorf("session %s: Post \"http://127.0.0.1:1%s\": dial tcp 127.0.0.1:1: connect: connection refused", id, path)
	}
	type end struct {
		o   measure.Outcome
		err error
	}
	for _, tc := range []struct {
		name string
		ends func(i int) end
		trip bool
	}{
		// every session refused alike, on two routes: trips
		{"alike", func(i int) end {
			return end{measure.OutcomeTransportError, refused(fmt.Sprint("r-", i), []string{"/api/chat/a", "/agent/b/stream"}[i%2])}
		}, true},
		// one session completed: the target works
		{"one success", func(i int) end {
			if i == 3 {
				return end{measure.OutcomeCompleted, nil}
			}
			return end{measure.OutcomeTransportError, refused(fmt.Sprint("r-", i), "/x")}
		}, false},
		// another error among them: not one cause
		{"two errors", func(i int) end {
			if i == 7 {
				return end{measure.OutcomeHTTPError, errors.New("HTTP 500")}
			}
			return end{measure.OutcomeTransportError, refused(fmt.Sprint("r-", i), "/x")}
		}, false},
	} {
		trips := 0
		var reason string
		b := breaker{n: 10, trip: func(r string) { trips++; reason = r }}
		for i := range 25 {
			e := tc.ends(i)
			b.note(fmt.Sprint("r-", i), e.o, e.err)
		}
		if (trips == 1) != tc.trip || trips > 1 {
			t.Errorf("%s: tripped %d times (%q), want trip %v", tc.name, trips, reason, tc.trip)
		}
	}
	var off breaker // n 0: never
	off.note("x", measure.OutcomeTransportError, errors.New("refused"))
}
