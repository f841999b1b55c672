package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// timestampForms describes, for messages, what parseTimestamp accepts.
const timestampForms = "RFC 3339 (2024-01-02T03:04:05Z, 2024-01-02T03:04:05.123+02:00), " +
	"'YYYY-MM-DD HH:MM:SS[.fff]' or YYYY-MM-DD in UTC, or milliseconds since the epoch"

// utcLayouts are the forms without a zone, read as UTC. time.Parse accepts a
// fraction after the seconds even though the layouts do not show one.
var utcLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02",
}

// parseTimestamp reads a --timestamp value: RFC 3339 with any offset and an
// optional fraction of a second; "YYYY-MM-DD HH:MM:SS[.fff]" (or with a "T"
// separator) in UTC; "YYYY-MM-DD", UTC midnight; or a whole number of
// milliseconds since the Unix epoch.
func parseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s != "" && strings.Trim(s, "0123456789") == "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: milliseconds out of range", s)
		}
		return time.UnixMilli(ms).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range utcLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want %s", s, timestampForms)
}

// formatTime formats t as every command prints times: RFC 3339 in UTC with
// exactly three digits of milliseconds, "2023-05-31T18:58:33.633Z".
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}
