// Package datafile reads the Parquet data files of Delta tables into Delta
// values: it is the decoding core of a table scan. The scan decides which
// files to read and with which physical schema (column mapping applied,
// partition columns left out), then hands each file to Open and Read here;
// deletion vectors and predicates are applied by the caller, using each
// batch's row positions.
//
// # Usage
//
//	f, err := datafile.OpenObject(ctx, store, key, size) // parses the footer
//	err = f.Read(ctx, physical, datafile.ReadOptions{ByFieldID: idMode},
//		func(b *datafile.Batch) error {
//			// b.Columns[i][j] is field i of row b.FirstRow+j
//			return nil
//		})
//
// Open does the same for bytes read through an io.ReaderAt (a local file,
// bytes in memory). For a file with no Delta schema of its own (an
// expected-answer file, a file being added to a table), File.Schema
// infers one.
//
// # Batch form
//
// A Batch is column-major: one []schema.Value per wanted field, all the
// same length, plus the position of its first row in the file. Columns
// because Parquet is stored by column, so a top-level primitive column is
// decoded by one typed loop per page straight into its slice, with no
// per-row dispatch; schema.Value because it is the value model the rest of
// the library (predicates, partition values, statistics, the conformance
// harness) already speaks, so no second representation is needed and
// nested values (struct, array, map, variant) fit in the same slot. Rows
// are positions, not copies: a caller that drops rows (deletion vectors)
// skips indexes. The slices are reused from batch to batch; the values in
// them are not and may be kept.
//
// # How a read works
//
// Read first binds the wanted schema to the file's Parquet schema (the
// node tree built from the footer's schema elements, with the definition
// and repetition levels of every node). Fields match by field id when
// ReadOptions.ByFieldID is set and the field has one, else by name, exact
// first then ignoring case. Binding picks, for each wanted primitive, a
// converter from the file's physical and logical type to the wanted type,
// and refuses any pair it cannot read with a *ColumnError before a byte of
// data is read. A wanted field absent from the file reads as null at any
// depth (schema evolution); so does every void field.
//
// Then, row group by row group, the column chunks of the bound leaves are
// fetched (from a store, small adjacent chunks in one request, large ones
// a window at a time: package internal/parquetio), and each bound leaf
// column is walked a page at a time by the page cursor shared with the
// checkpoint reader (internal/parquetio), which checks each page before
// any of its entries is read: the page's definition and
// repetition levels, and its values converted to schema.Values in one
// loop per page (a dictionary is converted once, then indexed). Strings
// share one copy of the page's bytes, so primitives cost no allocation per
// value; binaries and decimals do, as schema.Value's constructors copy.
// Nested values are assembled row by row from the levels (the Dremel
// record assembly): a struct, array or map is null when the definition
// level of its first leaf is below its own, an array or map is empty when
// the level reaches the list but not the element, and each further element
// starts with the list's repetition level. Their element slices come from
// a slab, a few allocations per batch.
//
// # Parquet layouts read
//
// Every Delta type from the encodings writers use: boolean; byte and short
// as INT32 with INT(8)/INT(16) or no annotation; integer; long; float;
// double; string from BYTE_ARRAY annotated STRING, ENUM or JSON, or not at
// all; binary from BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY; date from INT32
// DATE; timestamp and timestamp_ntz from INT64 TIMESTAMP in millis, micros
// or nanos (to micros, rounding down) and from INT96 (Julian day and
// nanoseconds of the day, as Spark writes by default); decimal from INT32,
// INT64, FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY (two's complement,
// big-endian); variant from its group of binary metadata and value, read
// as the struct of those two, metadata first, and from a shredded group
// (Parquet's VariantShredding.md: metadata, an optional value and a
// typed_value primitive, object or array, nested at will), whose value is
// put back together into the same struct (shredded.go). Lists in the
// standard three-level form and in the legacy forms of LogicalTypes.md's
// backward-compatibility rules (two-level, a repeated group named array or
// <name>_tuple, Spark's bag/array, a bare repeated field); maps annotated
// MAP or MAP_KEY_VALUE.
//
// Type widening (the typeWidening feature): a file's byte, short or
// integer reads as any wider integer, as double or as a decimal with room
// for its digits; long as double or decimal(p>=20+s); float as double;
// decimal(p,s) as decimal(p',s') with s' >= s and p'-s' >= p-s, rescaled;
// date as timestamp_ntz at midnight.
//
// # Writing
//
// Writer (write.go) encodes Delta values as a Parquet file. Its schema
// conversion (writeschema.go) is the only Delta-to-Parquet schema writer
// of the module: the checkpoint writer describes its columns as a Delta
// schema and writes through Writer too. Variants are written unshredded,
// the group of value and metadata binaries, which the protocol allows
// whether or not shredding is enabled. The statistics a Writer gathers
// are encoded by the one stats codec, internal/statsjson (Stats is its
// type).
//
// # Errors
//
// Bytes that cannot be decoded give a *deltaerr.CorruptError (matching
// deltaerr.ErrCorrupt) naming the file (the store key, or "Parquet data
// file" for Open) and, for a page, the column; a panic of parquet-go on
// bad input is recovered and reported the same way. A panic of this
// package's own code is a bug and is not recovered. A failure of the
// store or the io.ReaderAt is returned as that error, never as
// corruption. A column whose type cannot
// be read as the wanted one gives a *ColumnError matching ErrTypeMismatch
// (and deltaerr.ErrCorrupt); a type with no Delta equivalent, or one this
// package cannot read, ErrUnsupportedType (and
// deltaerr.ErrUnsupportedFeature). An error of the callback stops the
// read and is returned as is; a panic in the callback is not recovered.
//
// # Concurrency
//
// A File is immutable once opened. Reads keep their state to themselves:
// any number may run at once on one File. One Read calls its callback on
// its own goroutine, one batch at a time; the only goroutines it starts
// fetch a row group's column chunks from a store, and have returned
// before the chunks are decoded.
package datafile
