package write

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// ErrNoStats is a column that a layout (clustering, Z-order) needs
// statistics on, but that this table's writer gives no min/max statistics:
// a type without an order for them (boolean, binary, nested), or a column
// outside delta.dataSkippingNumIndexedCols / delta.dataSkippingStatsColumns.
var ErrNoStats = fmt.Errorf("write: column has no min/max statistics: %w", deltaerr.ErrInvalidArgument)

// ErrPartitionColumn is a partition column named where only a data column
// may be (clustering, Z-order): its value is the same in the whole file.
var ErrPartitionColumn = fmt.Errorf("write: column is a partition column: %w", deltaerr.ErrInvalidArgument)

// LayoutColumn is a column resolved for a data layout: its logical path
// as the schema spells it, its physical path, and its type.
type LayoutColumn struct {
	Logical  []string
	Physical []string
	Type     schema.DataType
}

// Name is the logical path, dotted (QuoteColumn).
func (c LayoutColumn) Name() string { return QuoteColumn(c.Logical) }

// QuoteColumn joins a column path with dots, quoting in backticks the parts
// that hold a dot or a backtick: the form LayoutColumns and the
// dataSkippingStatsColumns property read back.
func QuoteColumn(path []string) string { return joinColumn(path) }

// LayoutColumns resolves names (logical, dotted for nested fields, matched
// exactly and then ignoring case) as columns to cluster or Z-order a table
// of schema sch, partition columns parts and configuration cfg by: each
// must be a data column, of a type that gets min/max statistics, among the
// columns the writer collects statistics for. Errors: ErrPartitionColumn,
// ErrNoStats, and deltaerr.ErrInvalidArgument for a name that is no column
// or is given twice.
func LayoutColumns(sch *schema.StructType, parts []string, cfg *tableconfig.Config, names []string) ([]LayoutColumn, error) {
	mode := cfg.ColumnMappingMode()
	data := &schema.StructType{}
	for _, f := range sch.Fields {
		if !slices.Contains(parts, f.Name) {
			data.Fields = append(data.Fields, f)
		}
	}
	so := statsOptions(data, mode, cfg)
	var out []LayoutColumn
	for _, name := range names {
		path := splitColumn(name)
		if len(path) == 0 {
			return nil, fmt.Errorf("write: empty column name: %w", deltaerr.ErrInvalidArgument)
		}
		f, ok := sch.Field(path[0])
		if !ok {
			f, ok = sch.FieldFold(path[0])
		}
		if ok && slices.Contains(parts, f.Name) {
			return nil, fmt.Errorf("%w: %s", ErrPartitionColumn, f.Name)
		}
		col, leaf, err := resolveLeaf(data, path)
		if err != nil {
			return nil, err
		}
		col.Physical, err = data.PhysicalPath(col.Logical, mode)
		if err != nil {
			return nil, fmt.Errorf("write: column %s: %w", name, err)
		}
		if !minMaxType(col.Type) {
			return nil, fmt.Errorf("%w: %s has type %s", ErrNoStats, col.Name(), col.Type)
		}
		if !indexed(so, col.Physical, leaf) {
			return nil, fmt.Errorf("%w: %s is not among the columns with statistics (delta.dataSkippingNumIndexedCols, delta.dataSkippingStatsColumns)", ErrNoStats, col.Name())
		}
		if slices.ContainsFunc(out, func(c LayoutColumn) bool { return slices.Equal(c.Logical, col.Logical) }) {
			return nil, fmt.Errorf("write: column %s is given twice: %w", col.Name(), deltaerr.ErrInvalidArgument)
		}
		out = append(out, col)
	}
	return out, nil
}

// resolveLeaf finds the field at path in st, and its index among st's
// statistics columns (leaves, structs flattened).
func resolveLeaf(st *schema.StructType, path []string) (LayoutColumn, int, error) {
	var col LayoutColumn
	leaf := 0
	cur := st
	for i, p := range path {
		f, ok := cur.Field(p)
		if !ok {
			f, ok = cur.FieldFold(p)
		}
		if !ok {
			return col, 0, fmt.Errorf("write: no column %s: %w", strings.Join(path[:i+1], "."), deltaerr.ErrInvalidArgument)
		}
		for j := range cur.Fields {
			if cur.Fields[j].Name == f.Name {
				break
			}
			leaf += leaves(cur.Fields[j].Type)
		}
		col.Logical = append(col.Logical, f.Name)
		if i == len(path)-1 {
			col.Type = f.Type
			break
		}
		next, ok := f.Type.(*schema.StructType)
		if !ok {
			return col, 0, fmt.Errorf("write: column %s is not a struct: %w", strings.Join(path[:i+1], "."), deltaerr.ErrInvalidArgument)
		}
		cur = next
	}
	return col, leaf, nil
}

// leaves counts the statistics columns of a field of type t.
func leaves(t schema.DataType) int {
	st, ok := t.(*schema.StructType)
	if !ok {
		return 1
	}
	n := 0
	for _, f := range st.Fields {
		n += leaves(f.Type)
	}
	return n
}

// minMaxType reports whether the writer gives min/max statistics to a
// column of type t.
func minMaxType(t schema.DataType) bool {
	if _, ok := t.(schema.DecimalType); ok {
		return true
	}
	switch t {
	case schema.Byte, schema.Short, schema.Integer, schema.Long, schema.Float, schema.Double,
		schema.String, schema.Date, schema.Timestamp, schema.TimestampNTZ:
		return true
	}
	return false
}

// indexed reports whether the statistics options so index the column at
// physical path phys, the leaf-th statistics column.
func indexed(so datafile.StatsOptions, phys []string, leaf int) bool {
	if so.StatsColumns != nil {
		for _, c := range so.StatsColumns {
			named := splitColumn(c)
			if len(named) <= len(phys) && slices.EqualFunc(named, phys[:len(named)], strings.EqualFold) {
				return true
			}
		}
		return false
	}
	n := so.NumIndexedCols
	if n == 0 {
		n = datafile.DefaultNumIndexedCols
	}
	return n < 0 || leaf < n
}

// clusteringFeatures asks, in a copy of spec's properties, for the
// features a clustered table needs: clustering, and domainMetadata, which
// the protocol requires with it (also when clustering is asked for by its
// delta.feature property alone).
func clusteringFeatures(spec TableSpec) (TableSpec, error) {
	feature := func(name string) string { return tableconfig.KeyFeaturePrefix + name }
	_, asked := spec.Properties[feature(actions.FeatureClustering)]
	if len(spec.ClusterBy) == 0 && !asked {
		return spec, nil
	}
	if len(spec.ClusterBy) > 0 && len(spec.PartitionColumns) > 0 {
		return spec, specErr("a table cannot be both partitioned (by %v) and clustered", spec.PartitionColumns)
	}
	props := maps.Clone(spec.Properties)
	if props == nil {
		props = map[string]string{}
	}
	for _, name := range []string{actions.FeatureClustering, actions.FeatureDomainMetadata} {
		if _, ok := props[feature(name)]; !ok {
			props[feature(name)] = "supported"
		}
	}
	spec.Properties = props
	return spec, nil
}

// ClusteringDomain returns the delta.clustering domainMetadata action of a
// table with metadata m clustered by names (logical; see LayoutColumns for
// the rules): the physical paths of the columns, as Spark records them.
// The table must not be partitioned (the protocol forbids both at once).
func ClusteringDomain(cfg *tableconfig.Config, m actions.Metadata, names []string) (actions.DomainMetadata, []LayoutColumn, error) {
	if len(m.PartitionColumns) > 0 && len(names) > 0 {
		return actions.DomainMetadata{}, nil, fmt.Errorf("%w: a table cannot be both partitioned (by %v) and clustered", ErrInvalidSpec, m.PartitionColumns)
	}
	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		return actions.DomainMetadata{}, nil, err
	}
	cols, err := LayoutColumns(sch, m.PartitionColumns, cfg, names)
	if err != nil {
		return actions.DomainMetadata{}, nil, err
	}
	paths := make([][]string, len(cols))
	for i, c := range cols {
		paths[i] = c.Physical
	}
	d, err := actions.ClusteringDomain(paths)
	return d, cols, err
}
