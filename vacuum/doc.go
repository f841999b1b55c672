// Package vacuum deletes the files under a Delta table's root that no
// version inside the retention window needs: data files that were removed
// long enough ago, their deletion-vector files, change-data files, and the
// orphans of writes that never committed. It is Delta Spark's VACUUM.
//
// # What is kept
//
// The cut-off is Now minus the retention (the table's
// delta.deletedFileRetentionDuration, 7 days by default, or
// Options.Retention). Every version committed after the cut-off must still
// read, so the files kept are, as Spark computes them from the latest
// snapshot: every live file (an add), every file a tombstone (a remove)
// deleted at or after the cut-off, and the deletion-vector files both kinds
// name (storage type "u", and "p" when the URI lies under the root). A
// remove without a deletionTimestamp counts as deleted at time zero.
//
// # Full and lite
//
// Full (the default) walks the whole root with logstore.ListDirs and
// List, and deletes every file that is not kept and was last modified
// before the cut-off (a newer file may belong to a write still in flight).
// It never descends into, or deletes within, a hidden directory (one whose
// name starts with '_' or '.'), except _change_data and a partition
// directory of a partition column whose name starts so ("_p=1"); so
// _delta_log, _symlink_format_manifest and _sidecars are never touched.
// Hidden files (".part-0.crc", "_SUCCESS") are left too, as Spark leaves
// them. Symbolic links are never followed: the local store yields no
// linked directory to walk, and refuses to list or delete through a link
// that leads out of the root (logstore/local), so files outside the root
// survive whatever links point there.
//
// With Options.Inventory, a full VACUUM takes the table's files and
// directories from an inventory (Spark's VACUUM ... USING INVENTORY: rows
// of path, length, isDir, modificationTime) instead of listing the root,
// and applies the same rules to them. An entry must be a fully qualified
// path under the root, else it is skipped and counted; a file the
// inventory omits stays; a file without a time is refused, since the
// retention could not protect it; other tables inside the root are found
// by looking for their _delta_log in the store, not in the inventory.
//
// Lite (Options.Lite) lists nothing, as Spark's VACUUM LITE: it reads the
// commit files from the one after the last VACUUM's (see below; from the
// earliest commit when none is recorded) through the newest commit at or
// before the cut-off, and deletes the files their removes deleted before the
// cut-off (with the removes' deletion-vector files) and the change-data files
// their cdc actions name, unless a kept file has the same key. It reads no
// checkpoint, since checkpoints drop expired removes. Orphans of failed writes
// stay until a full VACUUM.
//
// # _last_vacuum_info
//
// Lite mode cannot see the removes of commits that log cleanup
// (delta.logRetentionDuration) has deleted. So every VACUUM that deletes
// records, in _delta_log/_last_vacuum_info (LastVacuumInfoKey), the JSON object
// {"latestCommitVersionOutsideOfRetentionWindow":N}, N being the newest commit
// at or before its cut-off: what those commits removed before the cut-off is
// gone. The file and its format are Spark's. A lite VACUUM on a log whose
// earliest commit is not 0 and is newer than N (or there is no N) is refused
// with a *LiteError (errors.Is ErrCannotVacuumLite) telling to run a full
// VACUUM: the rule Spark applies, so that Spark and this package decide alike
// on one table whoever vacuumed last. Two differences from Spark, both only
// ever recording a true N: a full VACUUM records N too (Spark's writes {}, so
// that in Spark a lite run fails after log cleanup even after a full one, the
// run its error asks for); and N never goes back (a run with a longer
// retention keeps a newer N already recorded, where Spark writes its own). A
// dry run records nothing; nor does a run whose cut-off is before every
// commit still in the log (Spark writes {} then).
//
// In both modes a file the log names by an absolute path outside the root
// (the source files of a shallow clone) is never deleted.
//
// # Safety checks
//
// A retention shorter than the table's is refused with a *RetentionError
// (errors.Is ErrRetentionTooShort) unless Options.Force is set: Spark's
// spark.databricks.delta.retentionDurationCheck.enabled. VACUUM commits
// (VACUUM START and END) and deletes what readers of the table need, so
// a table this build cannot write is refused first with the
// *deltaerr.FeatureError of txn.WriteSupported; that is also how the
// vacuumProtocolCheck feature is honoured (every writer feature of the
// table must be supported, whether the feature is present or not).
//
// # The log
//
// Unless DryRun, Vacuum commits an empty commit "VACUUM START" (parameters
// retentionCheckEnabled, specifiedRetentionMillis when a retention was
// given, defaultRetentionMillis; metrics numFilesToDelete and
// sizeOfDataToDelete) before deleting, and "VACUUM END" (parameter status
// COMPLETED or FAILED; metrics numDeletedFiles and numVacuumedDirectories)
// after, as Spark's VacuumCommand records them. These commits carry no file
// actions and change no data.
//
// # Concurrency and errors
//
// Deletes run in a bounded pool of Options.Concurrency workers. A failed
// delete stops the run: the files already deleted stay deleted, the
// VACUUM END commit says FAILED, and the error is returned with the
// Result so far. Running Vacuum again is safe (a delete of a missing file
// is not an error). Vacuum may run while others write to the table: files
// newer than the cut-off are never deleted, and a commit between the
// snapshot Vacuum reads and its deletes can only add files (newer than the
// cut-off) or tombstone them (they were live, so kept). The one exception,
// as in Spark, is a concurrent RESTORE to a version older than the
// retention window, which may re-add a file this run is deleting: restore
// only to versions inside the window while a VACUUM may run.
//
// # Empty directories
//
// After its deletes have all succeeded, a full VACUUM deletes the
// directories it walked that are empty, whether it emptied them or they
// were empty before (Spark's deletes those with no file older than the
// cut-off, and so a directory it empties only in its next run), deepest
// first, with logstore.RemoveEmptyDir: never the root, _delta_log or any
// other hidden directory (none is walked), never through a symbolic link,
// and never a directory that holds anything, atomically (rmdir). A writer
// of the local store makes its directory again if one goes under it.
// Stores whose directories are only key prefixes (object stores) have
// nothing to delete. A dry run and lite mode delete no directory.
// Result.DeletedDirs counts them; the END commit's numDeletedFiles does
// not (Spark's does).
package vacuum
