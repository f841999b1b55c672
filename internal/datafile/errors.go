package datafile

import (
	"errors"
	"strings"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
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

// fileName stands for the file in corrupt errors of a File opened with
// Open, which is given bytes, not a path. Callers that know the path wrap
// the error with it, or use OpenObject.
const fileName = "Parquet data file"

// corruptf returns a *deltaerr.CorruptError with a formatted reason. It
// names no file: the File's name is filled in (File.named) where the
// error leaves the package.
func corruptf(format string, args ...any) error {
	return deltaerr.Corruptf("", format, args...)
}

// named fills in the File's name in a *deltaerr.CorruptError of err that
// names no file.
func (f *File) named(err error) error {
	var ce *deltaerr.CorruptError
	if errors.As(err, &ce) && ce.Path == "" {
		ce.Path = f.obj.Name()
	}
	return err
}

// fail aborts decoding (or encoding) with err, by a panic that guard (or
// protect) turns back into the error at the API boundary, so that the
// per-value paths need no error returns.
func fail(err error) { parquetio.Fail(err) }

// failf aborts decoding with a corrupt-file error. It names no file: the
// File's name is filled in when Read returns the error.
func failf(format string, args ...any) { parquetio.Corruptf("", format, args...) }

// guard runs fn, turning an abort into its error. Other panics are not
// recovered: parquet-go's calls on file bytes are wrapped where they are
// made (parquetio.Decode), so any other panic is a bug.
func guard(fn func() error) error { return parquetio.Catch(fn) }
