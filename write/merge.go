package write

import (
	"errors"
	"fmt"
	"iter"
	"maps"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/tableconfig"
)

// ErrSchemaMismatch is returned by an append that merges its schema when
// a column of the rows has another type than the table's column of that
// name. It matches deltaerr.ErrInvalidArgument.
var ErrSchemaMismatch = deltaerr.Mark(errors.New("the rows' schema does not merge into the table's"), deltaerr.ErrInvalidArgument)

// MergeSchemas returns the table schema table with the columns of src it
// lacks added, as Spark's mergeSchema adds them: at the end of their
// struct (top level or nested), nullable, matched by name ignoring case.
// A column of both with another type is ErrSchemaMismatch, unless widen
// (the table has type widening on, as Spark's mergeSchema widens then) and
// src's type is a widening of the table's (CanWiden): the column takes the
// wider type, recorded in its delta.typeChanges. It reports whether the
// schema changed; table is not changed.
func MergeSchemas(table, src *schema.StructType, widen bool) (*schema.StructType, bool, error) {
	out, err := schema.Parse(table.String())
	if err != nil {
		return nil, false, err
	}
	added, err := mergeStruct(out, src, "", widen)
	return out, added, err
}

func mergeStruct(dst, src *schema.StructType, prefix string, widen bool) (bool, error) {
	added := false
	for _, sf := range src.Fields {
		j := dst.Index(sf.Name)
		if j < 0 {
			nf := sf
			nf.Nullable = true
			nf.Metadata = nil
			dst.Fields = append(dst.Fields, nf)
			added = true
			continue
		}
		df := &dst.Fields[j]
		ds, dok := df.Type.(*schema.StructType)
		ss, sok := sf.Type.(*schema.StructType)
		if dok && sok {
			a, err := mergeStruct(ds, ss, prefix+df.Name+".", widen)
			if err != nil {
				return false, err
			}
			added = added || a
			continue
		}
		if df.Type.String() != sf.Type.String() && widen && CanWiden(df.Type, sf.Type, false) {
			if err := RecordTypeChange(df, sf.Type); err != nil {
				return false, err
			}
			added = true
			continue
		}
		if df.Type.String() != sf.Type.String() {
			return false, fmt.Errorf("%w: column %s is %s in the table, %s in the rows", ErrSchemaMismatch, prefix+df.Name, df.Type, sf.Type)
		}
	}
	return added, nil
}

// reshape returns a function that turns a row of src's layout into one of
// dst's (dst holds every column of src, by name ignoring case): columns
// src lacks are null, nested structs reshaped the same way.
func reshape(src, dst *schema.StructType) func([]schema.Value) []schema.Value {
	type slot struct {
		from int // index in the source row, -1 for null
		sub  func([]schema.Value) []schema.Value
	}
	slots := make([]slot, len(dst.Fields))
	for i, df := range dst.Fields {
		j := src.Index(df.Name)
		slots[i] = slot{from: j}
		if j < 0 {
			continue
		}
		if ds, ok := df.Type.(*schema.StructType); ok {
			if ss, ok := src.Fields[j].Type.(*schema.StructType); ok && ss.String() != ds.String() {
				slots[i].sub = reshape(ss, ds)
			}
		}
	}
	return func(row []schema.Value) []schema.Value {
		out := make([]schema.Value, len(slots))
		for i, s := range slots {
			if s.from < 0 || s.from >= len(row) {
				continue
			}
			v := row[s.from]
			if s.sub != nil && !v.IsNull() {
				v = schema.StructValue(s.sub(v.Fields()))
			}
			out[i] = v
		}
		return out
	}
}

// reshapeBatches lays the batches of src's layout out as dst's.
func reshapeBatches(batches iter.Seq2[Batch, error], src, dst *schema.StructType) iter.Seq2[Batch, error] {
	fn := reshape(src, dst)
	return func(yield func(Batch, error) bool) {
		for b, err := range batches {
			if err != nil {
				yield(Batch{}, err)
				return
			}
			if len(b.Columns) != len(src.Fields) {
				yield(Batch{}, fmt.Errorf("a batch has %d columns, the rows' schema %d: %w", len(b.Columns), len(src.Fields), ErrBatch))
				return
			}
			out := Batch{Len: b.Len, Columns: make([][]schema.Value, len(dst.Fields))}
			for j := range out.Columns {
				out.Columns[j] = make([]schema.Value, b.Len)
			}
			row := make([]schema.Value, len(src.Fields))
			for i := range b.Len {
				for j := range row {
					row[j] = b.Columns[j][i]
				}
				for j, v := range fn(row) {
					out.Columns[j][i] = v
				}
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// mergedAppend is what an Append with MergeSchema writes under: the
// batches reshaped to the merged schema, the row writer's options for it,
// and, when the merge adds or widens columns (evolved), the protocol and
// metadata its commit stages with the rows.
type mergedAppend struct {
	batches  iter.Seq2[Batch, error]
	opts     Options
	evolved  bool
	protocol actions.Protocol
	metadata actions.Metadata
}

// planMergedAppend merges opts.MergeSchema into the table's schema: new
// columns are added (nullable), and widened where the table has type
// widening on.
func planMergedAppend(snap *snapshot.Snapshot, batches iter.Seq2[Batch, error], opts CommitOptions) (mergedAppend, error) {
	p, m, added, err := MergedMetadata(snap, opts.MergeSchema)
	if err != nil {
		return mergedAppend{}, err
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return mergedAppend{}, err
	}
	rowOpts := opts.Options
	rowOpts.Config = cfg
	return mergedAppend{
		batches: reshapeBatches(batches, opts.MergeSchema, cfg.Schema()),
		opts:    rowOpts, evolved: added, protocol: p, metadata: m,
	}, nil
}

// MergedMetadata returns the protocol and metaData of snap's table with
// src merged into its schema as Spark's mergeSchema merges it
// (MergeSchemas: new columns added, nullable, at the end of their struct;
// widened where the table has type widening on), and whether the schema
// changed; unchanged, they are snap's. A partition column is widened only
// where its partition values still parse (PartitionWidening). The protocol
// and properties evolve with the schema (Evolve: column mapping ids,
// features the new columns need). Errors match ErrSchemaMismatch,
// ErrInvalidSpec or deltaerr.ErrUnsupportedFeature.
func MergedMetadata(snap *snapshot.Snapshot, src *schema.StructType) (actions.Protocol, actions.Metadata, bool, error) {
	cfg0 := snap.Config()
	widen := cfg0.IsFeatureEnabled(actions.FeatureTypeWidening) || cfg0.IsFeatureEnabled(actions.FeatureTypeWideningPreview)
	p, m := snap.Protocol(), snap.Metadata()
	merged, added, err := MergeSchemas(snap.Schema(), src, widen)
	if err != nil {
		return p, m, false, err
	}
	for _, c := range m.PartitionColumns {
		was, _ := snap.Schema().Field(c)
		now, _ := merged.Field(c)
		if was != nil && now != nil && was.Type.String() != now.Type.String() && !PartitionWidening(was.Type, now.Type) {
			return p, m, false, fmt.Errorf("%w: partition column %s: %s cannot be widened to %s (its partition values would not parse)", ErrSchemaMismatch, c, was.Type, now.Type)
		}
	}
	if added {
		if p, m, err = Evolve(p, m, merged, maps.Clone(m.Configuration)); err != nil {
			return snap.Protocol(), snap.Metadata(), false, err
		}
	}
	return p, m, added, nil
}

// SameProtocol reports whether two protocol actions are the same: versions
// and feature lists, in order.
func SameProtocol(a, b actions.Protocol) bool {
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		strings.Join(a.ReaderFeatures, ",") == strings.Join(b.ReaderFeatures, ",") &&
		strings.Join(a.WriterFeatures, ",") == strings.Join(b.WriterFeatures, ",")
}

// ShowRow formats a row of a table of schema sch for an error message, as
// a *ConstraintError shows it: name: value pairs, cut to a readable length.
func ShowRow(sch *schema.StructType, vals []schema.Value) string { return showRow(sch, vals) }
