package platform

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): whole
// delta-seconds or an HTTP date, the latter measured against now. Anything
// unreadable, and a date already past, asks for no wait (zero): the caller's
// own backoff still applies. The result never exceeds MaxRetryAfter.
func parseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if isDigits(value) {
		seconds, err := strconv.ParseUint(value, 10, 64)
		// Only overflow can fail here, and a number that large is a very
		// long wait: the clamp covers it.
		if err != nil || seconds > uint64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		return time.Duration(seconds) * time.Second
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	wait := at.Sub(now)
	if wait <= 0 {
		return 0
	}
	return min(wait, MaxRetryAfter)
}

// isDigits rejects signs, spaces and decimals, which delta-seconds forbids
// and strconv would partly accept.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
