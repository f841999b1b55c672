package datafile

import (
	"errors"
	"strings"

	"github.com/godelta/delta/deltaerr"
)

// Error kinds of this package, matched with errors.Is. Errors about bytes
// that cannot be decoded are *deltaerr.CorruptError and match
// deltaerr.ErrCorrupt.
var (
	// ErrTypeMismatch is returned by Read when a column of the file cannot
	// be read as the type the caller wants: an integer where a string is
	// wanted, a long where an integer is wanted (narrowing), a list where a
	// struct is wanted. The *ColumnError names the column. It also matches
	// deltaerr.ErrCorrupt: the file does not hold what the table's schema
	// says.
	ErrTypeMismatch = errors.New("datafile: column type cannot be read as the wanted type")

	// ErrUnsupportedType is returned by Schema for a Parquet column with no
	// Delta type (TIME, INTERVAL, FLOAT16, unsigned 64-bit integers), and by
	// Read for a wanted type this package cannot read (geometry,
	// geography, shredded variants). It also matches
	// deltaerr.ErrUnsupportedFeature.
	ErrUnsupportedType = errors.New("datafile: unsupported column type")
)

// ColumnError is the error for one column: its kind is ErrTypeMismatch or
// ErrUnsupportedType.
type ColumnError struct {
	Kind   error    // ErrTypeMismatch or ErrUnsupportedType
	Column []string // path of physical names from the top of the file
	Reason string   // e.g. "INT64 (TIMESTAMP(MICROS)) as integer"
}

func (e *ColumnError) Error() string {
	return e.Kind.Error() + ": column " + strings.Join(e.Column, ".") + ": " + e.Reason
}

// Is reports whether target is the error's kind or the deltaerr kind it
// belongs to.
func (e *ColumnError) Is(target error) bool {
	if target == e.Kind {
		return true
	}
	switch e.Kind {
	case ErrTypeMismatch:
		return target == deltaerr.ErrCorrupt
	case ErrUnsupportedType:
		return target == deltaerr.ErrUnsupportedFeature
	}
	return false
}

func mismatch(path []string, reason string) error {
	return &ColumnError{Kind: ErrTypeMismatch, Column: append([]string(nil), path...), Reason: reason}
}

func unsupported(path []string, reason string) error {
	return &ColumnError{Kind: ErrUnsupportedType, Column: append([]string(nil), path...), Reason: reason}
}

// fileName stands for the file in corrupt errors: Open is given bytes, not
// a path. Callers that know the path wrap the error with it.
const fileName = "Parquet data file"

// corruptf returns a *deltaerr.CorruptError with a formatted reason.
func corruptf(format string, args ...any) error {
	return deltaerr.Corruptf(fileName, format, args...)
}

// abort carries an error out of the decoding code by panic, so that the
// per-value paths need no error returns; guard turns it back into an
// error at the API boundary. Only this package's decoding code panics
// with it.
type abort struct{ err error }

// fail aborts decoding with err.
func fail(err error) { panic(abort{err}) }

// failf aborts decoding with a corrupt-file error.
func failf(format string, args ...any) { fail(corruptf(format, args...)) }

// guard runs fn, turning an abort into its error and any other panic (of
// the Parquet decoder, on bad input) into a corrupt-file error.
func guard(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if a, ok := v.(abort); ok {
				err = a.err
				return
			}
			err = &deltaerr.CorruptError{Path: fileName, Reason: "Parquet decoder failed", Err: panicError{v}}
		}
	}()
	return fn()
}

type panicError struct{ v any }

func (p panicError) Error() string {
	if e, ok := p.v.(error); ok {
		return e.Error()
	}
	if s, ok := p.v.(string); ok {
		return s
	}
	return "panic"
}
