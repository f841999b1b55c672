package write

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

// Error kinds of this package, matched with errors.Is.
var (
	// ErrConstraint is matched by every *ConstraintError: a row that breaks
	// a NOT NULL column, an invariant, a CHECK constraint, a generated
	// column's expression, or a required predicate. It matches
	// deltaerr.ErrInvalidArgument.
	ErrConstraint = fmt.Errorf("write: constraint violated: %w", deltaerr.ErrInvalidArgument)

	// ErrAppendOnly is returned for an operation that would remove rows
	// from a table with delta.appendOnly=true. It is txn.ErrAppendOnly
	// (tableconfig.ErrAppendOnly), which Commit returns for the same
	// reason, and matches deltaerr.ErrInvalidArgument.
	ErrAppendOnly = tableconfig.ErrAppendOnly

	// ErrInvalidSpec is returned by NewTable for a table specification that
	// breaks a rule: a partition column missing or of a type that cannot be
	// partitioned, duplicate names, a bad property value, an expression
	// that does not parse. It matches deltaerr.ErrInvalidArgument.
	ErrInvalidSpec = fmt.Errorf("write: invalid table specification: %w", deltaerr.ErrInvalidArgument)

	// ErrProtocolDowngrade is returned by Evolve for delta.minReaderVersion
	// or delta.minWriterVersion below the table's version when the
	// request adds nothing to the protocol: a property never lowers a
	// protocol (Spark: DELTA_INVALID_PROTOCOL_DOWNGRADE). It matches
	// deltaerr.ErrInvalidArgument.
	ErrProtocolDowngrade = fmt.Errorf("write: protocol downgrade: %w", deltaerr.ErrInvalidArgument)

	// ErrNoRows is returned by Append when batches hold no row at all (an
	// empty or header-only input): no data file is written and nothing is
	// committed, since the commit would add a version that changes
	// nothing. It is not an invalid argument: callers that accept empty
	// input test for it and report that nothing was appended.
	ErrNoRows = errors.New("write: no rows to append, nothing committed")

	// ErrBatch is returned by Rows for a batch whose shape does not match
	// the table schema. It matches deltaerr.ErrInvalidArgument.
	ErrBatch = fmt.Errorf("write: malformed batch: %w", deltaerr.ErrInvalidArgument)

	// ErrAppVersionCommitted is returned by Append with CommitOptions.App
	// set when the table already holds a txn action of that application
	// at that version or a later one: the batch was committed before (by
	// this process before a crash, say), so nothing is written or
	// committed again. It is not a failure of the write: exactly-once
	// producers test for it and skip the batch.
	ErrAppVersionCommitted = errors.New("write: the application already committed this version, nothing committed")

	// ErrIdentityExplicit is the Err of the *ConstraintError (kind
	// KindIdentity) of a row that gives a value for an identity column
	// defined GENERATED ALWAYS (delta.identity.allowExplicitInsert false),
	// which only the writer may fill (Spark:
	// DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED). It matches
	// deltaerr.ErrInvalidArgument.
	ErrIdentityExplicit = fmt.Errorf("write: a value given for a GENERATED ALWAYS identity column: %w", deltaerr.ErrInvalidArgument)

	// ErrIdentityOverflow is the Err of the *ConstraintError (kind
	// KindIdentity) of a row whose identity value would not fit in a long:
	// the column's values are used up (PROTOCOL.md: overflow must be
	// detected and the write refused). It matches
	// deltaerr.ErrInvalidArgument.
	ErrIdentityOverflow = fmt.Errorf("write: identity column values overflow a long: %w", deltaerr.ErrInvalidArgument)
)

// Constraint kinds, as ConstraintError.Kind gives them.
const (
	KindNotNull   = "NOT NULL"
	KindInvariant = "invariant"
	KindCheck     = "CHECK constraint"
	KindGenerated = "generated column"
	KindPredicate = "replaceWhere predicate"
	KindIdentity  = "identity column"
)

// ConstraintError says which constraint a row broke. errors.Is(err,
// ErrConstraint) reports true for it.
type ConstraintError struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Name is the constraint's name (CHECK), or the column it is on.
	Name string
	// Expression is the constraint's text, when it has one.
	Expression string
	// Row is the row's index among all rows given to the call, from 0.
	Row int64
	// Values shows the row's values, for the message.
	Values string
	// Err is the evaluation error, when the constraint could not be
	// evaluated.
	Err error
}

func (e *ConstraintError) Error() string {
	msg := fmt.Sprintf("write: %s %s", e.Kind, e.Name)
	if e.Expression != "" {
		msg += " (" + e.Expression + ")"
	}
	msg += fmt.Sprintf(" violated by row %d", e.Row)
	if e.Values != "" {
		msg += " " + e.Values
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is reports whether target is ErrConstraint or deltaerr.ErrInvalidArgument.
func (e *ConstraintError) Is(target error) bool {
	return target == ErrConstraint || target == deltaerr.ErrInvalidArgument
}

// Unwrap returns the evaluation error, if any.
func (e *ConstraintError) Unwrap() error { return e.Err }

func specErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidSpec, fmt.Sprintf(format, args...))
}
