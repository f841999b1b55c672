package expr

// The functions that Call can name, with Spark SQL semantics (see value.go
// for the choices on overflow and bad input). Names are case-insensitive;
// Parse rejects a name not listed here with ErrUnknownFunction, and a
// wrong number of arguments with ErrSyntax.
//
//	year, month, day (dayofmonth), hour, minute, second
//	to_date(x [, fmt]), date(x), to_timestamp(x [, fmt]), date_format(x, fmt)
//	trunc(date, 'YEAR'|'QUARTER'|'MONTH'|'WEEK'), date_trunc(unit, ts)
//	length (char_length, character_length), upper (ucase), lower (lcase)
//	substring (substr)(s, pos [, len]), concat(...), trim, ltrim, rtrim
//	coalesce(...), nvl (ifnull)(a, b), if(cond, a, b), isnull, isnotnull
//	abs, round(x [, d]), floor, ceil (ceiling)
//
// Date and time functions read a string argument as CAST does (NULL when it
// is not a date), and work in UTC. Date patterns (date_format, to_date and
// to_timestamp with a format) take Spark's letters y, M (and L), d, D, H,
// h, k, K, m, s, S, E, a and Q, with 'quoted text'; other letters are
// ErrEval.

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/godelta/delta/schema"
)

// function is one entry of the function table.
type function struct {
	minArgs, maxArgs int // maxArgs < 0: no limit
	// eval computes the result from the argument values; unless
	// takesNull, a NULL argument makes the result NULL without calling it.
	eval      func(args []schema.Value) (schema.Value, error)
	takesNull bool
	// lazy, when set instead of eval, marks a conditional that evaluates
	// only the arguments it needs (compile.go builds it).
	lazy lazyKind
}

// lazyKind is a conditional function.
type lazyKind uint8

const (
	notLazy      lazyKind = iota
	lazyCoalesce          // coalesce, nvl: the first non-null argument
	lazyIf                // if(cond, a, b)
)

var functions map[string]*function

func init() {
	functions = map[string]*function{
		"year":         {minArgs: 1, maxArgs: 1, eval: dateField(func(t time.Time) int { return t.Year() })},
		"month":        {minArgs: 1, maxArgs: 1, eval: dateField(func(t time.Time) int { return int(t.Month()) })},
		"day":          {minArgs: 1, maxArgs: 1, eval: dateField(time.Time.Day)},
		"hour":         {minArgs: 1, maxArgs: 1, eval: timeField(time.Time.Hour)},
		"minute":       {minArgs: 1, maxArgs: 1, eval: timeField(time.Time.Minute)},
		"second":       {minArgs: 1, maxArgs: 1, eval: timeField(time.Time.Second)},
		"to_date":      {minArgs: 1, maxArgs: 2, eval: toDate},
		"date":         {minArgs: 1, maxArgs: 1, eval: toDate},
		"to_timestamp": {minArgs: 1, maxArgs: 2, eval: toTimestamp},
		"date_format":  {minArgs: 2, maxArgs: 2, eval: dateFormat},
		"trunc":        {minArgs: 2, maxArgs: 2, eval: truncDate},
		"date_trunc":   {minArgs: 2, maxArgs: 2, eval: truncTimestamp},
		"length":       {minArgs: 1, maxArgs: 1, eval: length},
		"upper":        {minArgs: 1, maxArgs: 1, eval: mapString(strings.ToUpper)},
		"lower":        {minArgs: 1, maxArgs: 1, eval: mapString(strings.ToLower)},
		"trim":         {minArgs: 1, maxArgs: 1, eval: mapString(func(s string) string { return strings.Trim(s, " ") })},
		"ltrim":        {minArgs: 1, maxArgs: 1, eval: mapString(func(s string) string { return strings.TrimLeft(s, " ") })},
		"rtrim":        {minArgs: 1, maxArgs: 1, eval: mapString(func(s string) string { return strings.TrimRight(s, " ") })},
		"substring":    {minArgs: 2, maxArgs: 3, eval: substring},
		"concat":       {minArgs: 0, maxArgs: -1, eval: concat},
		"coalesce":     {minArgs: 1, maxArgs: -1, lazy: lazyCoalesce},
		"nvl":          {minArgs: 2, maxArgs: 2, lazy: lazyCoalesce},
		"if":           {minArgs: 3, maxArgs: 3, lazy: lazyIf},
		"isnull":       {minArgs: 1, maxArgs: 1, takesNull: true, eval: isNullFunc(true)},
		"isnotnull":    {minArgs: 1, maxArgs: 1, takesNull: true, eval: isNullFunc(false)},
		"abs":          {minArgs: 1, maxArgs: 1, eval: abs},
		"round":        {minArgs: 1, maxArgs: 2, eval: round},
		"floor":        {minArgs: 1, maxArgs: 1, eval: floorCeil(false)},
		"ceil":         {minArgs: 1, maxArgs: 1, eval: floorCeil(true)},
	}
	for alias, name := range map[string]string{
		"dayofmonth": "day", "char_length": "length", "character_length": "length",
		"substr": "substring", "ifnull": "nvl", "ceiling": "ceil", "ucase": "upper", "lcase": "lower",
	} {
		functions[alias] = functions[name]
	}
}

// Functions returns the names of the functions EvalValue implements,
// sorted.
func Functions() []string {
	names := make([]string, 0, len(functions))
	for n := range functions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// lookupFunction finds a function and checks the number of arguments.
// The errors are ErrUnknownFunction and ErrEval.
func lookupFunction(name string, nargs int) (*function, error) {
	f, ok := functions[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownFunction, name)
	}
	if nargs < f.minArgs || (f.maxArgs >= 0 && nargs > f.maxArgs) {
		return nil, fmt.Errorf("%w: %s takes %s arguments, not %d", ErrEval, name, arity(f), nargs)
	}
	return f, nil
}

func arity(f *function) string {
	switch {
	case f.maxArgs < 0:
		return "at least " + strconv.Itoa(f.minArgs)
	case f.minArgs == f.maxArgs:
		return strconv.Itoa(f.minArgs)
	}
	return strconv.Itoa(f.minArgs) + " to " + strconv.Itoa(f.maxArgs)
}

// ---- Conditionals: coalesce, nvl and if are built by compile.go ----

func isNullFunc(want bool) func([]schema.Value) (schema.Value, error) {
	return func(a []schema.Value) (schema.Value, error) {
		return schema.BooleanValue(a[0].IsNull() == want), nil
	}
}

// ---- Strings ----

// stringArg reads a value as a string, as Spark's implicit cast does.
func stringArg(v schema.Value) string {
	if v.Kind() == schema.KindString {
		return string(v.Bytes())
	}
	return sparkString(v)
}

// intArg reads a value as an INT argument (a position or a length).
func intArg(v schema.Value) (int64, bool, error) {
	if isInt(v.Kind()) {
		return v.Int64(), true, nil
	}
	i, err := CastValue(v, schema.Integer)
	return i.Int64(), !i.IsNull(), err
}

func mapString(f func(string) string) func([]schema.Value) (schema.Value, error) {
	return func(a []schema.Value) (schema.Value, error) {
		return schema.StringValue(f(stringArg(a[0]))), nil
	}
}

// length counts characters of a string and bytes of a binary.
func length(a []schema.Value) (schema.Value, error) {
	if a[0].Kind() == schema.KindBinary {
		return schema.IntegerValue(int32(len(a[0].Bytes()))), nil
	}
	return schema.IntegerValue(int32(utf8.RuneCountInString(stringArg(a[0])))), nil
}

// substring is Spark's substring(s, pos, len): pos counts from 1, or from
// the end when negative, and 0 is the same as 1; a negative len is empty.
// Strings count characters, binaries bytes.
func substring(a []schema.Value) (schema.Value, error) {
	pos, ok, err := intArg(a[1])
	if !ok || err != nil {
		return schema.Value{}, err
	}
	n := int64(math.MaxInt32)
	if len(a) == 3 {
		if n, ok, err = intArg(a[2]); !ok || err != nil {
			return schema.Value{}, err
		}
	}
	cut := func(size int64) (int64, int64) {
		start := int64(0)
		switch {
		case pos > 0:
			start = pos - 1
		case pos < 0:
			start = size + pos
		}
		end := min(start+n, size)
		start = max(start, 0)
		if start >= end {
			return 0, 0
		}
		return start, end
	}
	if a[0].Kind() == schema.KindBinary {
		b := a[0].Bytes()
		s, e := cut(int64(len(b)))
		return schema.BinaryValue(b[s:e]), nil
	}
	r := []rune(stringArg(a[0]))
	s, e := cut(int64(len(r)))
	return schema.StringValue(string(r[s:e])), nil
}

// concat joins strings, or binaries when every argument is binary.
func concat(a []schema.Value) (schema.Value, error) {
	var b strings.Builder
	allBinary := len(a) > 0
	for _, v := range a {
		allBinary = allBinary && v.Kind() == schema.KindBinary
		if v.Kind() == schema.KindBinary {
			b.Write(v.Bytes())
		} else {
			b.WriteString(stringArg(v))
		}
	}
	if allBinary {
		return schema.BinaryValueString(b.String()), nil
	}
	return schema.StringValue(b.String()), nil
}

// ---- Numbers ----

// numberArg reads a string argument as a double, as Spark's implicit cast
// does; a NULL result means the string is not a number.
func numberArg(v schema.Value) (schema.Value, error) {
	if v.Kind() == schema.KindString {
		return CastValue(v, schema.Double)
	}
	if !isNumeric(v.Kind()) {
		return schema.Value{}, fmt.Errorf("%w: want a number, got %s", ErrEval, v.Kind())
	}
	return v, nil
}

func abs(a []schema.Value) (schema.Value, error) {
	v, err := numberArg(a[0])
	if err != nil || v.IsNull() {
		return v, err
	}
	switch k := v.Kind(); {
	case isInt(k) && v.Int64() < 0:
		return negate(v)
	case k == schema.KindDecimal:
		if u, _, _ := v.Decimal(); u.Sign() < 0 {
			return negate(v)
		}
	case k == schema.KindFloat:
		return schema.FloatValue(float32(math.Abs(v.Float64()))), nil
	case k == schema.KindDouble:
		return schema.DoubleValue(math.Abs(v.Float64())), nil
	}
	return v, nil
}

// round rounds half away from zero to d digits after the point (before it
// when d is negative). Integers keep their type; decimal(p,s) becomes
// decimal(p-s+1+min(s,d), min(s,d)); floats round their shortest decimal
// form, as Spark's BigDecimal(double) does.
func round(a []schema.Value) (schema.Value, error) {
	v, err := numberArg(a[0])
	if err != nil || v.IsNull() {
		return v, err
	}
	d := int64(0)
	if len(a) == 2 {
		if !isInt(a[1].Kind()) {
			return schema.Value{}, fmt.Errorf("%w: round scale must be an integer", ErrEval)
		}
		d = a[1].Int64()
	}
	if d > 100 || d < -100 {
		d = max(min(d, 100), -100)
	}
	scale := int(d)
	switch k := v.Kind(); {
	case isInt(k):
		if scale >= 0 {
			return v, nil
		}
		u := roundScaled(new(big.Rat).SetInt64(v.Int64()), scale)
		u.Mul(u, pow10Big(-scale))
		if !u.IsInt64() {
			return schema.Value{}, fmt.Errorf("%w: round(%d, %d)", ErrOverflow, v.Int64(), d)
		}
		return intValue(k, u.Int64())
	case k == schema.KindDecimal:
		u, p, s := v.Decimal()
		if scale >= s {
			return v, nil
		}
		ns := max(scale, 0)
		np := min(p-s+1+ns, schema.MaxDecimalPrecision)
		r := roundScaled(ratOf(u, s), scale)
		if scale < 0 {
			r.Mul(r, pow10Big(-scale))
		}
		out, err := schema.DecimalValue(r, np, ns)
		if err != nil {
			return schema.Value{}, fmt.Errorf("%w: round(%s, %d)", ErrOverflow, v, d)
		}
		return out, nil
	default:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return v, nil
		}
		bits := 64
		if k == schema.KindFloat {
			bits = 32
		}
		r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
		u := new(big.Rat).SetInt(roundScaled(r, scale))
		if scale >= 0 {
			u.Quo(u, new(big.Rat).SetInt(pow10Big(scale)))
		} else {
			u.Mul(u, new(big.Rat).SetInt(pow10Big(-scale)))
		}
		out, _ := u.Float64()
		if k == schema.KindFloat {
			return schema.FloatValue(float32(out)), nil
		}
		return schema.DoubleValue(out), nil
	}
}

// roundScaled is roundHalfUp for any scale: the unscaled result at scale
// (for a negative scale, r / 10^-scale rounded).
func roundScaled(r *big.Rat, scale int) *big.Int {
	if scale >= 0 {
		return roundHalfUp(r, scale)
	}
	return roundHalfUp(new(big.Rat).Quo(r, new(big.Rat).SetInt(pow10Big(-scale))), 0)
}

// floorCeil is floor or ceil: BIGINT for integers and floats (ErrOverflow
// out of range), decimal(p-s+1, 0) for decimal(p,s).
func floorCeil(up bool) func([]schema.Value) (schema.Value, error) {
	return func(a []schema.Value) (schema.Value, error) {
		v, err := numberArg(a[0])
		if err != nil || v.IsNull() {
			return v, err
		}
		switch k := v.Kind(); {
		case isInt(k):
			return schema.LongValue(v.Int64()), nil
		case k == schema.KindDecimal:
			u, p, s := v.Decimal()
			if s == 0 {
				return v, nil
			}
			q, m := new(big.Int).QuoRem(u, pow10Big(s), new(big.Int))
			if m.Sign() != 0 && (m.Sign() > 0) == up {
				if up {
					q.Add(q, big.NewInt(1))
				} else {
					q.Sub(q, big.NewInt(1))
				}
			}
			return schema.DecimalValue(q, max(p-s+1, 1), 0)
		}
		f := math.Floor(v.Float64())
		if up {
			f = math.Ceil(v.Float64())
		}
		return CastValue(schema.DoubleValue(f), schema.Long)
	}
}

// ---- Dates and times ----

func dateTime(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }

func microsTime(m int64) time.Time { return time.UnixMicro(m).UTC() }

// dateArg reads a date, a timestamp or a string as a date, in days; ok is
// false for a string that is not a date.
func dateArg(v schema.Value) (days int64, ok bool, err error) {
	switch v.Kind() {
	case schema.KindDate:
		return v.Int64(), true, nil
	case schema.KindTimestamp, schema.KindTimestampNTZ, schema.KindString:
		d, err := CastValue(v, schema.Date)
		return d.Int64(), !d.IsNull(), err
	}
	return 0, false, fmt.Errorf("%w: want a date, got %s", ErrEval, v.Kind())
}

// timestampArg reads a timestamp, a date or a string as microseconds.
func timestampArg(v schema.Value) (micros int64, ok bool, err error) {
	switch v.Kind() {
	case schema.KindTimestamp, schema.KindTimestampNTZ:
		return v.Int64(), true, nil
	case schema.KindDate, schema.KindString:
		t, err := CastValue(v, schema.Timestamp)
		return t.Int64(), !t.IsNull(), err
	}
	return 0, false, fmt.Errorf("%w: want a timestamp, got %s", ErrEval, v.Kind())
}

func dateField(f func(time.Time) int) func([]schema.Value) (schema.Value, error) {
	return func(a []schema.Value) (schema.Value, error) {
		d, ok, err := dateArg(a[0])
		if !ok || err != nil {
			return schema.Value{}, err
		}
		return schema.IntegerValue(int32(f(microsTime(d * microsPerDay)))), nil
	}
}

func timeField(f func(time.Time) int) func([]schema.Value) (schema.Value, error) {
	return func(a []schema.Value) (schema.Value, error) {
		m, ok, err := timestampArg(a[0])
		if !ok || err != nil {
			return schema.Value{}, err
		}
		return schema.IntegerValue(int32(f(microsTime(m)))), nil
	}
}

func toDate(a []schema.Value) (schema.Value, error) {
	if len(a) == 1 {
		if _, _, err := dateArg(a[0]); err != nil {
			return schema.Value{}, err
		}
		return CastValue(a[0], schema.Date)
	}
	m, ok, err := parseWithPattern(stringArg(a[0]), stringArg(a[1]))
	if !ok || err != nil {
		return schema.Value{}, err
	}
	return schema.DateValue(int32(floorDiv(m, microsPerDay))), nil
}

func toTimestamp(a []schema.Value) (schema.Value, error) {
	if len(a) == 1 {
		if _, _, err := timestampArg(a[0]); err != nil {
			return schema.Value{}, err
		}
		return CastValue(a[0], schema.Timestamp)
	}
	m, ok, err := parseWithPattern(stringArg(a[0]), stringArg(a[1]))
	if !ok || err != nil {
		return schema.Value{}, err
	}
	return schema.TimestampValue(m), nil
}

func dateFormat(a []schema.Value) (schema.Value, error) {
	m, ok, err := timestampArg(a[0])
	if !ok || err != nil {
		return schema.Value{}, err
	}
	s, err := formatWithPattern(m, stringArg(a[1]))
	if err != nil {
		return schema.Value{}, err
	}
	return schema.StringValue(s), nil
}

// truncDate is trunc(date, unit): the first day of its year, quarter,
// month or week (Monday); NULL for another unit, as in Spark.
func truncDate(a []schema.Value) (schema.Value, error) {
	d, ok, err := dateArg(a[0])
	if !ok || err != nil {
		return schema.Value{}, err
	}
	t, ok := truncTime(microsTime(d*microsPerDay), stringArg(a[1]), false)
	if !ok {
		return schema.Value{}, nil
	}
	return schema.DateValue(int32(floorDiv(t.Unix(), 86_400))), nil
}

// truncTimestamp is date_trunc(unit, ts): ts cut to the start of its
// year, quarter, month, week, day, hour, minute, second or millisecond;
// NULL for another unit.
func truncTimestamp(a []schema.Value) (schema.Value, error) {
	m, ok, err := timestampArg(a[1])
	if !ok || err != nil {
		return schema.Value{}, err
	}
	unit := strings.ToUpper(strings.TrimSpace(stringArg(a[0])))
	switch unit {
	case "MILLISECOND":
		return schema.TimestampValue(floorDiv(m, 1000) * 1000), nil
	case "MICROSECOND":
		return schema.TimestampValue(m), nil
	}
	t, ok := truncTime(microsTime(m), unit, true)
	if !ok {
		return schema.Value{}, nil
	}
	return schema.TimestampValue(t.UnixMicro()), nil
}

func truncTime(t time.Time, unit string, timeUnits bool) (time.Time, bool) {
	y, mo, d := t.Date()
	switch strings.ToUpper(strings.TrimSpace(unit)) {
	case "YEAR", "YYYY", "YY":
		return dateTime(y, 1, 1), true
	case "QUARTER":
		return dateTime(y, int(mo-1)/3*3+1, 1), true
	case "MONTH", "MM", "MON":
		return dateTime(y, int(mo), 1), true
	case "WEEK":
		back := (int(t.Weekday()) + 6) % 7 // days since Monday
		return dateTime(y, int(mo), d-back), true
	}
	if !timeUnits {
		return time.Time{}, false
	}
	switch strings.ToUpper(strings.TrimSpace(unit)) {
	case "DAY", "DD":
		return dateTime(y, int(mo), d), true
	case "HOUR":
		return t.Truncate(time.Hour), true
	case "MINUTE":
		return t.Truncate(time.Minute), true
	case "SECOND":
		return t.Truncate(time.Second), true
	}
	return time.Time{}, false
}

// patternField is one run of a date pattern: a letter repeated count
// times, or literal text when letter is 0.
type patternField struct {
	letter byte
	count  int
	text   string
}

// splitPattern cuts a Spark datetime pattern into fields. Text in single
// quotes is literal (” is a quote); other non-letters are literal.
func splitPattern(p string) ([]patternField, error) {
	var out []patternField
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("%w: unterminated quote in pattern %q", ErrEval, p)
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				b.WriteByte('\'') // '' outside quotes
			}
			out = append(out, patternField{text: b.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(p) && p[j] == c {
				j++
			}
			if !strings.ContainsRune("yMLdDHhkKmsSEaQ", rune(c)) {
				return nil, fmt.Errorf("%w: pattern letter %q is not supported", ErrEval, c)
			}
			out = append(out, patternField{letter: c, count: j - i})
			i = j
		default:
			out = append(out, patternField{text: string(c)})
			i++
		}
	}
	return out, nil
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

// formatWithPattern formats micros (UTC) with a Spark datetime pattern.
func formatWithPattern(micros int64, pattern string) (string, error) {
	fields, err := splitPattern(pattern)
	if err != nil {
		return "", err
	}
	t := microsTime(micros)
	var b strings.Builder
	for _, f := range fields {
		n := f.count
		switch f.letter {
		case 0:
			b.WriteString(f.text)
		case 'y':
			if n == 2 {
				b.WriteString(pad(t.Year()%100, 2))
			} else {
				b.WriteString(pad(t.Year(), n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(t.Month().String())
			case n == 3:
				b.WriteString(t.Month().String()[:3])
			default:
				b.WriteString(pad(int(t.Month()), n))
			}
		case 'd':
			b.WriteString(pad(t.Day(), n))
		case 'D':
			b.WriteString(pad(t.YearDay(), n))
		case 'Q':
			b.WriteString(pad((int(t.Month())+2)/3, n))
		case 'H':
			b.WriteString(pad(t.Hour(), n))
		case 'k':
			b.WriteString(pad((t.Hour()+23)%24+1, n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, n))
		case 'h':
			b.WriteString(pad((t.Hour()+11)%12+1, n))
		case 'm':
			b.WriteString(pad(t.Minute(), n))
		case 's':
			b.WriteString(pad(t.Second(), n))
		case 'S':
			frac := pad(t.Nanosecond(), 9)
			if n > 9 {
				frac += strings.Repeat("0", n-9)
			}
			b.WriteString(frac[:n])
		case 'E':
			if n >= 4 {
				b.WriteString(t.Weekday().String())
			} else {
				b.WriteString(t.Weekday().String()[:3])
			}
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		}
	}
	return b.String(), nil
}

// parseWithPattern reads s with a Spark datetime pattern as a UTC time in
// microseconds. A field of one letter takes one or more digits, a longer
// one exactly that many (yy is 2000 to 2099); ok is false when s does not
// match or names a date that does not exist.
func parseWithPattern(s, pattern string) (micros int64, ok bool, err error) {
	fields, err := splitPattern(pattern)
	if err != nil {
		return 0, false, err
	}
	y, mo, d, h, mi, sec, frac := 1970, 1, 1, 0, 0, 0, int64(0)
	pm, hasAMPM := false, false
	for _, f := range fields {
		if f.letter == 0 {
			if !strings.HasPrefix(s, f.text) {
				return 0, false, nil
			}
			s = s[len(f.text):]
			continue
		}
		if f.letter == 'a' {
			switch {
			case strings.HasPrefix(strings.ToUpper(s), "AM"):
			case strings.HasPrefix(strings.ToUpper(s), "PM"):
				pm = true
			default:
				return 0, false, nil
			}
			hasAMPM, s = true, s[2:]
			continue
		}
		if f.letter == 'E' || ((f.letter == 'M' || f.letter == 'L') && f.count >= 3) {
			found := false
			for m := time.January; m <= time.December && f.letter != 'E'; m++ {
				name := m.String()
				if f.count == 3 {
					name = name[:3]
				}
				if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
					mo, s, found = int(m), s[len(name):], true
					break
				}
			}
			if f.letter == 'E' {
				for w := time.Sunday; w <= time.Saturday; w++ {
					name := w.String()
					if f.count < 4 {
						name = name[:3]
					}
					if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
						s, found = s[len(name):], true
						break
					}
				}
			}
			if !found {
				return 0, false, nil
			}
			continue
		}
		width := f.count
		maxWidth := width
		if width == 1 {
			maxWidth = 9
		}
		j := 0
		for j < len(s) && j < maxWidth && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 || j < width {
			return 0, false, nil
		}
		n, _ := strconv.Atoi(s[:j])
		digits := s[:j]
		s = s[j:]
		switch f.letter {
		case 'y':
			y = n
			if f.count == 2 {
				y = 2000 + n
			}
		case 'M', 'L':
			mo = n
		case 'd':
			d = n
		case 'H', 'k':
			h = n % 24
		case 'h', 'K':
			h = n % 12
		case 'm':
			mi = n
		case 's':
			sec = n
		case 'S':
			for len(digits) < 6 {
				digits += "0"
			}
			frac, _ = strconv.ParseInt(digits[:6], 10, 64)
		default: // D and Q are accepted but not checked against the date
		}
	}
	if s != "" || h > 23 || mi > 59 || sec > 59 {
		return 0, false, nil
	}
	if hasAMPM && pm {
		h += 12
	}
	days, ok := civilDays(y, mo, d)
	if !ok {
		return 0, false, nil
	}
	return days*microsPerDay + int64(h*3600+mi*60+sec)*microsPerSecond + frac, true, nil
}
