package write

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// ErrFileSchema is matched by every *FileSchemaError. It matches
// deltaerr.ErrInvalidArgument: the file was given by the caller.
var ErrFileSchema = fmt.Errorf("write: data file does not match the table schema: %w", deltaerr.ErrInvalidArgument)

// FileSchemaError says which column of a data file given to FileAdd does
// not fit the table, and why.
type FileSchemaError struct {
	// File is the file's key under the table root.
	File string
	// Column is the column's path of physical names, dotted.
	Column string
	// Reason says what does not fit, e.g. "is long in the file, integer
	// in the table".
	Reason string
}

func (e *FileSchemaError) Error() string {
	return fmt.Sprintf("write: data file %s: column %s %s", e.File, e.Column, e.Reason)
}

// Is reports whether target is ErrFileSchema or one of the kinds it
// wraps.
func (e *FileSchemaError) Is(target error) bool {
	return target == ErrFileSchema || errors.Is(ErrFileSchema, target)
}

// fileStatsRowGroup is the row group size of the discarding Writer of
// FileAdd: it bounds the memory that writer holds.
const fileStatsRowGroup = 4 << 20

// FileAdd returns the add action of a Parquet data file that a program
// wrote itself (with parquet-go, Spark, anything) and put at key under the
// table root of snap, ready for a transaction: Path (key, URI-encoded),
// Size and ModificationTime (from the store), DataChange true, and Stats
// exactly as Rows would write them for the same rows. PartitionValues is
// an empty map: the caller, who chose the file's partition, fills it in
// (physical partition column names, values formatted as
// schema.FormatPartitionValue does).
//
// The file's schema is checked against the table's data columns
// (partition columns are not in data files), by field id under column
// mapping in id mode, else by physical name (exact, then ignoring case, as
// the reader binds): every column of the file must be a column of the
// table, of the same type at every depth; a NOT NULL column of the table
// must be in the file; a nullable column may be missing (it reads as
// null). A mismatch is a *FileSchemaError naming the column. A null
// in a column the table has NOT NULL is ErrConstraint, naming the column.
//
// The statistics are those of the writer, computed by the writer: every
// row is read and written again, without compression, to a datafile.Writer
// whose output is discarded, with the table's statistics options
// (delta.dataSkippingNumIndexedCols, delta.dataSkippingStatsColumns), so
// numRecords, nullCount, minValues and maxValues (strings cut, timestamps
// to milliseconds) and tightBounds are what Rows would write. It costs a
// read of the whole file and the CPU of encoding it.
func FileAdd(ctx context.Context, snap *snapshot.Snapshot, key string) (actions.Add, error) {
	return FileAddConfig(ctx, snap.Store(), snap.Config(), key)
}

// FileAddConfig is FileAdd for the table whose configuration is cfg and
// whose root is store, which need not have a log yet: CONVERT TO DELTA
// computes the adds of the files already there before it commits version
// 0. It is safe for concurrent use.
func FileAddConfig(ctx context.Context, store logstore.Store, cfg *tableconfig.Config, key string) (actions.Add, error) {
	if err := logstore.CheckKey(key); err != nil {
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, deltaerr.ErrPathEscapesRoot)
	}
	m := cfg.Metadata()
	mode := cfg.ColumnMappingMode()
	sch := cfg.Schema()
	data := &schema.StructType{}
	for _, f := range sch.Fields {
		if !slices.Contains(m.PartitionColumns, f.Name) {
			data.Fields = append(data.Fields, f)
		}
	}
	physical, err := data.PhysicalSchema(mode)
	if err != nil {
		return actions.Add{}, err
	}
	info, err := store.Stat(ctx, key)
	if err != nil {
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, err)
	}
	f, err := datafile.OpenObject(ctx, store, key, info.Size)
	if err != nil {
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, err)
	}
	have, err := f.Schema()
	if err != nil {
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, err)
	}
	byID := mode == schema.ColumnMappingByID
	if err := checkFileStruct(key, have, physical, byID, nil); err != nil {
		var fe *FileSchemaError
		if errors.As(err, &fe) && !strings.Contains(fe.Column, ".") && isPartitionColumn(cfg, mode, fe.Column) {
			fe.Reason = "is a partition column: its values go in the add action's partitionValues, not in the file"
		}
		return actions.Add{}, err
	}
	w, err := datafile.NewWriter(io.Discard, physical, datafile.WriteOptions{
		ByFieldID:    mode != schema.ColumnMappingNone,
		Compression:  "none",
		RowGroupSize: fileStatsRowGroup,
		Stats:        statsOptions(data, mode, cfg),
	})
	if err != nil {
		return actions.Add{}, err
	}
	err = f.Read(ctx, physical, datafile.ReadOptions{ByFieldID: byID}, func(b *datafile.Batch) error {
		return w.Write(b.Columns, b.Len)
	})
	if err != nil {
		if errors.Is(err, datafile.ErrValueMismatch) {
			return actions.Add{}, fmt.Errorf("write: data file %s: %w: %w", key, ErrConstraint, err)
		}
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, err)
	}
	stats, err := w.Close()
	if err != nil {
		return actions.Add{}, fmt.Errorf("write: data file %s: %w", key, err)
	}
	if n := f.NumRows(); stats.NumRecords != n {
		return actions.Add{}, deltaerr.Corruptf(key, "read %d rows, the footer says %d", stats.NumRecords, n)
	}
	return actions.Add{
		Path:             location.EncodePath(key),
		PartitionValues:  map[string]string{},
		Size:             info.Size,
		ModificationTime: info.ModTime.UnixMilli(),
		DataChange:       true,
		Stats:            stats.JSON(),
	}, nil
}

// checkFileStruct checks the fields of a file's struct have against the
// table's want; path is the physical path of the struct.
func checkFileStruct(file string, have, want *schema.StructType, byID bool, path []string) error {
	matched := make([]bool, len(want.Fields))
	for i := range have.Fields {
		hf := &have.Fields[i]
		hpath := append(slices.Clip(path), hf.Name)
		j := -1
		if byID {
			id, ok := hf.ColumnMappingID()
			if !ok {
				return &FileSchemaError{File: file, Column: strings.Join(hpath, "."), Reason: "has no field id, which column mapping in id mode needs"}
			}
			for k := range want.Fields {
				if wid, ok := want.Fields[k].ColumnMappingID(); ok && wid == id {
					j = k
					break
				}
			}
		} else {
			j = slices.IndexFunc(want.Fields, func(f schema.StructField) bool { return f.Name == hf.Name })
			if j < 0 {
				j = slices.IndexFunc(want.Fields, func(f schema.StructField) bool { return strings.EqualFold(f.Name, hf.Name) })
			}
		}
		if j < 0 || matched[j] {
			return &FileSchemaError{File: file, Column: strings.Join(hpath, "."), Reason: "is not a column of the table"}
		}
		matched[j] = true
		wf := &want.Fields[j]
		if err := checkFileType(file, hf.Type, wf.Type, byID, append(slices.Clip(path), wf.Name)); err != nil {
			return err
		}
	}
	for j := range want.Fields {
		if wf := &want.Fields[j]; !matched[j] && !wf.Nullable && wf.Type != schema.Void {
			return &FileSchemaError{File: file, Column: strings.Join(append(slices.Clip(path), wf.Name), "."), Reason: "is NOT NULL in the table and missing from the file"}
		}
	}
	return nil
}

// checkFileType checks that a file's column type is the table's, at every
// depth. Nullability is left to the values: a file may declare optional
// what the table has NOT NULL, as long as it holds no null there.
func checkFileType(file string, have, want schema.DataType, byID bool, path []string) error {
	bad := func() error {
		return &FileSchemaError{File: file, Column: strings.Join(path, "."), Reason: fmt.Sprintf("is %s in the file, %s in the table", have, want)}
	}
	switch w := want.(type) {
	case *schema.StructType:
		h, ok := have.(*schema.StructType)
		if !ok {
			return bad()
		}
		return checkFileStruct(file, h, w, byID, path)
	case *schema.ArrayType:
		h, ok := have.(*schema.ArrayType)
		if !ok {
			return bad()
		}
		return checkFileType(file, h.ElementType, w.ElementType, byID, append(slices.Clip(path), "element"))
	case *schema.MapType:
		h, ok := have.(*schema.MapType)
		if !ok {
			return bad()
		}
		if err := checkFileType(file, h.KeyType, w.KeyType, byID, append(slices.Clip(path), "key")); err != nil {
			return err
		}
		return checkFileType(file, h.ValueType, w.ValueType, byID, append(slices.Clip(path), "value"))
	}
	if have == nil || want == nil || have.String() != want.String() {
		return bad()
	}
	return nil
}

// isPartitionColumn reports whether name is the physical name of one of
// the partition columns of cfg's table.
func isPartitionColumn(cfg *tableconfig.Config, mode schema.ColumnMappingMode, name string) bool {
	sch := cfg.Schema()
	for _, c := range cfg.PartitionColumns() {
		if f, ok := sch.Field(c); ok && strings.EqualFold(f.PhysicalName(mode), name) {
			return true
		}
	}
	return false
}
