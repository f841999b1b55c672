package datafile

import (
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/internal/parquetio"
	"github.com/godelta/delta/schema"
)

// colKind is what a col reads.
type colKind uint8

const (
	colNull    colKind = iota // absent from the file, or void: always null
	colLeaf                   // a primitive value of one leaf column
	colStruct                 // a struct (or a variant's two binaries)
	colList                   // an array
	colMap                    // a map
	colVariant                // a shredded variant: see shredded.go
)

// col reads the values of one wanted field (or array element, map key or
// value) from the leaf columns under the Parquet node it was bound to.
//
// Invariant: when value is called, every leaf in leaves is at the first
// entry of the value to read, and value moves each of them past the last
// entry of that value. Entries of a null or empty value have a definition
// level below def (or repDef), one per leaf.
type col struct {
	kind     colKind
	leaf     *leaf  // colLeaf
	children []*col // colStruct: fields; colList: element; colMap: key, value
	// leaves are all leaves this col reads, in column order; probe, the
	// first of them, decides whether the value is null or empty.
	leaves []*leaf
	probe  *leaf
	// extra is a leaf read only for its levels: set when no child reads a
	// leaf under the node (every wanted field of a struct is absent from
	// the file, or an array's element type is void), so that the col can
	// still tell null from present.
	extra *leaf
	// def is the definition level at which the value is present (not
	// null); repDef, of a list or map, the level at which it has an
	// element; rep, the repetition level of a new element (lists, maps)
	// or of the node (structs).
	def, repDef, rep int
	scratch          []schema.Value
	// shred describes the typed_value of a colVariant, whose children
	// read metadata, value and typed_value.
	shred *shred
}

// binder binds a wanted schema to the file's schema.
type binder struct {
	byID   bool
	file   string  // the file's name, for errors
	leaves []*leaf // every leaf bound, in bind order
}

// variantStruct is how a variant is read: a struct of its two binaries,
// metadata first.
var variantStruct = &schema.StructType{Fields: []schema.StructField{
	{Name: "metadata", Type: schema.Binary},
	{Name: "value", Type: schema.Binary},
}}

// findChild returns the child of g that field f matches: by field id when
// the binder matches ids and f has one, else by name, exact first, then
// ignoring case.
func (b *binder) findChild(g *pnode, f *schema.StructField, path []string) (*pnode, error) {
	if b.byID {
		if id, ok := f.ColumnMappingID(); ok {
			for _, c := range g.children {
				if int64(c.fieldID) == id {
					return c, nil
				}
			}
			return nil, nil
		}
	}
	return findFold(g, f.Name, path)
}

// findName returns the child of g named name, compared exactly.
func findName(g *pnode, name string) *pnode {
	for _, c := range g.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// findFold returns the child of g named name, compared exactly, else
// ignoring case; two children that match only ignoring case are an
// error, as in Spark.
func findFold(g *pnode, name string, path []string) (*pnode, error) {
	if c := findName(g, name); c != nil {
		return c, nil
	}
	var found *pnode
	for _, c := range g.children {
		if strings.EqualFold(c.name, name) {
			if found != nil {
				return nil, mismatch(path, "ambiguous: the file has both "+found.name+" and "+c.name)
			}
			found = c
		}
	}
	return found, nil
}

// bindTop binds the top-level fields of want to the root of the file.
func (b *binder) bindTop(root *pnode, want *schema.StructType) ([]*col, error) {
	cols := make([]*col, len(want.Fields))
	for i := range want.Fields {
		f := &want.Fields[i]
		path := []string{f.Name}
		n, err := b.findChild(root, f, path)
		if err != nil {
			return nil, err
		}
		c, err := b.bindField(f.Type, n, path)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return cols, nil
}

// bindField binds a field of type want to node n (nil when absent). A
// repeated node outside a LIST group can only be read as an array.
func (b *binder) bindField(want schema.DataType, n *pnode, path []string) (*col, error) {
	if n != nil && n.rep == format.Repeated {
		if _, ok := want.(*schema.ArrayType); !ok && want != schema.Void {
			return nil, mismatch(path, n.describe()+" as "+want.String())
		}
	}
	return b.bind(want, n, path, false)
}

// bind binds want to n; asElement says n is the repeated node of a list
// read as its element.
func (b *binder) bind(want schema.DataType, n *pnode, path []string, asElement bool) (*col, error) {
	if n == nil || want == schema.Void {
		return &col{kind: colNull}, nil
	}
	switch t := want.(type) {
	case *schema.StructType:
		return b.bindStruct(t, n, path, asElement)
	case *schema.ArrayType:
		return b.bindList(t, n, path)
	case *schema.MapType:
		return b.bindMap(t, n, path)
	case schema.PrimitiveType:
		if t == schema.Variant {
			if shreddedVariant(n) {
				return b.bindVariant(n, path, asElement)
			}
			return b.bindStruct(variantStruct, n, path, asElement)
		}
	}
	if !n.leaf {
		return nil, mismatch(path, n.describe()+" as "+want.String())
	}
	conv, err := converter(n, want, path)
	if err != nil {
		return nil, err
	}
	l := b.newLeaf(n, path, conv)
	return &col{kind: colLeaf, leaf: l, leaves: []*leaf{l}, probe: l}, nil
}

func (b *binder) newLeaf(n *pnode, path []string, conv convFunc) *leaf {
	l := &leaf{node: n, conv: conv, vals: getVals()}
	l.Cursor = parquetio.Cursor{
		File:   b.file,
		Name:   strings.Join(path, "."),
		MaxDef: byte(n.defLevel),
		MaxRep: byte(n.repLevel),
		Kind:   parquet.Kind(n.phys),
	}
	if conv != nil {
		l.Loader = l
	}
	b.leaves = append(b.leaves, l)
	return l
}

func (b *binder) bindStruct(t *schema.StructType, n *pnode, path []string, asElement bool) (*col, error) {
	if n.leaf || n.groupAnn == groupList || n.groupAnn == groupMap || (n.rep == format.Repeated && !asElement) {
		return nil, mismatch(path, n.describe()+" as struct")
	}
	c := &col{kind: colStruct, def: n.defLevel, rep: n.repLevel}
	for i := range t.Fields {
		f := &t.Fields[i]
		fp := append(path[:len(path):len(path)], f.Name)
		child, err := b.findChild(n, f, fp)
		if err != nil {
			return nil, err
		}
		cc, err := b.bindField(f.Type, child, fp)
		if err != nil {
			return nil, err
		}
		c.children = append(c.children, cc)
		c.leaves = append(c.leaves, cc.leaves...)
	}
	b.finish(c, n, path)
	return c, nil
}

// finish sets the probe of a nested col, adding an extra leaf when no
// child reads one.
func (b *binder) finish(c *col, n *pnode, path []string) {
	if len(c.leaves) == 0 {
		p := n.leaves[0]
		c.extra = b.newLeaf(p, append(path[:len(path):len(path)], p.name), nil)
		c.leaves = []*leaf{c.extra}
	}
	c.probe = c.leaves[0]
}

// listView is how a Parquet node holds a list: see LogicalTypes.md,
// "Lists", and its backward-compatibility rules.
type listView struct {
	repeated *pnode // the repeated node: one per element
	elem     *pnode // the element: repeated itself, or its only child
	def      int    // level at which the list is present
}

// listLayout finds the list structure of n. want, if known, is the wanted
// element type: it settles the ambiguous legacy case of a repeated group
// of one field.
func listLayout(n *pnode, want schema.DataType) (listView, bool) {
	if n.rep == format.Repeated {
		// A repeated field not in a LIST group: a required list whose
		// elements are the field's values.
		return listView{repeated: n, elem: n, def: n.defLevel - 1}, true
	}
	if n.leaf || len(n.children) != 1 || n.children[0].rep != format.Repeated {
		return listView{}, false
	}
	r := n.children[0]
	lv := listView{repeated: r, elem: r, def: n.defLevel}
	if r.leaf || len(r.children) != 1 {
		return lv, true // a repeated primitive or a group of several fields
	}
	c := r.children[0]
	_, wantStruct := want.(*schema.StructType)
	wantStruct = wantStruct || want == schema.Variant
	switch {
	case want != nil && !wantStruct:
		lv.elem = c // a struct of one field cannot be read as want anyway
	case want != nil && c.leaf:
		lv.elem = r // nor can a leaf be read as a struct
	case r.name == "array" || r.name == n.name+"_tuple":
		lv.elem = r
	default:
		lv.elem = c
	}
	return lv, true
}

func (b *binder) bindList(t *schema.ArrayType, n *pnode, path []string) (*col, error) {
	if n.leaf && n.rep != format.Repeated {
		return nil, mismatch(path, n.describe()+" as array")
	}
	if n.groupAnn == groupMap {
		return nil, mismatch(path, n.describe()+" as array")
	}
	lv, ok := listLayout(n, t.ElementType)
	if !ok {
		return nil, mismatch(path, n.describe()+" as array")
	}
	ep := append(path[:len(path):len(path)], "element")
	elem, err := b.bind(t.ElementType, lv.elem, ep, lv.elem == lv.repeated)
	if err != nil {
		return nil, err
	}
	c := &col{kind: colList, children: []*col{elem}, leaves: elem.leaves,
		def: lv.def, repDef: lv.repeated.defLevel, rep: lv.repeated.repLevel}
	b.finish(c, lv.repeated, path)
	return c, nil
}

// mapView is how a Parquet node holds a map: see LogicalTypes.md, "Maps".
type mapView struct {
	kv         *pnode // the repeated group of key and value
	key, value *pnode // value is nil for a map without values
	def        int    // level at which the map is present
}

func mapLayout(n *pnode) (mapView, bool) {
	mv := mapView{kv: n, def: n.defLevel - 1}
	if n.rep != format.Repeated {
		if n.leaf || len(n.children) != 1 {
			return mapView{}, false
		}
		mv.kv, mv.def = n.children[0], n.defLevel
	}
	kv := mv.kv
	if kv.leaf || kv.rep != format.Repeated || len(kv.children) == 0 || len(kv.children) > 2 {
		return mapView{}, false
	}
	mv.key = findName(kv, "key")
	if mv.key == nil {
		mv.key = kv.children[0]
	}
	mv.value = findName(kv, "value")
	if mv.value == nil && len(kv.children) == 2 {
		mv.value = kv.children[1]
		if mv.value == mv.key {
			mv.value = kv.children[0]
		}
	}
	if mv.value == mv.key {
		mv.value = nil
	}
	return mv, true
}

func (b *binder) bindMap(t *schema.MapType, n *pnode, path []string) (*col, error) {
	if n.leaf || n.groupAnn == groupList {
		return nil, mismatch(path, n.describe()+" as map")
	}
	mv, ok := mapLayout(n)
	if !ok {
		return nil, mismatch(path, n.describe()+" as map")
	}
	key, err := b.bindField(t.KeyType, mv.key, append(path[:len(path):len(path)], "key"))
	if err != nil {
		return nil, err
	}
	value, err := b.bindField(t.ValueType, mv.value, append(path[:len(path):len(path)], "value"))
	if err != nil {
		return nil, err
	}
	c := &col{kind: colMap, children: []*col{key, value},
		leaves: append(append([]*leaf(nil), key.leaves...), value.leaves...),
		def:    mv.def, repDef: mv.kv.defLevel, rep: mv.kv.repLevel}
	b.finish(c, mv.kv, path)
	return c, nil
}
