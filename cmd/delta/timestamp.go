package main

import (
	"fmt"
	"strconv"
	"time"
)

// parseTimestamp reads the --timestamp forms: RFC 3339, a UTC date with an
// optional time, or milliseconds since the epoch.
func parseTimestamp(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("--timestamp %q: want RFC 3339, YYYY-MM-DD[ HH:MM:SS[.fff]] (UTC) or epoch milliseconds", s)
}

// formatTime is how every command prints a time.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
