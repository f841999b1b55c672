// Package deltaarrow reads and writes Delta tables as Apache Arrow record
// batches (github.com/apache/arrow-go/v18), the form Go data programs, and
// DuckDB, Polars or DataFusion through the Arrow C data interface, speak.
//
// It is a package of its own so that programs that do not use Arrow do not
// link arrow-go: nothing else in the module imports it.
//
// # Reading
//
// NewReader turns a scan (package scan: projection and predicate pushed
// down, deletion vectors applied, partition columns injected, column
// mapping and type widening resolved) into an array.RecordReader. Each
// scan batch becomes one record, converted column by column with typed
// builders: the type of a column is switched on once per batch, and the
// values are appended in a loop over that column's slice of schema.Value,
// which holds primitives unboxed. Scan is NewReader of a table's scan.
//
// Every Delta type has one Arrow type (Schema, ArrowType):
//
//	boolean          Boolean
//	byte/short/int/long  Int8/Int16/Int32/Int64
//	float/double     Float32/Float64
//	string, binary   String, Binary
//	date             Date32
//	timestamp        Timestamp(µs, "UTC")
//	timestamp_ntz    Timestamp(µs) without zone
//	decimal(p,s)     Decimal128(p,s) (exact; p ≤ 38)
//	struct/array/map Struct/List/Map, nullability from the Delta schema
//	variant          Struct{metadata, value: Binary}
//	geometry, geography  Binary (WKB; the CRS stays in the Delta schema)
//	void             Null
//
// A variant arrives as Spark writes it unshredded: a shredded file's
// variants are put back together by the scan.
//
// # Writing
//
// Append and Overwrite write the records of an array.RecordReader through
// package delta's Append and Overwrite, and so through package write, the
// one row writer (constraints, generated columns, statistics, partitions).
// The Arrow schema is matched to the table's by name (exactly, then ignoring
// case), recursively in structs: a column the table lacks is an error, a
// nullable table column the records lack is written as null (as Spark's
// schema enforcement does), and a type that does not convert exactly is an
// error. Besides the types above, the conversion takes narrower signed
// integers, float32 for double, large and view strings and binaries,
// Decimal256 and timestamps of any unit whose values are whole
// microseconds. Geometry and geography columns convert from any binary
// array, but the table writer refuses them (the geospatial feature is
// read-only here). Batches (a reader) and FromRecord (one record) convert
// records to schema.Batch for other writers. MergeSource binds records
// the same way and hands them to delta.Table.Merge as its source.
//
// # Errors and concurrency
//
// A schema mismatch is a *SchemaError, which matches ErrSchemaMismatch and
// deltaerr.ErrInvalidArgument with errors.Is. A reader is used by one
// goroutine at a time, as arrow-go's RecordReader contract says; its
// records are valid until the next call of Next unless retained. Release
// the reader when done: it stops the scan.
package deltaarrow
