package schema

import (
	"errors"
	"strings"

	"github.com/godelta/delta/deltaerr"
)

// Error kinds returned by this package, matched with errors.Is. Every error
// about data read from the log (a schema string, a table property, a
// partition value) also matches deltaerr.ErrCorrupt; every error about a
// caller's argument also matches deltaerr.ErrInvalidArgument.
var (
	// ErrInvalidSchema is returned by Parse for a schema string that is not
	// JSON or does not follow the schema serialization format: a missing or
	// mistyped key, a top level that is not a struct, duplicate field names,
	// or decimal parameters out of range.
	ErrInvalidSchema = errors.New("schema: invalid schema")

	// ErrUnknownType is returned by Parse for a type this package does not
	// know: a primitive type name or an object "type" outside the protocol.
	ErrUnknownType = errors.New("schema: unknown data type")

	// ErrInvalidColumnMapping is returned for a column mapping mode other
	// than none, id and name, and by PhysicalSchema and PhysicalPath for a
	// field that lacks the metadata its mode requires.
	ErrInvalidColumnMapping = errors.New("schema: invalid column mapping")

	// ErrColumnNotFound is returned by PhysicalPath for a path that names no
	// column of the schema. It also matches deltaerr.ErrInvalidArgument.
	ErrColumnNotFound = errors.New("schema: column not found")

	// ErrInvalidValue is returned by ParsePartitionValue for a string that is
	// not a value of the column's type, or for a type that a partition column
	// cannot have; and by DecimalValue for parameters out of range (then
	// with deltaerr.ErrInvalidArgument rather than deltaerr.ErrCorrupt).
	ErrInvalidValue = errors.New("schema: invalid value")
)

// schemaError is the error type behind every error of this package. It
// matches its kind and the broader deltaerr kind it belongs to.
type schemaError struct {
	kind   error    // one of the Err* sentinels above
	parent error    // deltaerr.ErrCorrupt or deltaerr.ErrInvalidArgument
	path   []string // the column the error is about, if any
	msg    string
	err    error // underlying cause, if any
}

// Error is the kind's text without its package prefix (a message names no
// package), then the column, the detail and the cause.
func (e *schemaError) Error() string {
	var sb strings.Builder
	sb.WriteString(strings.TrimPrefix(e.kind.Error(), "schema: "))
	if len(e.path) > 0 {
		sb.WriteString(": column ")
		sb.WriteString(quotePath(e.path))
	}
	if e.msg != "" {
		sb.WriteString(": ")
		sb.WriteString(e.msg)
	}
	if e.err != nil {
		sb.WriteString(": ")
		sb.WriteString(e.err.Error())
	}
	return sb.String()
}

// Is reports whether target is the error's kind or its deltaerr kind.
func (e *schemaError) Is(target error) bool { return target == e.kind || target == e.parent }

// Unwrap returns the underlying cause.
func (e *schemaError) Unwrap() error { return e.err }

// corrupt returns an error of kind about data read from the log.
func corrupt(kind error, path []string, msg string, cause error) error {
	return &schemaError{kind: kind, parent: deltaerr.ErrCorrupt, path: clonePath(path), msg: msg, err: cause}
}

// badArgument returns an error of kind about a caller's argument.
func badArgument(kind error, path []string, msg string) error {
	return &schemaError{kind: kind, parent: deltaerr.ErrInvalidArgument, path: clonePath(path), msg: msg}
}

// quotePath renders a column path for messages: names joined by dots, each
// in backticks when it holds a dot or a backtick, as Spark quotes them.
func quotePath(path []string) string {
	parts := make([]string, len(path))
	for i, name := range path {
		if strings.ContainsAny(name, ".`") || name == "" {
			name = "`" + strings.ReplaceAll(name, "`", "``") + "`"
		}
		parts[i] = name
	}
	return strings.Join(parts, ".")
}

func clonePath(path []string) []string {
	if len(path) == 0 {
		return nil
	}
	return append([]string(nil), path...)
}
