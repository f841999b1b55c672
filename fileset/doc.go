// Package fileset holds the maintenance operations that take a table's set
// of live files as a whole from one place and put it in another: RESTORE
// (a commit that makes the latest version's files those of an older
// version), shallow CLONE (a new table whose version 0 names the files of
// another table at some version, by absolute path), and GENERATE
// symlink_format_manifest (the live files published as plain lists, per
// partition, for engines that read only Parquet).
//
// All three work on snapshots (package snapshot) and never read or rewrite
// data files: RESTORE and CLONE commit through package txn, the manifest
// is written with the store's Put. They follow Delta Spark's
// RestoreTableCommand, CloneTableCommand and GenerateSymlinkManifest in
// what they write, so that Spark, delta-rs and Delta Kernel read the
// result the same.
//
// # Files and keys
//
// A file is identified as the protocol reconciles it: its canonical path
// (location.Canonical) plus its deletion vector's unique id. Paths resolve
// through the snapshot's Location (package location), the one resolver: a
// path relative to the table, or absolute under its root, is a key of the
// table's store; an absolute path under a root the table trusts (a
// clone's source) is that root's; any other is refused.
//
// # Errors
//
// A RESTORE target that is not older than the latest version is
// deltaerr.ErrInvalidArgument; one whose files are gone (vacuumed) is a
// *MissingFilesError (errors.Is ErrMissingFiles), and nothing is
// committed. A clone target that already holds a table is
// txn.ErrTableExists. A manifest of a table with deletion vectors, or with
// column mapping, is refused with ErrManifestUnsupported, as Spark refuses
// it. Tables this build cannot write are refused with the
// *deltaerr.FeatureError of txn.WriteSupported. Functions here are safe for
// concurrent use; concurrent writers are handled by the commit's conflict
// checks.
package fileset
