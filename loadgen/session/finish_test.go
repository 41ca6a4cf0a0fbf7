package session

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfter: a Retry-After in seconds or as an HTTP date is a wait from now, capped at
// MaxRetryAfter; anything else is none.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"1", time.Second},       // seconds
		{" 7 ", 7 * time.Second}, // around spaces
		{"120", MaxRetryAfter},   // capped
		{"-3", 0},                // negative: none
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second}, // an HTTP date
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},                    // a date past
		{"soon", 0}, // not understood
		{"", 0},     // absent
	} {
		if got := retryAfter(tc.in, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
