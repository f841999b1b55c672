package write

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// Column metadata keys this package reads: field metadata, not table
// properties (those are tableconfig's Key* constants). The delta.* keys are
// package schema's, where every layer finds them.
const (
	MetaInvariants           = schema.MetadataInvariants
	MetaGenerationExpression = schema.MetadataGenerationExpression
	metaIdentityPrefix       = schema.MetadataIdentityPrefix
	metaCurrentDefault       = schema.MetadataCurrentDefault
)

// TableSpec describes a table to create.
type TableSpec struct {
	// Schema is the logical schema; it is not modified.
	Schema *schema.StructType
	// PartitionColumns are top-level columns of Schema, in order.
	PartitionColumns []string
	// Name and Description go to metaData.
	Name, Description string
	// Properties are the table properties (metaData.configuration),
	// checked by tableconfig.Validate. Unknown delta.* keys are kept as
	// given; delta.feature.<name> = supported asks for a feature and is
	// not stored.
	Properties map[string]string
	// ClusterBy are the clustering columns of a clustered table (liquid
	// clustering; CLUSTER BY): logical names, dotted for nested fields.
	// The protocol then supports the clustering and domainMetadata
	// writer features, and the creating commit must carry the domain
	// ClusteringDomain returns. A table cannot be both partitioned and
	// clustered.
	ClusterBy []string
}

// NewTable returns the protocol and metaData actions of a new table built
// to spec: the protocol chosen from the features the table uses (see the
// package doc), the metadata with a fresh id, createdTime now, the schema
// with column mapping applied when asked for. Errors match ErrInvalidSpec,
// or deltaerr.ErrUnsupportedFeature for a feature this library cannot
// write. A property value Spark would refuse (delta.appendOnly=maybe,
// delta.checkpointInterval=abc) is also a *tableconfig.PropertyError,
// found with errors.As.
func NewTable(spec TableSpec) (actions.Protocol, actions.Metadata, error) {
	var p actions.Protocol
	var m actions.Metadata
	spec, err := clusteringFeatures(spec)
	if err != nil {
		return p, m, err
	}
	if spec.Schema == nil || len(spec.Schema.Fields) == 0 {
		return p, m, specErr("a table needs at least one column")
	}
	raw, err := spec.Schema.MarshalJSON()
	if err != nil {
		return p, m, specErr("schema: %v", err)
	}
	sch, err := schema.Parse(string(raw)) // a deep copy to annotate
	if err != nil {
		return p, m, specErr("schema: %v", err)
	}
	parts, err := checkPartitions(sch, spec.PartitionColumns)
	if err != nil {
		return p, m, err
	}
	for _, c := range parts {
		// Spark: DELTA_IDENTITY_COLUMNS_PARTITION_NOT_SUPPORTED.
		if f, _ := sch.Field(c); f.IsIdentity() {
			return p, m, specErr("partition column %s: an identity column cannot be a partition column", c)
		}
	}
	// UniForm Iceberg needs icebergCompatV2, which needs column mapping:
	// turned on here unless the properties say otherwise (an error).
	props := maps.Clone(spec.Properties)
	if props == nil {
		props = map[string]string{}
	}
	extra, err := tableconfig.IcebergProperties(props)
	if err != nil {
		return p, m, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	maps.Copy(props, extra)
	// A new table evolves from nothing: no feature, no column id.
	p, props, err = evolve(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 1}, sch, props)
	if err != nil {
		return p, m, err
	}
	out, err := sch.MarshalJSON()
	if err != nil {
		return p, m, specErr("schema: %v", err)
	}
	created := time.Now().UnixMilli()
	m = actions.Metadata{
		ID:               uuid.NewString(),
		Name:             spec.Name,
		Description:      spec.Description,
		Format:           actions.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     string(out),
		PartitionColumns: parts,
		CreatedTime:      &created,
		Configuration:    props,
	}
	if props[tableconfig.KeyUniversalFormatEnabledFormats] != "" || extra != nil {
		cfg, err := tableconfig.New(p, m)
		if err != nil {
			return p, m, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
		if cfg.IcebergCompatV2() {
			if err := cfg.CheckIcebergCompat(); err != nil {
				return p, m, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
			}
		}
	}
	return p, m, nil
}

// checkPartitions resolves the partition columns to the schema's names
// (case-insensitively, as Spark does) and checks their types.
func checkPartitions(sch *schema.StructType, cols []string) ([]string, error) {
	out := make([]string, 0, len(cols))
	for _, c := range cols {
		f, ok := sch.Field(c)
		if !ok {
			f, ok = sch.FieldFold(c)
		}
		if !ok {
			return nil, specErr("partition column %q is not a top-level column of the schema", c)
		}
		if slices.Contains(out, f.Name) {
			return nil, specErr("partition column %q is given twice", c)
		}
		if !partitionable(f.Type) {
			return nil, specErr("partition column %q has type %s, which cannot be partitioned", c, f.Type)
		}
		out = append(out, f.Name)
	}
	if len(out) > 0 && len(out) == len(sch.Fields) {
		return nil, specErr("every column is a partition column: a table needs at least one data column")
	}
	return out, nil
}

// partitionable reports whether a partition column can have type t: the
// primitive types of the protocol's partition value serialization.
func partitionable(t schema.DataType) bool {
	if _, ok := t.(schema.DecimalType); ok {
		return true
	}
	switch t {
	case schema.String, schema.Binary, schema.Boolean, schema.Byte, schema.Short, schema.Integer,
		schema.Long, schema.Float, schema.Double, schema.Date, schema.Timestamp, schema.TimestampNTZ:
		return true
	}
	return false
}

// checkColumns walks every field, nested ones included, for the features
// its type and metadata use.
func checkColumns(sch *schema.StructType, feats map[string]bool) error {
	var walkType func(t schema.DataType, path string) error
	walkStruct := func(st *schema.StructType, prefix string) error {
		for i := range st.Fields {
			f := &st.Fields[i]
			path := prefix + f.Name
			for _, e := range f.Metadata {
				switch {
				case e.Key == MetaInvariants:
					if _, err := parseInvariant(e.Value); err != nil {
						return specErr("column %s: %v", path, err)
					}
					feats[actions.FeatureInvariants] = true
				case e.Key == MetaGenerationExpression:
					if _, err := parseGeneration(e.Value); err != nil {
						return specErr("column %s: %v", path, err)
					}
					if prefix != "" {
						return specErr("column %s: only top-level columns can be generated", path)
					}
					feats[actions.FeatureGeneratedColumns] = true
				case strings.HasPrefix(e.Key, metaIdentityPrefix):
					if err := checkIdentity(f, prefix, path); err != nil {
						return err
					}
					feats[actions.FeatureIdentityColumns] = true
				case e.Key == metaCurrentDefault:
					if err := checkDefault(f, prefix, path); err != nil {
						return err
					}
					feats[actions.FeatureAllowColumnDefaults] = true
				case e.Key == schema.MetadataCollations:
					if !feats[actions.FeatureCollationsPreview] {
						feats[actions.FeatureCollations] = true
					}
				}
			}
			if err := walkType(f.Type, path); err != nil {
				return err
			}
		}
		return nil
	}
	walkType = func(t schema.DataType, path string) error {
		switch t := t.(type) {
		case *schema.StructType:
			return walkStruct(t, path+".")
		case *schema.ArrayType:
			return walkType(t.ElementType, path+".element")
		case *schema.MapType:
			if err := walkType(t.KeyType, path+".key"); err != nil {
				return err
			}
			return walkType(t.ValueType, path+".value")
		case schema.PrimitiveType:
			switch t {
			case schema.TimestampNTZ:
				feats[actions.FeatureTimestampNtz] = true
			case schema.Variant:
				feats[actions.FeatureVariantType] = true
			}
		case schema.GeometryType, schema.GeographyType:
			return &deltaerr.FeatureError{Feature: "reader feature " + actions.FeatureGeospatial + " (column " + path + ")", Op: "write"}
		}
		return nil
	}
	return walkStruct(sch, "")
}

// checkIdentity refuses, as Spark refuses at CREATE TABLE, an identity
// column that is nested, not a BIGINT, also generated, or whose
// definition does not decode (a step of 0, say).
func checkIdentity(f *schema.StructField, prefix, path string) error {
	if prefix != "" {
		return specErr("column %s: only top-level columns can be identity columns", path)
	}
	if f.Type != schema.Long {
		return specErr("column %s: an identity column must be BIGINT (long), not %s", path, f.Type)
	}
	if _, ok := f.Metadata.Get(MetaGenerationExpression); ok {
		return specErr("column %s: a column cannot be both generated and an identity column", path)
	}
	if _, _, err := f.Identity(); err != nil {
		return specErr("column %s: %v", path, err)
	}
	return nil
}

// checkDefault refuses a column default on a nested field, on a
// generated or identity column (whose values come from elsewhere, as
// Spark refuses them), or one parseDefault does not take.
func checkDefault(f *schema.StructField, prefix, path string) error {
	if prefix != "" {
		return specErr("column %s: only top-level columns can have a default", path)
	}
	if _, ok := f.Metadata.Get(MetaGenerationExpression); ok || f.IsIdentity() {
		return specErr("column %s: a generated or identity column cannot have a default", path)
	}
	raw, _ := f.Metadata.Get(metaCurrentDefault)
	_, err := parseDefault(f, raw)
	return err
}

// parseInvariant decodes the delta.invariants metadata value: a JSON
// string holding {"expression":{"expression":"<SQL>"}}.
func parseInvariant(raw json.RawMessage) (expr.Expr, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, specErr("%s is not a JSON string", MetaInvariants)
	}
	var inv struct {
		Expression struct {
			Expression string `json:"expression"`
		} `json:"expression"`
	}
	if err := json.Unmarshal([]byte(text), &inv); err != nil || inv.Expression.Expression == "" {
		return nil, specErr("%s is not {\"expression\":{\"expression\":...}}", MetaInvariants)
	}
	return expr.Parse(inv.Expression.Expression)
}

// parseGeneration decodes the delta.generationExpression metadata value, a
// JSON string of SQL.
func parseGeneration(raw json.RawMessage) (expr.Expr, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, specErr("%s is not a JSON string", MetaGenerationExpression)
	}
	return expr.Parse(text)
}

// assignColumnMapping gives every field without them a column id (above
// the largest id already present and maxID, the property's max) and a physical
// name: col-<uuid> for a new column, the field's own name when keepNames
// (column mapping turned on for a table whose files use the names), in
// pre-order (a struct before its fields), and returns the largest id.
func assignColumnMapping(sch *schema.StructType, maxID int64, keepNames bool) int64 {
	var visit func(t schema.DataType, fn func(f *schema.StructField))
	visit = func(t schema.DataType, fn func(f *schema.StructField)) {
		switch t := t.(type) {
		case *schema.StructType:
			for i := range t.Fields {
				fn(&t.Fields[i])
				visit(t.Fields[i].Type, fn)
			}
		case *schema.ArrayType:
			visit(t.ElementType, fn)
		case *schema.MapType:
			visit(t.KeyType, fn)
			visit(t.ValueType, fn)
		}
	}
	visit(sch, func(f *schema.StructField) {
		if id, ok := f.ColumnMappingID(); ok && id > maxID {
			maxID = id
		}
	})
	visit(sch, func(f *schema.StructField) {
		if _, ok := f.ColumnMappingID(); !ok {
			maxID++
			f.Metadata = setMeta(f.Metadata, schema.MetadataColumnMappingID, json.RawMessage(strconv.FormatInt(maxID, 10)))
		}
		if _, ok := f.Metadata.Get(schema.MetadataPhysicalName); !ok {
			name := "col-" + uuid.NewString()
			if keepNames {
				name = f.Name
			}
			f.Metadata = setMeta(f.Metadata, schema.MetadataPhysicalName, json.RawMessage(strconv.Quote(name)))
		}
	})
	return maxID
}

// assignNestedIDs gives every array element and map key and value that
// has none an id (IcebergCompatV2), above maxID, the table's
// delta.columnMapping.maxColumnId, and returns the largest id. The ids are
// stored in the delta.columnMapping.nested.ids metadata of the nearest
// field above, keyed by its physical name followed by ".element", ".key"
// or ".value" per level, as PROTOCOL.md shows; fields must already have
// their physical names (assignColumnMapping). Ids already present are
// kept. Alter operations that add columns to an IcebergCompatV2 table
// call it too.
func assignNestedIDs(sch *schema.StructType, maxID int64) int64 {
	var fields func(t *schema.StructType)
	var nested func(t schema.DataType, key string, ids map[string]int64, changed *bool)
	nested = func(t schema.DataType, key string, ids map[string]int64, changed *bool) {
		give := func(k string) {
			if _, ok := ids[k]; !ok {
				maxID++
				ids[k] = maxID
				*changed = true
			}
		}
		switch t := t.(type) {
		case *schema.ArrayType:
			give(key + ".element")
			nested(t.ElementType, key+".element", ids, changed)
		case *schema.MapType:
			give(key + ".key")
			give(key + ".value")
			nested(t.KeyType, key+".key", ids, changed)
			nested(t.ValueType, key+".value", ids, changed)
		case *schema.StructType:
			fields(t)
		}
	}
	fields = func(t *schema.StructType) {
		for i := range t.Fields {
			f := &t.Fields[i]
			ids, _ := f.NestedIDs()
			if ids == nil {
				ids = map[string]int64{}
			}
			changed := false
			nested(f.Type, f.PhysicalName(schema.ColumnMappingByName), ids, &changed)
			if changed {
				f.Metadata = setMeta(f.Metadata, schema.MetadataNestedIDs, json.RawMessage(mustJSON(ids)))
			}
		}
	}
	// Ids already in use count, so that new ones stay unique.
	var seen func(t schema.DataType)
	seen = func(t schema.DataType) {
		switch t := t.(type) {
		case *schema.StructType:
			for i := range t.Fields {
				if ids, ok := t.Fields[i].NestedIDs(); ok {
					for _, id := range ids {
						maxID = max(maxID, id)
					}
				}
				seen(t.Fields[i].Type)
			}
		case *schema.ArrayType:
			seen(t.ElementType)
		case *schema.MapType:
			seen(t.KeyType)
			seen(t.ValueType)
		}
	}
	seen(sch)
	fields(sch)
	return maxID
}

// mustJSON encodes a map of strings to integers, which cannot fail.
func mustJSON(ids map[string]int64) string {
	b, _ := json.Marshal(ids)
	return string(b)
}

func setMeta(m schema.Metadata, key string, v json.RawMessage) schema.Metadata {
	out := slices.Clone(m)
	for i := range out {
		if out[i].Key == key {
			out[i].Value = v
			return out
		}
	}
	return append(out, schema.MetadataEntry{Key: key, Value: v})
}

// chooseProtocol returns the smallest protocol supporting feats.
func chooseProtocol(feats map[string]bool) actions.Protocol {
	p := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	legacy := true
	for name := range feats {
		info, _ := tableconfig.LookupFeature(name)
		if info.LegacyWriter == 0 {
			legacy = false
			continue
		}
		p.MinWriterVersion = max(p.MinWriterVersion, info.LegacyWriter)
		p.MinReaderVersion = max(p.MinReaderVersion, info.LegacyReader)
	}
	if legacy {
		return p
	}
	// Table features: the protocol lists every feature it supports, and a
	// table of this library has writer version 2's as a baseline
	// (appendOnly, invariants), which Spark lists too.
	p = actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7}
	feats[actions.FeatureAppendOnly] = true
	feats[actions.FeatureInvariants] = true
	for name := range feats {
		p.WriterFeatures = append(p.WriterFeatures, name)
		if info, _ := tableconfig.LookupFeature(name); info.ReaderWriter {
			p.MinReaderVersion = 3
			p.ReaderFeatures = append(p.ReaderFeatures, name)
		}
	}
	slices.Sort(p.WriterFeatures)
	slices.Sort(p.ReaderFeatures)
	return p
}
