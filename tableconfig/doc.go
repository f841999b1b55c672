// Package tableconfig is the one checked view of a table's configuration:
// its protocol, its metadata, and its table properties (the delta.* keys
// of metaData.configuration), parsed once.
//
// Protocol and metadata as package actions decodes them are unchecked
// data. A property is only a string there, and each reader of a string
// ends up with its own rules: one compares "true" exactly, another
// ignores case; one parses "interval 7 days", another also "1 week".
// Two rules for one property are a bug waiting for the table that tells
// them apart (an append-only table that refuses an overwrite but accepts
// a remove). So the rule of the house is:
//
//	No code reads a delta.* table property except through this package.
//
// Property names are the Key* constants; no other package spells them.
// A *Config, built by New (package snapshot builds one per snapshot and
// exposes it as Snapshot.Config), answers every question: AppendOnly,
// ColumnMappingMode, CheckpointInterval, LogRetention, ... with the
// protocol taken into account where the protocol says it counts, and
// Spark's default where the property is not set.
//
// # Table features
//
// This package is also the one place that answers "can this library read
// or write this table": which table features exist, which legacy protocol
// versions imply them, which are read and which are written (features.go,
// one table), as kernel-rs's TableConfiguration does. ReadSupported and
// WriteSupported check a protocol (snapshot loading, scans and package txn
// call them); HasReaderFeature and HasWriterFeature say whether a protocol
// supports a feature; a Config answers IsFeatureSupported and
// IsFeatureEnabled for its own. Package actions only names the features.
//
// # Parsing
//
// Values are parsed as Spark's DeltaConfigs parses them: booleans in any
// case ("TRUE", "false"); integers with Spark's range checks
// (checkpointInterval > 0, dataSkippingNumIndexedCols >= -1, ...);
// intervals as CalendarInterval strings ("interval 7 days", "1 week",
// "168 hours"; months and years refused, see ParseInterval); enums in any
// case. Unknown keys, other engines' and future delta.* ones, are kept
// and never refused.
//
// # Invalid values
//
// Validate checks a property map when it is SET: table creation calls it,
// and so must a future ALTER TABLE ... SET TBLPROPERTIES. A table already
// on disk with a value Spark refuses (written by another engine) makes New
// fail, and with it the loading of its snapshot: Spark throws as soon as
// it reads the property, and guessing (the default? ignore the value?)
// could break the table's rules, such as append-only or retention. Both
// return a *PropertyError naming the key, the value and what is allowed;
// it matches ErrInvalidProperty and deltaerr.ErrInvalidArgument.
//
// # Rules on new metadata
//
// CheckMetadataChange holds the rules Spark applies to metadata a commit
// writes, beyond property values: column names Spark cannot write without
// column mapping, columns named as the change data feed's while the feed
// is on, protocol requests stored as properties. Package txn applies it
// to every commit that stages a metaData; New does not, so tables that
// break these rules stay readable.
//
// A *Config is immutable and safe for concurrent use. This package does no
// I/O and imports only actions, schema and deltaerr. The examples build a
// Config and read a few answers, and show Validate refusing a bad value.
package tableconfig
