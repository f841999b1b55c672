// Package stream treats a Delta table as a message queue: a Source tails
// the table's log and yields, commit by commit, the rows each commit added
// (or, with the change data feed, every row it inserted, deleted or
// updated); a Sink commits a producer's batches exactly once; Compact merges
// the small files such producers leave, beside both, without either
// noticing.
//
// # The source: a version cursor over the log
//
// A Source holds one position, an Offset: the version of a commit (or of
// the snapshot the stream began with) and the index of the next file of it
// to read. Each Next plans a Batch from that position forward, in version
// order, and moves the position to the Batch's End. A caller that stores
// End after it has processed the batch (FileCursor, or TableCursor in its own
// Delta table, in the same commit as its output) and restarts with
// FromOffset(End) reads every change exactly once, in order.
//
// Where a stream begins (Start): the zero Start is Spark's default, the
// table's latest snapshot, read as if its files had all just been added,
// then every commit after it; FromVersion, FromTimestamp and FromLatest
// begin at a commit instead.
//
// What a batch is: the data-changing files of one or more consecutive
// commits, whole files, at most Options.MaxFilesPerTrigger of them (1000 by
// default, as Spark) and, when Options.MaxBytesPerTrigger is set, until
// their size reaches it; a batch always holds at least one file, so a
// commit larger than the limits is split across batches, and resumed at the
// right file. With the change data feed a batch spans whole commits (the
// feed of a commit is read as one), at least one. A Batch is a plan: its
// rows are read from storage, through scan's per-file reader or its change
// data feed reader, only as the caller iterates them.
//
// Which commits yield rows: a commit whose file actions all have
// dataChange=false (OPTIMIZE, Z-order, Compact) yields nothing and is
// passed over. A commit that removes rows (DELETE, UPDATE, MERGE, an
// overwrite) cannot be represented as appended rows: by default it stops
// the stream with a *ChangeCommitError naming the options, as Spark does;
// Options.SkipChangeCommits passes over such commits whole (their added
// rows too), Options.IgnoreDeletes passes over the commits that only
// delete, and Options.ReadChangeFeed reads them as delete and update rows.
//
// # Back-pressure and polling
//
// Nothing is read ahead: Next plans one batch when called, and the batch
// reads one file at a time as its rows are consumed, so memory holds one
// file's batch, whatever the producers do. When the stream has caught up,
// Next polls the log, waiting Options.PollInterval first and doubling the
// wait up to Options.MaxPollInterval while nothing arrives; the wait ends at
// once when ctx is cancelled. TryNext never waits.
//
// # What stops a stream
//
// A commit the stream needs that log cleanup (delta.logRetentionDuration)
// deleted: ErrVersionsCleanedUp. A metaData action whose schema no longer
// holds every column the stream reads, with the same type and the same
// physical name (a column-mapping rename or drop, a type change): a
// *SchemaChangeError, as Spark's source refuses non-additive schema
// changes. Columns added are allowed: the stream keeps the columns it
// began with.
//
// Another table at the location: a stream remembers the table id
// (metaData.id) of the table it began with, and every offset it gives
// carries it. Before it reads a commit it has not listed yet, it makes
// sure the log is still that table's (the table is loaded again when new
// commits appear, or when the newest commit it saw is gone or changed),
// so a table deleted and created again at the same path stops the stream
// with a *TableReplacedError instead of being read as the old table's
// next commits. A deleted table that is not created again only makes the
// stream wait. A stream resumed at an offset of another table is refused
// the same way.
//
// # The sink: exactly-once producers
//
// A producer numbers its batches; Sink.Write commits batch n with
// txn(appID, n) in the same commit as the batch's files (write.Append with
// write.AppTransaction), after checking, inside the transaction and again
// on every retry, that the table does not already hold appID at n or later.
// A producer killed at any point and restarted asks LastVersion and
// continues after it; a batch written twice is committed once. The txn
// record expires after the table's delta.setTransactionRetentionDuration,
// when set, as the protocol says: a producer must not stay away longer.
//
// # Compaction
//
// Compact rewrites small files into larger ones with dataChange=false
// (write.Rewrite with Copy and NoDataChange, committed through txn as
// OPTIMIZE does). Such a commit runs at snapshot isolation, so it never
// conflicts with a producer's blind appends, and the Source passes it over,
// so consumers never see it.
//
// # Concurrency
//
// A Source is not safe for concurrent use: one goroutine calls Next. A Batch
// may be read from any goroutine, more than once. A Sink is safe for
// concurrent use, though one application id is meant to have one writer
// at a time (two writers of one id conflict, and one of them retries).
//
// # Errors
//
// Errors are tested with errors.Is: ErrVersionsCleanedUp (also
// deltaerr.ErrVersionNotFound), ErrChangeCommit (every *ChangeCommitError),
// ErrSchemaChanged (every *SchemaChangeError), deltaerr.ErrTableReplaced
// (every *TableReplacedError), write.ErrAppVersionCommitted
// never escapes Write (it reports Skipped), and the errors of packages
// snapshot, scan, write and txn come through with their kinds.
package stream
