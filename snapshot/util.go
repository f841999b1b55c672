package snapshot

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ParseInterval parses a duration table property the way Delta writes them:
// "interval 7 days", "7 days", "1 week", "2 hours", with units from
// nanosecond to week, singular or plural.
func ParseInterval(s string) (time.Duration, error) {
	fields := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(fields) > 0 && fields[0] == "interval" {
		fields = fields[1:]
	}
	if len(fields) != 2 {
		return 0, fmt.Errorf("interval %q: want \"[interval] <number> <unit>\": %w", s, deltaerr.ErrInvalidArgument)
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("interval %q: bad number: %w", s, deltaerr.ErrInvalidArgument)
	}
	unit, ok := intervalUnits[strings.TrimSuffix(fields[1], "s")]
	if !ok {
		return 0, fmt.Errorf("interval %q: unknown unit: %w", s, deltaerr.ErrInvalidArgument)
	}
	if n > int64(1<<63-1)/int64(unit) {
		return 0, fmt.Errorf("interval %q: too long: %w", s, deltaerr.ErrInvalidArgument)
	}
	return time.Duration(n) * unit, nil
}

var intervalUnits = map[string]time.Duration{
	"nanosecond":  time.Nanosecond,
	"microsecond": time.Microsecond,
	"millisecond": time.Millisecond,
	"second":      time.Second,
	"minute":      time.Minute,
	"hour":        time.Hour,
	"day":         24 * time.Hour,
	"week":        7 * 24 * time.Hour,
}
