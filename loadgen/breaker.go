package loadgen

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/streambench/streambench/measure"
)

// DefaultBreakerSessions is how many first sessions the circuit breaker watches.
const DefaultBreakerSessions = 50

// urlPattern matches the URLs in an error's text, in which alike failures of routes differ.
var urlPattern = regexp.MustCompile(`https?://[^\s"]+`)

// errorSignature is msg, the error of session id, with the id and the URLs replaced.
func errorSignature(id, msg string) string {
	return urlPattern.ReplaceAllString(strings.ReplaceAll(msg, id, "<session>"), "<url>")
}

// breaker is the run's circuit breaker: when the first n sessions all failed the same way, trip
// stops the run; a session that ends any other way disarms it. Safe for concurrent use.
type breaker struct {
	mu       sync.Mutex
	n        int // sessions to watch; 0: off
	seen     int
	first    string // the first session's outcome and error, its id replaced
	example  string // the first session's error, as the reason quotes it
	disarmed bool
	trip     func(reason string) // called once, from the session that completes the n
}

func (b *breaker) note(id string, o measure.Outcome, err error) {
	if b == nil || b.n <= 0 {
		return
	}
	b.mu.Lock()
	if b.disarmed || b.seen >= b.n {
		b.mu.Unlock()
		return
	}
	if !o.IsError() || err == nil {
		b.disarmed = true
		b.mu.Unlock()
		return
	}
	msg := err.Error()
	sig := string(o) + "\x00" + errorSignature(id, msg)
	if b.seen == 0 {
		b.first, b.example = sig, msg
	} else if sig != b.first {
		b.disarmed = true
		b.mu.Unlock()
		return
	}
	b.seen++
	tripped := b.seen == b.n
	b.mu.Unlock()
	if tripped && b.trip != nil {
		b.trip(fmt.Sprintf("stopped by the circuit breaker: the first %d sessions all ended %s the same way (e.g. %s); nothing would change by going on (--breaker-sessions)",
			b.n, o, measure.Clip(b.example, 300)))
	}
}
