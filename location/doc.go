// Package location says where a table lives and which files are its own.
//
// A Delta log names files by path: relative to the table root and
// percent-encoded (part-0.parquet, p=a%20b/part-1.parquet), or absolute
// (file:///data/t/part-0.parquet, s3a://bucket/t/x.parquet, the files of a
// shallow clone's source). Every part of this library that turns such a
// path into a store and a key (the scan, the writers and their rewrites,
// VACUUM in both modes, RESTORE, CLONE, CONVERT, the Iceberg converter,
// the table check) goes through one Location and its Resolve, so that a
// path means the same file to all of them. Two resolvers that disagree on
// one spelling of a path is how a VACUUM deletes a file a scan reads.
//
// # The forms a path may take
//
// Resolve accepts, for the table's own files:
//
//   - a relative path, percent-decoded, which must stay beneath the root
//     (no "..", no empty or "." segment once cleaned);
//   - an absolute path or URI whose canonical form lies under the root's:
//     "/data/t/x", "file:/data/t/x", "file:///data/t/x" and
//     "file://localhost/data/t/x" are one file; "s3a://" and "s3n://" are
//     "s3://"; "abfss://c@account.dfs.core.windows.net/p",
//     "abfs://…", "wasbs://…" and "az://c/p" are one container; a
//     scheme is compared without case; the path is percent-decoded.
//
// A relative path whose first segment holds a ':' reads as a URI scheme
// (RFC 3986 §4.2): writers escape it (EncodePath), and such a path in a
// log is an absolute URI of an unknown scheme, outside every root.
//
// # Which roots a table trusts
//
// Spark trusts every absolute path in a log. This library does not: a
// hostile or damaged log must not make a reader open, or a maintenance
// verb delete, files elsewhere. A Location trusts, for reading only:
//
//  1. its root;
//  2. the roots the table declares in its metadata under the configuration
//     key CloneSourceRootsKey, which CLONE writes (the source's root and,
//     transitively, the roots its source trusted), so that checkpoints and
//     log cleanup cannot lose them;
//  3. for a table whose metadata declares none, the source root named by
//     a CLONE commit 0 of this library, while that commit exists (clones
//     made before the key existed);
//  4. the roots its caller names, with Trust, for a shallow clone Spark
//     wrote (Spark records its source in no place a reader can rely on).
//
// A path under none of these is refused with deltaerr.ErrPathEscapesRoot.
// Files under a trusted outside root are read, never written or deleted:
// Key, which writers and VACUUM use, answers only for the table's own root.
//
// # Concurrency
//
// A Location is immutable once made, and safe for concurrent use; its
// lazily read trusted roots are read once. A Stores set is safe for
// concurrent use and is closed by the reading that made it.
package location
