package tableconfig

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/godelta/delta/deltaerr"
)

// ErrInvalidProperty is matched by every *PropertyError. It matches
// deltaerr.ErrInvalidArgument too.
var ErrInvalidProperty = fmt.Errorf("tableconfig: invalid table property: %w", deltaerr.ErrInvalidArgument)

// PropertyError says which table property has a value this library (and
// Spark) refuses, and what is allowed. errors.Is(err, ErrInvalidProperty)
// and errors.Is(err, deltaerr.ErrInvalidArgument) report true for it.
type PropertyError struct {
	Key    string
	Value  string
	Reason string // what the property allows, e.g. "want a positive integer"
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("tableconfig: table property %s = %q: %s", e.Key, e.Value, e.Reason)
}

// Is reports whether target is ErrInvalidProperty or
// deltaerr.ErrInvalidArgument.
func (e *PropertyError) Is(target error) bool {
	return target == ErrInvalidProperty || target == deltaerr.ErrInvalidArgument
}

// parseBool parses a boolean as Spark's String.toBoolean does: "true" or
// "false" in any case, nothing else (no spaces, no 0/1).
func parseBool(s string) (bool, bool) {
	switch {
	case strings.EqualFold(s, "true"):
		return true, true
	case strings.EqualFold(s, "false"):
		return false, true
	}
	return false, false
}

// parseInt parses a decimal integer as Java's Long.parseLong does (an
// optional sign, digits, nothing around them) within [lo, hi].
func parseInt(s string, lo, hi int64) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// errInterval is the cause ParseInterval wraps in its errors.
var errInterval = errors.New("not a calendar interval")

// ParseInterval parses a duration table property as Spark's DeltaConfigs
// does: a CalendarInterval string, in any case, an optional leading
// "interval", then one or more "<integer> <unit>" pairs that add up, such
// as "interval 7 days", "1 week", "168 hours", "interval 1 day 12 hours".
// Units are nanosecond, microsecond, millisecond, second, minute, hour,
// day and week, singular or plural; seconds may have a fraction of up to
// nine digits ("1.5 seconds"). A number may carry a sign, but the total
// must not be negative. Months and years are refused, as Spark refuses
// them for these properties: their length in time is not fixed. A total
// longer than time.Duration holds (about 292 years) is clamped to the
// largest Duration: "keep for ever", in effect.
//
// Errors match deltaerr.ErrInvalidArgument.
func ParseInterval(s string) (time.Duration, error) {
	bad := func(reason string) error {
		return fmt.Errorf("tableconfig: %q: %w: %s: %w", s, errInterval, reason, deltaerr.ErrInvalidArgument)
	}
	fields := strings.Fields(strings.ToLower(s))
	if len(fields) > 0 && fields[0] == "interval" {
		fields = fields[1:]
	}
	if len(fields) == 0 || len(fields)%2 != 0 {
		return 0, bad(`want "[interval] <number> <unit> ..."`)
	}
	// The total is kept in microseconds plus nanoseconds, as Spark keeps
	// microseconds, so that a long interval overflows only far beyond
	// what a Duration holds.
	var micros, nanos int64
	for i := 0; i < len(fields); i += 2 {
		num, unit := fields[i], strings.TrimSuffix(fields[i+1], "s")
		whole, frac, hasFrac := strings.Cut(num, ".")
		n, err := strconv.ParseInt(whole, 10, 64)
		if err != nil && !(hasFrac && (whole == "" || whole == "-" || whole == "+")) {
			return 0, bad("bad number " + strconv.Quote(num))
		}
		neg := strings.HasPrefix(whole, "-")
		var fracNanos int64
		if hasFrac {
			if unit != "second" {
				return 0, bad("only seconds may have a fraction")
			}
			if frac == "" || len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
				return 0, bad("bad fraction " + strconv.Quote(num))
			}
			fracNanos, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
			if neg {
				fracNanos = -fracNanos
			}
		}
		var perUnit int64 // microseconds
		switch unit {
		case "nanosecond":
			var ok bool
			if micros, ok = addInt(micros, n/1000); !ok {
				return 0, bad("too long")
			}
			nanos += n % 1000
			continue
		case "microsecond":
			perUnit = 1
		case "millisecond":
			perUnit = 1000
		case "second":
			perUnit = 1_000_000
		case "minute":
			perUnit = 60 * 1_000_000
		case "hour":
			perUnit = 3600 * 1_000_000
		case "day":
			perUnit = 86400 * 1_000_000
		case "week":
			perUnit = 7 * 86400 * 1_000_000
		case "month", "year":
			if n == 0 { // Spark refuses an interval with months in it, not the word
				continue
			}
			return 0, bad("months and years are not accepted (their length varies); give days, such as 365 days")
		default:
			return 0, bad("unknown unit " + strconv.Quote(fields[i+1]))
		}
		if n > math.MaxInt64/perUnit || n < math.MinInt64/perUnit {
			return 0, bad("too long")
		}
		var ok bool
		if micros, ok = addInt(micros, n*perUnit); !ok {
			return 0, bad("too long")
		}
		if micros, ok = addInt(micros, fracNanos/1000); !ok {
			return 0, bad("too long")
		}
		nanos += fracNanos % 1000 // |nanos| < 1000 per pair: no overflow
	}
	micros, ok := addInt(micros, nanos/1000)
	nanos %= 1000
	if !ok {
		return 0, bad("too long")
	}
	if micros < 0 || micros == 0 && nanos < 0 {
		return 0, bad("negative")
	}
	if micros > (math.MaxInt64-999)/1000 {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(micros*1000 + nanos), nil
}

func addInt(a, b int64) (int64, bool) {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		return 0, false
	}
	return c, true
}

// splitColumnList splits a comma-separated list of column names, as
// delta.dataSkippingStatsColumns holds them, on the commas outside
// backquotes. Names are trimmed; empty ones are dropped. It reports false
// for an unclosed backquote.
func splitColumnList(s string) ([]string, bool) {
	var out []string
	start, quoted := 0, false
	add := func(end int) {
		if name := strings.TrimSpace(s[start:end]); name != "" {
			out = append(out, name)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '`':
			quoted = !quoted // a doubled `` inside quotes toggles twice
		case ',':
			if !quoted {
				add(i)
				start = i + 1
			}
		}
	}
	if quoted {
		return nil, false
	}
	add(len(s))
	if out == nil {
		out = []string{}
	}
	return out, true
}

// ErrAppendOnly is returned for a commit, or an operation that plans one,
// that would remove data (a remove with dataChange=true) from a table with
// delta.appendOnly=true. Package txn enforces it on every commit; txn,
// write and the root package export this same value. It matches
// deltaerr.ErrInvalidArgument.
var ErrAppendOnly = fmt.Errorf("delta: table is append-only (delta.appendOnly=true): %w", deltaerr.ErrInvalidArgument)
