// Package catalogmanaged reads and commits catalog-managed tables: tables
// with the catalogManaged feature, whose managing catalog, not the
// _delta_log listing, says which commits exist (PROTOCOL.md
// "Catalog-managed tables").
//
// # Design
//
// The rest of the library reads a log by listing _delta_log/ and reading
// <v>.json files, and commits by a put-if-absent of the next <v>.json. A
// *Store keeps both as they are and changes what they mean: it wraps the
// table's store and shows its log as the catalog has it.
//
//   - A listing of _delta_log/ first asks the catalog (Client.Commits) for
//     its latest ratified version and the ratified commits it still holds.
//     Files of versions past the latest ratified one are left out (a
//     published commit, checkpoint, checksum or compaction file the
//     catalog has not ratified yet). A ratified commit stands in for the
//     published <v>.json, whether one is there or not: the catalog's commit
//     is authoritative. Reads of <v>.json then serve the ratified commit:
//     the staged file under _delta_log/_staged_commits/, or the content of
//     an inline commit. Staged files the catalog did not report are never
//     read: they may be rejected or unfinished attempts.
//   - A put-if-absent of <v>.json is the commit protocol's option 1: the
//     actions are written to a new staged commit
//     _delta_log/_staged_commits/<v>.<uuid>.json, the catalog is asked to
//     ratify it as version v (Client.Commit), and, once it has, every
//     ratified commit up to v that is not yet published is copied to its
//     <v>.json, in version order, and the catalog told (Client.Published).
//     A version the catalog ratified for another commit is
//     logstore.ErrAlreadyExists, so the transaction rebases and retries as
//     it does for any lost race; an answer that did not come is
//     logstore.ErrOutcomeUnknown, and the transaction looks for its own
//     commit (its commitInfo txnId) in the catalog's view. A publication that
//     fails leaves the commit standing: it is ratified, and readers get it
//     from the catalog; the next commit publishes it.
//
// Everything above the store (snapshots, time travel, history, streams,
// conflict checks, the post-commit hooks) is then the same code for a
// catalog-managed table as for any other. A *Store reports itself as a
// deltalog.CatalogView, and packages snapshot and txn refuse a table with
// the feature through any other store (deltaerr.CatalogManagedError): its
// directory alone shows a wrong table, and a commit there would bypass the
// catalog. The protocol's writer rules are kept by the layers that own
// them: in-commit timestamps must be enabled (tableconfig.WriteSupported),
// every commitInfo carries a txnId (package txn), and the maintenance the
// protocol forbids without the catalog's permission (log cleanup, VACUUM,
// OPTIMIZE, REORG, auto compaction) is refused or skipped
// (tableconfig.Config.CheckMaintenance); checkpoints, log compaction and
// version checksums stay allowed, as the protocol says, and are written
// only for published versions because a commit is published before the
// put returns.
//
// # Invariants
//
// The store's view only moves forward: the latest ratified version it
// knows and the ratified commits it has seen are kept, and a ratified
// commit, being immutable, is served the same way once published. Keys
// outside _delta_log/ commit files pass through to the wrapped store
// untouched, so data files, deletion vectors and checkpoints resolve as
// for any table.
//
// # Transactions across tables
//
// A MultiTxn (delta.MultiTableTxn in the facade) commits several tables of
// one catalog as one transaction: each table's commit goes through its
// Store as above, but the Client it commits through holds the
// ratification request until every table of the transaction has asked,
// and the catalog ratifies them all in one step (MultiCommitter.CommitAll)
// or none. Lost races, logical conflicts and lost answers are handled by
// each table's commit pipeline as for a single table; see MultiTxn.
//
// The catalog itself is a Client: Memory is a catalog held in this
// process (one process, no persistence: tests, tools, and embedding);
// other catalogs (a Unity Catalog client, the library's own catalog
// server) implement the same interface.
package catalogmanaged
