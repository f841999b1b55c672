package checkpoint

import (
	"context"
	"errors"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/parquetio"
)

// The checkpoint schema's column names. They are part of the on-disk
// format shared with every Delta implementation and must never change.
const (
	colProtocol           = "protocol"
	colMetadata           = "metaData"
	colAdd                = "add"
	colRemove             = "remove"
	colTxn                = "txn"
	colDomainMetadata     = "domainMetadata"
	colSidecar            = "sidecar"
	colCheckpointMetadata = "checkpointMetadata"
	colStatsParsed        = "stats_parsed"
	colPartitionsParsed   = "partitionValues_parsed"
)

// group is a set of leaves that move through the rows of a row group
// together: those of one top-level action column, or of the parsed
// statistics or partition values of add or remove.
type group struct {
	name   string
	def    byte    // definition level at which the struct is present
	leaves []*leaf // every leaf the decoder reads
	probe  *leaf   // the leaf whose levels say in which rows the struct is
	row    int     // the row, within the row group, the leaves are at
	open   bool    // the leaves are open on the current row group
	src    *source // where the leaves are opened
}

// binder finds the columns a decoder needs in the file schema and makes
// their leaves, adding each to a group.
type binder struct {
	g *group
}

// source is the file and row group that groups open their leaves on.
type source struct {
	ctx     context.Context
	obj     *parquetio.Object
	rg      parquet.RowGroup
	meta    *format.RowGroup
	numRows int
	opened  []*group // groups open on rg
}

// leafKind is what a bound leaf must hold.
type leafKind uint8

const (
	kindString leafKind = iota
	kindInt
	kindBool
)

// leaf binds the leaf child name of c, or returns nil if c has no such
// child. A child of the wrong type makes the file corrupt.
func (b binder) leaf(c *parquet.Column, name string, k leafKind) *leaf {
	ch := child(c, name)
	if ch == nil {
		return nil
	}
	l := b.bindLeaf(ch)
	ok := false
	switch k {
	case kindString:
		ok = l.Kind == parquet.ByteArray
		l.raw.Text = true
	case kindInt:
		ok = l.Kind == parquet.Int32 || l.Kind == parquet.Int64
	case kindBool:
		ok = l.Kind == parquet.Boolean
	}
	if !ok || l.MaxRep != 0 {
		corruptf("column %s has type %s, which does not fit the checkpoint schema", l.Name, typeName(ch))
	}
	return l
}

// bindLeaf makes the leaf for column c, which must be a leaf, and adds it to
// the group.
func (b binder) bindLeaf(c *parquet.Column) *leaf {
	if !c.Leaf() {
		corruptf("column %s is a group where the checkpoint schema has a value", pathOf(c))
	}
	l := &leaf{col: c}
	l.Cursor = parquetio.Cursor{
		File:   b.g.src.obj.Name(),
		Name:   pathOf(c),
		MaxDef: byte(c.MaxDefinitionLevel()),
		MaxRep: byte(c.MaxRepetitionLevel()),
		Kind:   kindOf(c),
		Loader: &l.raw,
	}
	b.g.leaves = append(b.g.leaves, l)
	if b.g.probe == nil || (b.g.probe.MaxRep > 0 && l.MaxRep == 0) {
		b.g.probe = l // prefer a leaf with one entry per row
	}
	return l
}

// The types of the file's columns, from parquet-go, which panics on some
// malformed ones (a LIST annotation on a leaf): bad input, so these calls,
// and only these, are wrapped by parquetio.Decode. The file is named when
// the abort becomes an error; the column's path is made only then, as
// these run for every leaf of every file read.

// columnType returns get of the type of column c.
func columnType[T any](c *parquet.Column, get func(parquet.Type) T) (v T) {
	if err := parquetio.Decode("", "", func() error {
		v = get(c.Type())
		return nil
	}); err != nil {
		// Decode's error, naming the column now that it failed.
		check(&deltaerr.CorruptError{Reason: "column " + pathOf(c) + ": Parquet decoder failed", Err: errors.Unwrap(err)})
	}
	return v
}

// kindOf returns the physical kind of leaf column c.
func kindOf(c *parquet.Column) parquet.Kind { return columnType(c, parquet.Type.Kind) }

// logicalOf returns the logical type of column c, nil if it has none.
func logicalOf(c *parquet.Column) *format.LogicalType {
	return columnType(c, parquet.Type.LogicalType)
}

// typeName names the type of column c for errors.
func typeName(c *parquet.Column) string { return columnType(c, parquet.Type.String) }

// child returns the child of c named name, or nil.
func child(c *parquet.Column, name string) *parquet.Column {
	if c == nil || c.Leaf() {
		return nil
	}
	return c.Column(name)
}

func pathOf(c *parquet.Column) string {
	s := ""
	for i, p := range c.Path() {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}

// structDef returns the definition level at which struct column c is
// present.
func structDef(c *parquet.Column) byte { return byte(c.MaxDefinitionLevel()) }

// mapCols is a bound map<string,string> column.
type mapCols struct {
	key, val *leaf
	mapDef   byte // definition level at which the map is not null
	kvDef    byte // definition level at which the map has an entry

	keys, vals []string                     // entries of the current row
	sig        []byte                       // the entries, NUL-separated
	cache      map[string]map[string]string // maps decoded, by sig
}

// maxCachedMaps bounds the distinct maps of one column that are shared.
const maxCachedMaps = 4096

// stringMap binds the map child name of c, or returns nil if c has none.
// Both the MAP layout with a repeated key_value group and the legacy one
// (a group annotated MAP_KEY_VALUE, any names) are accepted.
func (b binder) stringMap(c *parquet.Column, name string) *mapCols {
	m := child(c, name)
	if m == nil {
		return nil
	}
	kids := m.Columns()
	if m.Leaf() || len(kids) != 1 || !kids[0].Repeated() || kids[0].Leaf() || len(kids[0].Columns()) != 2 || m.MaxRepetitionLevel() != 0 {
		corruptf("column %s is not a map<string,string>", pathOf(m))
	}
	kv := kids[0]
	mc := &mapCols{mapDef: byte(m.MaxDefinitionLevel()), kvDef: byte(kv.MaxDefinitionLevel())}
	mc.key = b.bindLeaf(kv.Columns()[0])
	mc.val = b.bindLeaf(kv.Columns()[1])
	for _, l := range []*leaf{mc.key, mc.val} {
		if l.Kind != parquet.ByteArray || l.MaxRep != 1 {
			corruptf("column %s is not a map<string,string>", pathOf(m))
		}
		l.raw.Text = true
	}
	return mc
}

// listCols is a bound array<string> column.
type listCols struct {
	elem    *leaf
	listDef byte // definition level at which the list is not null
	elemDef byte // definition level at which the list has an element
}

// stringList binds the array child name of c, or returns nil if c has none.
// The three-level LIST layout and the legacy two-level one are accepted.
func (b binder) stringList(c *parquet.Column, name string) *listCols {
	lc := child(c, name)
	if lc == nil {
		return nil
	}
	bad := func() { corruptf("column %s is not an array<string>", pathOf(lc)) }
	kids := lc.Columns()
	if lc.Leaf() || len(kids) != 1 || !kids[0].Repeated() || lc.MaxRepetitionLevel() != 0 {
		bad()
	}
	rep := kids[0]
	el := rep
	if !rep.Leaf() {
		if len(rep.Columns()) != 1 {
			bad()
		}
		el = rep.Columns()[0]
	}
	out := &listCols{listDef: byte(lc.MaxDefinitionLevel()), elemDef: byte(rep.MaxDefinitionLevel())}
	out.elem = b.bindLeaf(el)
	if out.elem.Kind != parquet.ByteArray || out.elem.MaxRep != 1 {
		bad()
	}
	out.elem.raw.Text = true
	return out
}

// dvCols is a bound deletion vector descriptor.
type dvCols struct {
	def                                                        byte
	leaves                                                     []*leaf
	storageType, pathOrInline, offset, size, card, maxRowIndex *leaf
}

func (b binder) deletionVector(c *parquet.Column) *dvCols {
	dc := child(c, "deletionVector")
	if dc == nil {
		return nil
	}
	if dc.Leaf() {
		corruptf("column %s is not a struct", pathOf(dc))
	}
	first := len(b.g.leaves)
	dv := &dvCols{
		def:          structDef(dc),
		storageType:  b.leaf(dc, "storageType", kindString),
		pathOrInline: b.leaf(dc, "pathOrInlineDv", kindString),
		offset:       b.leaf(dc, "offset", kindInt),
		size:         b.leaf(dc, "sizeInBytes", kindInt),
		card:         b.leaf(dc, "cardinality", kindInt),
		maxRowIndex:  b.leaf(dc, "maxRowIndex", kindInt),
	}
	dv.leaves = b.g.leaves[first:len(b.g.leaves):len(b.g.leaves)]
	if len(dv.leaves) == 0 {
		return nil
	}
	return dv
}

// isText reports whether a byte array column holds text rather than binary.
func isText(c *parquet.Column) bool {
	lt := logicalOf(c)
	if lt == nil {
		return false
	}
	switch lt.Value.(type) {
	case *format.StringType, *format.EnumType, *format.JsonType:
		return true
	}
	return false
}
