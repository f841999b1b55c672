package delta

import (
	"context"

	"github.com/godelta/delta/vacuum"
)

// VacuumOptions tune Vacuum; see vacuum.Options. The zero value is a full
// VACUUM with the table's delta.deletedFileRetentionDuration (7 days).
type VacuumOptions = vacuum.Options

// InventoryEntry is one row of VacuumOptions.Inventory: a file or
// directory of the table, from an inventory report.
type InventoryEntry = vacuum.InventoryEntry

// VacuumResult says what Vacuum deleted (or, in a dry run, would).
type VacuumResult = vacuum.Result

// ErrRetentionTooShort is the kind of the error Vacuum returns for a
// retention shorter than the table's without Force.
var ErrRetentionTooShort = vacuum.ErrRetentionTooShort

// ErrCannotVacuumLite is the kind of the error a lite Vacuum returns when
// log cleanup has deleted commits no VACUUM has handled: run a full one.
var ErrCannotVacuumLite = vacuum.ErrCannotVacuumLite

// Vacuum deletes the files under the table's root that no version inside
// the retention window needs: removed data files and their deletion
// vectors, change-data files, and orphans of failed writes, never anything
// in _delta_log or other hidden directories, outside the root, or through
// a symbolic link out of it. See package vacuum for what is kept, the lite
// mode, the retention check and the VACUUM START and END commits.
func (t *Table) Vacuum(ctx context.Context, opts VacuumOptions) (VacuumResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return VacuumResult{}, err
	}
	if opts.Txn.EngineInfo == "" {
		opts.Txn.EngineInfo = EngineInfo
	}
	return vacuum.Vacuum(ctx, snap, opts)
}
