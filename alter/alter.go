package alter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/rowcheck"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
	"github.com/godelta/delta/write"
)

// Error kinds of this package; each matches deltaerr.ErrInvalidArgument.
var (
	// ErrInvalidChange is a change the protocol or Spark refuses.
	ErrInvalidChange = fmt.Errorf("alter: invalid change: %w", deltaerr.ErrInvalidArgument)
	// ErrColumnMappingRequired is a rename or drop of a column on a table
	// without column mapping: its data files name columns by their display
	// names. Setting delta.columnMapping.mode to name (EnableColumnMapping)
	// allows it.
	ErrColumnMappingRequired = fmt.Errorf("alter: renaming or dropping a column needs column mapping: set the table property %s to name first: %w",
		tableconfig.KeyColumnMappingMode, deltaerr.ErrInvalidArgument)
	// ErrTypeWideningDisabled is a type change on a table whose
	// delta.enableTypeWidening is not true, which the protocol forbids.
	ErrTypeWideningDisabled = fmt.Errorf("alter: type widening is off: set the table property %s to true first: %w",
		tableconfig.KeyEnableTypeWidening, deltaerr.ErrInvalidArgument)
	// ErrColumnNotFound names a column the schema does not have.
	ErrColumnNotFound = fmt.Errorf("alter: no such column: %w", deltaerr.ErrInvalidArgument)
	// ErrConstraintNotFound is a drop of a CHECK constraint the table does
	// not have, without IF EXISTS.
	ErrConstraintNotFound = fmt.Errorf("alter: no such CHECK constraint: %w", deltaerr.ErrInvalidArgument)
	// ErrPropertyNotFound is an unset of a property the table does not
	// have, without IF EXISTS.
	ErrPropertyNotFound = fmt.Errorf("alter: no such table property: %w", deltaerr.ErrInvalidArgument)
)

// Operation names in commitInfo, as Delta Spark writes them. They are read
// by DESCRIBE HISTORY: never change them.
const (
	OpAddColumns        = "ADD COLUMNS"
	OpRenameColumn      = "RENAME COLUMN"
	OpDropColumns       = "DROP COLUMNS"
	OpChangeColumn      = "CHANGE COLUMN"
	OpSetProperties     = "SET TBLPROPERTIES"
	OpUnsetProperties   = "UNSET TBLPROPERTIES"
	OpAddConstraint     = "ADD CONSTRAINT"
	OpDropConstraint    = "DROP CONSTRAINT"
	OpUpgradeProtocol   = "UPGRADE PROTOCOL"
	propertiesParamName = "properties"
)

// Options tune a change. The zero value is usable.
type Options struct {
	// Txn configures the commit; its Operation and OperationParameters
	// are set by each function.
	Txn txn.Options
	// BackfillBatchFiles is the most files one ROW TRACKING BACKFILL
	// commit re-adds (backfillRowIDs); 0 means DefaultBackfillBatchFiles.
	BackfillBatchFiles int
}

// change is what one ALTER computes on a snapshot: the protocol and
// metadata to commit.
type change struct {
	protocol       actions.Protocol
	metadata       actions.Metadata
	readWholeTable bool
	protocolOnly   bool // commit the protocol alone (UPGRADE PROTOCOL)
}

// run commits the change fn computes on the latest snapshot, computing it
// again after a conflict.
func run(ctx context.Context, snap *snapshot.Snapshot, opts Options, op string, params map[string]any,
	fn func(ctx context.Context, s *snapshot.Snapshot) (change, error)) (txn.CommitResult, error) {
	to := opts.Txn
	to.Operation = op
	to.OperationParameters = params
	return txn.Update(ctx, snap, to, func(tx *txn.Transaction) error {
		s := tx.Snapshot()
		p, m := s.Protocol(), s.Metadata()
		if err := txn.WriteSupportedChecked(&p, &m); err != nil {
			return err
		}
		ch, err := fn(ctx, s)
		if err != nil {
			return err
		}
		if ch.readWholeTable {
			tx.ReadWholeTable()
		}
		if !write.SameProtocol(ch.protocol, p) {
			tx.SetProtocol(ch.protocol)
		}
		if !ch.protocolOnly {
			tx.SetMetadata(ch.metadata)
		}
		// No row is staged: there is none to check against the table's
		// invariants, constraints and generated columns (and ADD
		// CONSTRAINT checked the rows already there).
		rowcheck.Mark(tx)
		return nil
	})
}

// evolve returns the change that gives the table of s schema sch and
// properties props (write.Evolve).
func evolve(s *snapshot.Snapshot, sch *schema.StructType, props map[string]string) (change, error) {
	return evolveMeta(s, s.Metadata(), sch, props)
}

// evolveMeta is evolve from metadata m (s's, with partition columns
// renamed).
func evolveMeta(s *snapshot.Snapshot, m actions.Metadata, sch *schema.StructType, props map[string]string) (change, error) {
	p, m, err := write.Evolve(s.Protocol(), m, sch, props)
	if err != nil {
		return change{}, err
	}
	return change{protocol: p, metadata: m}, nil
}

// cloneSchema returns a deep copy of s's schema, to change.
func cloneSchema(s *snapshot.Snapshot) (*schema.StructType, error) {
	return schema.Parse(s.Schema().String())
}

// cloneProps returns a copy of s's table properties.
func cloneProps(s *snapshot.Snapshot) map[string]string {
	out := map[string]string{}
	for k, v := range s.Metadata().Configuration {
		out[k] = v
	}
	return out
}

// jsonString encodes v as JSON text, as Spark records operation
// parameters.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidChange, fmt.Sprintf(format, args...))
}

func errorf(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))
}
