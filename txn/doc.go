// Package txn writes Delta commits with optimistic concurrency control: a
// Transaction reads one snapshot of a table, stages actions, and commits
// them as the next version of the log, checking on the way for conflicts
// with the writers that got there first.
//
//	tx := txn.Begin(snap, txn.Options{Operation: "WRITE"})
//	tx.ReadPredicate(pred)             // what the writer read, if anything
//	tx.Add(newFiles...)                // data files already written
//	res, err := tx.Commit(ctx)         // res.Version, res.Timestamp, res.Attempts
//	var ce *txn.ConflictError
//	if errors.As(err, &ce) { ... }     // ce.Kind, ce.Version: begin again
//	txn.PostCommit(ctx, &res)          // the checkpoint due, if any
//
// # What is atomic, and when a commit becomes visible
//
// A commit is one file, _delta_log/<version>.json, written with the store's
// PutIfAbsent. That put is the one switch: before it returns nil nothing of
// the commit is visible to any reader, after it every action of the commit
// is, all at once. Data files, deletion vectors and change-data files must be
// written before Commit is called; they stay invisible until a commit names
// them. Of many writers racing for one version, exactly one wins (the
// logstore contract); the others see logstore.ErrAlreadyExists and never
// overwrite it.
//
// # Conflicts and isolation levels
//
// A writer that loses the race for version v reads every commit from v up
// to the newest (the "winners") and checks its own transaction against each,
// in order. The checks are those of Delta Spark's ConflictChecker:
//
//  1. A winner that changed the protocol, or that set one while this
//     transaction also does: ConflictProtocolChanged.
//  2. A winner that changed the metadata: ConflictMetadataChanged. One
//     whose metadata differs only in identity columns' high-water marks
//     (a write that generated identity values) conflicts only with a
//     transaction that stages metadata too, as Spark's ConflictChecker
//     tolerates such winners; so two writers that both generate values
//     conflict, and the loser runs again on the new marks.
//  3. A domainMetadata action for a domain this transaction also sets:
//     ConflictDomain. The row-tracking domain delta.rowTracking is the
//     exception: it is rebased (see Row tracking).
//  4. A txn action for an application id this transaction sets or read
//     with TxnVersion: ConflictAppTransaction. Two concurrent commits for one
//     application id therefore always conflict, which is what makes
//     SetTransaction exactly-once.
//  5. Files added by the winner that this transaction should have read:
//     ConflictConcurrentAppend. Which adds count depends on the isolation
//     level (below); an add counts when it is in a partition one of the
//     ReadPredicate predicates may match (Unknown counts as a match, so a
//     predicate on data columns, or on an unpartitioned table, matches every
//     add), or at all after ReadWholeTable. A blind append (no removes,
//     nothing read) never conflicts here.
//  6. A winner that removed a file this transaction read (ReadFiles), or
//     removed any file after ReadWholeTable: ConflictDeleteRead.
//  7. A winner that removed a file this transaction also removes:
//     ConflictDeleteDelete.
//
// Checks 6 and 7 apply at every isolation level. The levels differ in check
// 5 only:
//
//   - Serializable: every add of a winner counts. The commits read as if run
//     one after another, in version order.
//   - WriteSerializable (the default, as in Delta Spark): adds of winners
//     that were blind appends do not count, unless this transaction changes
//     the metadata. Writes are serializable, but a reader of the table may
//     see a blind append that committed "between" this transaction's read
//     and its commit.
//   - SnapshotIsolation: no add counts.
//
// A transaction whose staged actions are only file actions with
// dataChange=false (compaction, Z-order, and the empty transaction) is run
// at SnapshotIsolation whatever was asked: it rewrites data without
// changing it, so concurrent appends cannot make it wrong. A blind append
// against a compaction thus never conflicts, while a DELETE against a
// compaction that removed a file the DELETE read does (check 6).
//
// The isolation level is, in order: Options.Isolation, the table property
// delta.isolationLevel, then WriteSerializable. The level used is recorded
// in commitInfo.isolationLevel.
//
// Each failed check is a *ConflictError with its Kind and the Version of the
// winner; errors.Is(err, ErrConflict) reports true for all of them. The
// transaction is then over: begin a new one on a fresh snapshot, or use
// Update, which does so and runs its function again.
//
// # Rebase and retry
//
// When no check fails, the transaction is rebased onto the newest winner and
// tried again at the next version: its readVersion moves up, its in-commit
// timestamp and row ids are computed again, and the put is retried after a
// short, jittered, capped backoff. Options.MaxRetries bounds the attempts;
// past it Commit returns ErrRetriesExhausted.
//
// # Ambiguous puts and crashes
//
// A put that fails with anything other than ErrAlreadyExists (a timeout, a
// reset connection, a cancelled context) may or may not have landed. Commit
// never retries it blindly: it reads that version back. If the commit there
// carries this transaction's commitInfo.txnId (a fresh UUID per
// transaction), the commit succeeded and Commit returns that version; if the
// commit there is another writer's, it is a winner to check as above; if
// there is none, the put is tried again. Every winner is checked for the
// same txnId, so a transaction never commits twice. When the version cannot
// be read back either, or when the retries run out after a put that may
// still land, Commit returns an error matching ErrCommitUnknown: the caller
// must look at the log (for its txnId) before trying again.
//
// A put that certainly did not land (logstore.IsCertainFailure: permission
// refused, a missing root, a full disk or a directory in the way before
// anything was written) is neither retried nor read back: Commit returns
// it at once, wrapped with the commit key and matching its storage kind
// (logstore.ErrPermission, ErrNotWritten, ...), and not ErrCommitUnknown
// unless an earlier put of the same Commit may have landed. The caller may
// then delete the data files it wrote (package write does).
//
// A process that crashes before the put leaves no trace in the log; data
// files it wrote are orphans for VACUUM. A crash after the put leaves a
// complete commit: the put is atomic, so no reader ever sees part of one.
//
// # Creating a table
//
// Version 0 is a commit like any other: BeginCreate starts a transaction on
// no snapshot, which must stage a protocol and a metaData, and its Commit
// puts commit 0 with put-if-absent. Of concurrent creators exactly one
// wins; the others, and any creator where a log file already is, get
// ErrTableExists. An ambiguous put is read back by txnId as above.
//
// # After the commit
//
// Commit returns a CommitResult once the commit is in the log: the version,
// the commit's timestamp, the attempts it took, and the maintenance it made
// due (PostCommitWork): a checkpoint when the version is a multiple of
// delta.checkpointInterval (default 10), followed by the cleanup of expired
// log files. Commit does not run that work, so that a commit's latency and
// its error are the commit's alone; PostCommit runs it, and the caller
// chooses when (package delta runs it after every write through a Table).
// The work is optional for correctness: a failed or skipped checkpoint
// leaves the commits, from which readers reconstruct the table, and
// PostCommit reports a failure in the result and the log, never as an
// error of the commit.
//
// # In-commit timestamps
//
// When the table has the inCommitTimestamp writer feature and
// delta.enableInCommitTimestamps=true once the commit lands (the staged
// protocol and metadata decide, as Spark's new metadata does), commitInfo is
// the first action of the commit and carries inCommitTimestamp = max(now,
// previous commit's timestamp + 1), recomputed on every attempt against the
// newest winner, so timestamps strictly increase with versions. commitInfo
// is always written first, whether or not the table has them.
//
// The commit that turns them on for a table that has commits (the snapshot
// read has them off) also stamps its metaData (staging the snapshot's when
// only the protocol was staged) with delta.inCommitTimestampEnablementVersion
// and delta.inCommitTimestampEnablementTimestamp: the version it lands at
// and its own inCommitTimestamp, computed again on every attempt. Its
// previous commit's timestamp is that commit file's modification time, for
// the snapshot read and for every winner, as readers date those commits.
//
// # Row tracking
//
// When the table's protocol supports the rowTracking writer feature (the
// protocol's writer requirements apply from support, not only from
// delta.enableRowTracking), every staged add without a baseRowId gets one
// from the row-id high-water mark kept in domain delta.rowTracking
// ({"rowIdHighWaterMark":N}, N the highest id assigned, -1 when absent),
// using numRecords from the add's stats, which is then required. Adds
// without a defaultRowCommitVersion get the commit's version. The commit
// carries the new mark. On a rebase both are assigned again from the
// winner's mark and the new version, so ids never overlap.
//
// # Table properties and append-only tables
//
// Commit reads the table's properties only through the snapshot's
// tableconfig.Config, and checks staged metadata with tableconfig.New: a
// staged property value Spark would refuse is a *tableconfig.PropertyError
// (errors.Is deltaerr.ErrInvalidArgument). On a table whose
// delta.appendOnly is true (in any case, as Spark reads it) in the
// snapshot read, in the staged metadata, or in the metadata of a winner
// it would be rebased on, a transaction that stages a remove with
// dataChange=true is refused with ErrAppendOnly, and nothing is written.
// Removes with dataChange=false (compaction) stay allowed.
//
// A commit that stages a metaData (CREATE, ALTER, an append that merges
// its schema, CLONE, RESTORE, CONVERT: every change of metadata) is also
// checked against the metadata it replaces by
// tableconfig.Config.CheckMetadataChange, the one place for the rules
// Spark checks on new metadata: no column name Spark cannot write without
// column mapping, no column named as a change data feed column while the
// feed is on, no protocol request stored as a property.
//
// # Table features
//
// Commit refuses, with a *deltaerr.FeatureError (errors.Is
// deltaerr.ErrUnsupportedFeature), a table whose protocol needs a writer
// feature this package does not honour; WriteSupported lists the rules and
// lets callers ask before writing data. Invariants, CHECK constraints and
// generated columns constrain rows, which a commit cannot see: a table that
// uses them is refused unless the rows staged were checked by package
// write, which marks its transactions through an internal package; no
// option of this package lets a caller claim it. (write.AppendFiles, which
// commits files that write.Rows wrote elsewhere, takes the caller's word
// that they were: its doc says so.)
//
// # Concurrency
//
// A Transaction is not safe for concurrent use; Begin one per goroutine.
// Any number of transactions, in one process or many, may commit to one
// table at once: the put-if-absent of the commit file is the only
// coordination they need. The examples show a blind append and an
// exactly-once Update.
package txn
