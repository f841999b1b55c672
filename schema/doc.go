// Package schema is the data model of a Delta table's columns: the types of
// the protocol's schema serialization format, the values those columns hold,
// and their codecs. The packages that speak of columns, types or values
// (tableconfig, expr, snapshot, scan, write) speak through it; package
// actions keeps the schema as the string metaData stores.
//
// # Types
//
// A schema is a *StructType of StructFields, each with a DataType: a
// PrimitiveType (whose names are part of the on-disk format and never change),
// a DecimalType, a geospatial type, or a nested *StructType, *ArrayType or
// *MapType. The set is closed, so a type switch over them is complete. Parse
// decodes the schemaString of a metaData action and MarshalJSON (String)
// encodes it back; ParseDDL reads Spark SQL column definitions
// ("id BIGINT NOT NULL, name STRING"), the form a caller writes by hand.
// Field names are unique regardless of case: Field matches a name exactly and
// FieldFold ignoring case. A string's collation lives in its field's metadata
// (MetadataCollations; RenameCollations keeps it with a renamed field); a
// variant is read and written as the struct of its metadata and value
// binaries, whose encoding package schema/variant builds and takes apart.
//
// Column mapping (ColumnMappingMode, PhysicalName, PhysicalSchema,
// PhysicalPath) turns the logical schema into the names and ids the data files
// use. Whether the mode property counts is the protocol's business, decided by
// tableconfig.Config.ColumnMappingMode.
//
// # Values and batches
//
// A Value is one typed value: a partition value, a literal, a statistic or a
// cell of a row. It is a small immutable tagged union (40 bytes, no allocation
// for a primitive), safe to copy and to share; the zero Value is null. A Batch
// holds rows column by column, and is the one form rows take between reading
// (package scan) and writing (package write); its doc says who may keep its
// memory. Package schema/govalue maps Values to and from Go structs.
//
// The protocol's textual forms of a value have their codecs here, each the
// inverse of the other: ParsePartitionValue and FormatPartitionValue for
// partitionValues, ParseValueJSON and AppendValueJSON for statistics and
// JSON values.
//
// # Invariants, concurrency and errors
//
// The package does no I/O and imports only deltaerr. No function here
// modifies a type or value it is given (UnmarshalJSON aside, which fills its
// receiver), so a schema that nobody modifies, and any Value, is safe for
// concurrent use. Decoding never panics on bad input (Parse, ParseDDL and
// ParsePartitionValue are fuzzed). Errors match one of the kinds below with
// errors.Is, and also deltaerr.ErrCorrupt when the bad input came from the
// log (a schema string, a partition value) or deltaerr.ErrInvalidArgument
// when it came from a caller (DDL, a decimal's parameters, a JSON value).
//
// See the examples for parsing a schema, building values and the partition
// value round trip.
package schema
