package write

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/datafile"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/dv"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// FileRows yields the live rows of one data file of snap (those its
// deletion vector does not delete) as logical batches in table schema
// order, partition values included: the form Rows takes, so that an
// operation that rewrites a file (an overwrite with a replaceWhere on data
// columns) can read what it keeps and write it back. Files at absolute
// paths, and deletion vectors at absolute paths, are refused with
// deltaerr.ErrUnsupportedFeature.
func FileRows(ctx context.Context, snap *snapshot.Snapshot, add *actions.Add) iter.Seq2[Batch, error] {
	return func(yield func(Batch, error) bool) {
		if err := fileRows(ctx, snap, add, yield); err != nil {
			yield(Batch{}, err)
		}
	}
}

// errStop ends a read when the consumer stops iterating.
var errStop = fmt.Errorf("write: iteration stopped")

func fileRows(ctx context.Context, snap *snapshot.Snapshot, add *actions.Add, yield func(Batch, error) bool) error {
	if strings.Contains(add.Path, "://") || strings.HasPrefix(add.Path, "/") || strings.HasPrefix(add.Path, "file:") {
		return &deltaerr.FeatureError{Feature: "rewriting a data file at an absolute path (" + add.Path + ")", Op: "write"}
	}
	key, err := url.PathUnescape(add.Path)
	if err != nil {
		return deltaerr.Corruptf(add.Path, "data file path is not a valid URI path")
	}
	if err := logstore.CheckKey(key); err != nil {
		return fmt.Errorf("write: data file %s: %w", add.Path, deltaerr.ErrPathEscapesRoot)
	}
	sch := snap.Schema()
	m := snap.Metadata()
	p := snap.Protocol()
	mode := schema.ColumnMappingNone
	if p.HasReaderFeature(actions.FeatureColumnMapping) {
		if mode, err = schema.ParseColumnMappingMode(m.Configuration[schema.PropertyColumnMappingMode]); err != nil {
			return err
		}
	}
	data := &schema.StructType{}
	var dataIdx []int
	partVals := make([]schema.Value, len(sch.Fields))
	for i := range sch.Fields {
		f := &sch.Fields[i]
		if slices.Contains(m.PartitionColumns, f.Name) {
			v, err := schema.ParsePartitionValue(f.Type, add.PartitionValues[f.PhysicalName(mode)])
			if err != nil {
				return fmt.Errorf("write: file %s: partition column %s: %w", add.Path, f.Name, err)
			}
			partVals[i] = v
			continue
		}
		dataIdx = append(dataIdx, i)
		data.Fields = append(data.Fields, *f)
	}
	physical, err := data.PhysicalSchema(mode)
	if err != nil {
		return err
	}
	var deleted *dv.Bitmap
	if add.DeletionVector != nil {
		if deleted, err = dv.Load(ctx, snap.Store(), add.DeletionVector, nil); err != nil {
			return fmt.Errorf("write: deletion vector of %s: %w", add.Path, err)
		}
	}
	size := add.Size
	if size <= 0 {
		info, err := snap.Store().Stat(ctx, key)
		if err != nil {
			return fmt.Errorf("write: data file %s: %w", add.Path, err)
		}
		size = info.Size
	}
	f, err := datafile.OpenObject(ctx, snap.Store(), key, size)
	if err != nil {
		return fmt.Errorf("write: data file %s: %w", add.Path, err)
	}
	err = f.Read(ctx, physical, datafile.ReadOptions{ByFieldID: mode == schema.ColumnMappingByID}, func(b *datafile.Batch) error {
		out := Batch{Columns: make([][]schema.Value, len(sch.Fields))}
		for i := range b.Len {
			if deleted != nil && deleted.Contains(uint64(b.FirstRow+int64(i))) {
				continue
			}
			for j := range sch.Fields {
				out.Columns[j] = append(out.Columns[j], partVals[j])
			}
			for k, j := range dataIdx {
				out.Columns[j][out.Len] = b.Columns[k][i]
			}
			out.Len++
		}
		if out.Len == 0 {
			return nil
		}
		if !yield(out, nil) {
			return errStop
		}
		return nil
	})
	if err == errStop {
		return nil
	}
	if err != nil {
		return fmt.Errorf("write: data file %s: %w", add.Path, err)
	}
	return nil
}
