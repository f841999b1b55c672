package main

import (
	"testing"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ms*int(time.Millisecond), time.UTC)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2024-01-02T03:04:05Z", utc(2024, 1, 2, 3, 4, 5, 0)},
		{"2024-01-02T03:04:05.123Z", utc(2024, 1, 2, 3, 4, 5, 123)},
		{"2024-01-02T03:04:05.123456789Z", utc(2024, 1, 2, 3, 4, 5, 0).Add(123456789)},
		{"2024-01-02T04:04:05.5+01:00", utc(2024, 1, 2, 3, 4, 5, 500)},
		{"2024-01-01T22:04:05-05:00", utc(2024, 1, 2, 3, 4, 5, 0)},
		{"2024-01-02 03:04:05", utc(2024, 1, 2, 3, 4, 5, 0)},
		{"2024-01-02 03:04:05.123", utc(2024, 1, 2, 3, 4, 5, 123)},
		{"2024-01-02 03:04:05.1", utc(2024, 1, 2, 3, 4, 5, 100)},
		{"2024-01-02T03:04:05.123", utc(2024, 1, 2, 3, 4, 5, 123)},
		{"2024-01-02", utc(2024, 1, 2, 0, 0, 0, 0)},
		{" 2024-01-02 ", utc(2024, 1, 2, 0, 0, 0, 0)},
		{"1704164645123", utc(2024, 1, 2, 3, 4, 5, 123)},
		{"0", time.UnixMilli(0).UTC()},
		{"1685559513633", utc(2023, 5, 31, 18, 58, 33, 633)},
	} {
		got, err := parseTimestamp(tc.in)
		if err != nil {
			t.Errorf("parseTimestamp(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("parseTimestamp(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseTimestampErrors(t *testing.T) {
	for _, in := range []string{
		"",
		"yesterday",
		"2024-13-01",
		"2024-02-30",
		"2024-01-02 25:00:00",
		"2024-01-02T03:04",
		"2024/01/02",
		"-5",
		"1.5",
		"99999999999999999999", // overflows int64
		"2024-01-02T03:04:05Zjunk",
	} {
		if got, err := parseTimestamp(in); err == nil {
			t.Errorf("parseTimestamp(%q) = %v, want an error", in, got)
		}
	}
}

func TestFormatTime(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.UnixMilli(1685559513633), "2023-05-31T18:58:33.633Z"},
		{time.UnixMilli(0), "1970-01-01T00:00:00.000Z"},
		{time.Date(2024, 1, 2, 4, 4, 5, 120_000_000, time.FixedZone("", 3600)), "2024-01-02T03:04:05.120Z"},
	} {
		if got := formatTime(tc.in); got != tc.want {
			t.Errorf("formatTime(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
