// Package statsjson is the one codec of the per-file statistics of add
// actions (PROTOCOL.md, "Per-file Statistics"):
//
//	{"numRecords":3,"tightBounds":true,
//	 "minValues":{"a":1,"s":{"b":"x"}},"maxValues":{...},"nullCount":{...}}
//
// Every package that writes, reads, skips over or rewrites that JSON goes
// through it:
//
//   - Writing: Stats.JSON encodes what the data file writer
//     (internal/datafile) gathered; AppendTimestamp is the one form of a
//     timestamp bound, used by it and by the checkpoint reader when it turns
//     stats_parsed back into JSON.
//   - Parsing: Scanner.Fields walks the top-level members of a stats
//     string. The Scanner validates the whole input (RFC 8259) while
//     handing out only what the caller asks for, without reflection and,
//     for strings without escapes, without copying. expr builds its typed Stats (data
//     skipping) on it, and the checkpoint writer its stats_parsed column.
//   - Cheap reads: NumRecords reads numRecords and skips the rest (row
//     tracking, icebergCompatV2 checks, OPTIMIZE's deletion-vector purge,
//     deletion-vector rewrites).
//   - Rewriting: Widen marks the bounds wide (tightBounds false) after a
//     deletion vector is added.
//
// Hostile input never panics: nesting deeper than MaxDepth, numbers of
// any size and values of the wrong JSON type give an error matching
// ErrInvalid (for malformed JSON) or leave the statistic unknown.
//
// Keys are physical column names under column mapping; this package does
// not look at the table schema.
package statsjson
