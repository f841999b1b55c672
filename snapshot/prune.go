package snapshot

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// FilesWhere yields the live files that may hold rows matching pred, by
// partition pruning: a file is skipped only when no row of it can match,
// by its partition values (see expr.ExcludesPartition: a comparison with a
// NULL partition value is never TRUE). Columns that are not partition
// columns leave the predicate Unknown for every file, so they never skip
// one.
//
// A column pred names that is not in the schema is
// deltaerr.ErrInvalidArgument. Errors reading the files are yielded as by
// Files.
func (s *Snapshot) FilesWhere(ctx context.Context, pred expr.Expr) (iter.Seq2[*actions.Add, error], error) {
	mode := s.config.ColumnMappingMode()
	type part struct {
		typ      schema.DataType
		physical string
	}
	parts := map[string]part{}
	for _, name := range expr.Columns(pred) {
		f, ok := s.schema.Field(name)
		if !ok {
			return nil, fmt.Errorf("predicate column %q is not in the table schema: %w", name, deltaerr.ErrInvalidArgument)
		}
		if slices.Contains(s.metadata.PartitionColumns, name) {
			parts[name] = part{typ: f.Type, physical: f.PhysicalName(mode)}
		}
	}
	return func(yield func(*actions.Add, error) bool) {
		for f, err := range s.Files(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			lookup := func(col string) (schema.DataType, schema.Value, bool) {
				p, ok := parts[col]
				if !ok {
					return nil, schema.Value{}, false
				}
				v, err := schema.ParsePartitionValue(p.typ, f.PartitionValues[p.physical])
				if err != nil {
					return nil, schema.Value{}, false // unreadable: keep the file
				}
				return p.typ, v, true
			}
			if expr.ExcludesPartition(pred, lookup) {
				continue
			}
			if !yield(f, nil) {
				return
			}
		}
	}, nil
}
