package datafile

import (
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/variant"
)

// Shredded variants (Parquet's VariantShredding.md, the variantShredding
// table feature). A shredded variant is a group of the binary metadata,
// an optional binary value and an optional typed_value: a primitive
// column, a group of one {value, typed_value} group per shredded object
// field, or a LIST of {value, typed_value} elements, nested at will.
//
// Reading one binds the group as a col of kind colVariant whose children
// read metadata, value and typed_value as plain values: typed_value
// primitives raw (the Parquet value, no conversion to a Delta type, so a
// TIMESTAMP(NANOS) keeps its nanoseconds), objects as structs and arrays
// as arrays of {value, typed_value} structs. A shred tree, built beside
// the cols, says what each typed_value is; construct walks both and puts
// the variant value back together with package schema/variant, as the
// spec's construct_variant does:
//
//   - typed_value set: a primitive is encoded as the variant type its
//     Parquet type maps to; an array from its elements, none of which may
//     be missing; an object from its shredded fields that are not missing
//     plus, when value is set too (a partially shredded object), the
//     fields of value, which must be an object without any of the
//     shredded names;
//   - only value set: value as it is;
//   - both null: missing. An object field that is missing is left out; a
//     missing variant at the top reads as variant null (00), as the spec
//     requires where a value is required.
//
// A value set beside a typed primitive or array, a missing array element,
// an object field in both value and typed_value, or a shredded field name
// absent from the metadata breaks the spec: the file is corrupt.
//
// Each typed_value primitive becomes the variant type the spec's table
// pairs with its Parquet type (an INT64 an int64, a DECIMAL in INT32 a
// decimal4, a TIMESTAMP(NANOS) a timestamp with nanoseconds), and the
// file's metadata is kept: the value is what the spec's construct_variant
// returns. Spark's rebuild gives the same variant but not the same bytes:
// it narrows integers and decimals to fit each value and encodes the
// result against a metadata of its own.
//
// The result is the same struct of metadata and value binaries an
// unshredded variant reads as, so nothing above this package knows a file
// was shredded.

// shredKind is what a typed_value holds.
type shredKind uint8

const (
	shredPrim shredKind = iota
	shredObject
	shredArray
)

// shred describes a typed_value column.
type shred struct {
	kind shredKind
	// prim is the variant type of a primitive; scale, of a decimal.
	prim  variant.Type
	scale int
	// names are an object's shredded fields, in the order of the col's
	// children; fields their typed_values, nil where a field has none.
	names  []string
	fields []*shred
	// elem is an array element's typed_value, nil when it has none.
	elem *shred
}

// shreddedVariant reports whether n is a variant group with a
// typed_value.
func shreddedVariant(n *pnode) bool {
	return !n.leaf && findName(n, "typed_value") != nil
}

// bindVariant binds a shredded variant group n.
func (b *binder) bindVariant(n *pnode, path []string, asElement bool) (*col, error) {
	if n.groupAnn == groupList || n.groupAnn == groupMap || (n.rep == format.Repeated && !asElement) {
		return nil, mismatch(path, n.describe()+" as variant")
	}
	meta := findName(n, "metadata")
	if meta == nil || !meta.leaf || meta.phys != format.ByteArray || meta.rep == format.Repeated {
		return nil, mismatch(path, "shredded variant without a binary metadata")
	}
	mc, err := b.bind(schema.Binary, meta, child(path, "metadata"), false)
	if err != nil {
		return nil, err
	}
	vc, tc, sh, err := b.bindPair(n, path)
	if err != nil {
		return nil, err
	}
	c := &col{kind: colVariant, def: n.defLevel, rep: n.repLevel, shred: sh,
		children: []*col{mc, vc, tc}}
	for _, cc := range c.children {
		c.leaves = append(c.leaves, cc.leaves...)
	}
	b.finish(c, n, path)
	return c, nil
}

// bindPair binds the value and typed_value children of group g (a
// variant, an object field or an array element).
func (b *binder) bindPair(g *pnode, path []string) (vc, tc *col, sh *shred, err error) {
	value, typed := findName(g, "value"), findName(g, "typed_value")
	vc = &col{kind: colNull}
	if value != nil {
		if !value.leaf || value.phys != format.ByteArray || value.rep == format.Repeated {
			return nil, nil, nil, mismatch(child(path, "value"), value.describe()+" as a variant value")
		}
		if vc, err = b.bind(schema.Binary, value, child(path, "value"), false); err != nil {
			return nil, nil, nil, err
		}
	}
	tc = &col{kind: colNull}
	if typed != nil {
		if tc, sh, err = b.bindTyped(typed, child(path, "typed_value")); err != nil {
			return nil, nil, nil, err
		}
	}
	return vc, tc, sh, nil
}

// bindTyped binds a typed_value node.
func (b *binder) bindTyped(n *pnode, path []string) (*col, *shred, error) {
	if n.rep == format.Repeated {
		return nil, nil, mismatch(path, n.describe()+" as a typed_value")
	}
	if n.leaf {
		sh, conv, err := shreddedLeaf(n, path)
		if err != nil {
			return nil, nil, err
		}
		l := b.newLeaf(n, path, conv)
		return &col{kind: colLeaf, leaf: l, leaves: []*leaf{l}, probe: l}, sh, nil
	}
	if n.groupAnn == groupList {
		lv, ok := listLayout(n, schema.Variant)
		if !ok || lv.elem.leaf {
			return nil, nil, mismatch(path, n.describe()+" as a shredded array")
		}
		ep := child(path, "element")
		ec, sh, err := b.bindShredField(lv.elem, ep)
		if err != nil {
			return nil, nil, err
		}
		c := &col{kind: colList, children: []*col{ec}, leaves: ec.leaves,
			def: lv.def, repDef: lv.repeated.defLevel, rep: lv.repeated.repLevel}
		b.finish(c, lv.repeated, path)
		return c, &shred{kind: shredArray, elem: sh}, nil
	}
	if n.groupAnn == groupMap {
		return nil, nil, mismatch(path, n.describe()+" as a typed_value")
	}
	c := &col{kind: colStruct, def: n.defLevel, rep: n.repLevel}
	sh := &shred{kind: shredObject}
	for _, f := range n.children {
		if f.leaf || f.rep == format.Repeated {
			return nil, nil, mismatch(child(path, f.name), f.describe()+" as a shredded object field")
		}
		fc, fs, err := b.bindShredField(f, child(path, f.name))
		if err != nil {
			return nil, nil, err
		}
		c.children = append(c.children, fc)
		c.leaves = append(c.leaves, fc.leaves...)
		sh.names = append(sh.names, f.name)
		sh.fields = append(sh.fields, fs)
	}
	b.finish(c, n, path)
	return c, sh, nil
}

// bindShredField binds a {value, typed_value} group g (an object field or an
// array element) as the struct of those two.
func (b *binder) bindShredField(g *pnode, path []string) (*col, *shred, error) {
	vc, tc, sh, err := b.bindPair(g, path)
	if err != nil {
		return nil, nil, err
	}
	if vc.kind == colNull && tc.kind == colNull {
		return nil, nil, mismatch(path, "shredded field with neither value nor typed_value")
	}
	c := &col{kind: colStruct, def: g.defLevel, rep: g.repLevel, children: []*col{vc, tc}}
	c.leaves = append(append(c.leaves, vc.leaves...), tc.leaves...)
	b.finish(c, g, path)
	return c, sh, nil
}

// shreddedLeaf maps a typed_value leaf to its variant type (the table of
// VariantShredding.md, "Shredded Value Types") and a converter to a raw
// Value: integers, dates, times and timestamps as long, in the file's
// unit; decimals as decimals; text as string; the rest as binary.
func shreddedLeaf(n *pnode, path []string) (*shred, convFunc, error) {
	a := n.ann
	bad := func() (*shred, convFunc, error) {
		return nil, nil, unsupported(path, n.describe()+" as a shredded variant value")
	}
	prim := func(t variant.Type, conv convFunc) (*shred, convFunc, error) {
		return &shred{kind: shredPrim, prim: t}, conv, nil
	}
	long := func(x int32) schema.Value { return schema.LongValue(int64(x)) }
	if a.kind == annDecimal {
		if a.precision < 1 || a.precision > schema.MaxDecimalPrecision || a.scale < 0 || a.scale > a.precision {
			return bad()
		}
		conv, err := decimalConverter(n, schema.DecimalType{Precision: a.precision, Scale: a.scale}, path)
		if err != nil {
			return nil, nil, err
		}
		// By the physical type, as the spec's table pairs them.
		prim := variant.TypeDecimal16
		switch n.phys {
		case format.Int32:
			prim = variant.TypeDecimal4
		case format.Int64:
			prim = variant.TypeDecimal8
		}
		return &shred{kind: shredPrim, prim: prim, scale: a.scale}, conv, nil
	}
	switch n.phys {
	case format.Boolean:
		if a.kind == annNone {
			return prim(variant.TypeTrue, convBoolean)
		}
	case format.Int32:
		switch {
		case a.kind == annNone || (a.kind == annInt && a.signed && a.bits == 32):
			return prim(variant.TypeInt32, convInt32(long, 32, true))
		case a.kind == annInt && a.signed && a.bits == 8:
			return prim(variant.TypeInt8, convInt32(long, 8, true))
		case a.kind == annInt && a.signed && a.bits == 16:
			return prim(variant.TypeInt16, convInt32(long, 16, true))
		case a.kind == annDate:
			return prim(variant.TypeDate, convInt32(long, 32, true))
		}
	case format.Int64:
		switch {
		case a.kind == annNone || (a.kind == annInt && a.signed && a.bits == 64):
			return prim(variant.TypeInt64, convInt64Long)
		case a.kind == annTime && a.unit == 1 && !a.utc:
			return prim(variant.TypeTime, convInt64Long)
		case a.kind == annTimestamp && a.unit == 1:
			if a.utc {
				return prim(variant.TypeTimestamp, convInt64Long)
			}
			return prim(variant.TypeTimestampNTZ, convInt64Long)
		case a.kind == annTimestamp && a.unit == -1000:
			if a.utc {
				return prim(variant.TypeTimestampNanos, convInt64Long)
			}
			return prim(variant.TypeTimestampNTZNanos, convInt64Long)
		}
	case format.Float:
		if a.kind == annNone {
			return prim(variant.TypeFloat, convFloat)
		}
	case format.Double:
		if a.kind == annNone {
			return prim(variant.TypeDouble, convDouble)
		}
	case format.ByteArray:
		switch a.kind {
		case annString:
			return prim(variant.TypeString, convString)
		case annNone:
			return prim(variant.TypeBinary, convBinary)
		}
	case format.FixedLenByteArray:
		if a.kind == annUUID && n.typeLen == 16 {
			return prim(variant.TypeUUID, convFixedBinary)
		}
	}
	return bad()
}

// variantValue puts a shredded variant back together from the values its
// col read: metadata, value and typed_value. It returns the struct of the
// metadata and the value, as an unshredded variant reads.
func (r *reader) variantValue(c *col, parts []schema.Value) schema.Value {
	meta := parts[0]
	if meta.IsNull() {
		failf("shredded variant without metadata")
	}
	m := r.metadata(meta.Raw())
	v, ok := construct(r.vbuf[:0], m, c.shred, parts[1], parts[2])
	if !ok {
		v = append(v, variant.Null...)
	}
	r.vbuf = v
	parts[1] = schema.BinaryValue(v)
	return schema.StructValue(parts[:2])
}

// metadata parses a variant metadata, reusing the last one parsed when
// the bytes are the same (a file's rows often share one).
func (r *reader) metadata(raw string) variant.Metadata {
	if r.vmetaOK && raw == r.vmetaRaw {
		return r.vmeta
	}
	m, err := variant.ParseMetadata([]byte(raw))
	if err != nil {
		fail(err)
	}
	r.vmeta, r.vmetaRaw, r.vmetaOK = m, raw, true
	return m
}

// construct appends to dst the variant value of a value, typed_value pair
// described by sh (nil when there is no typed_value). ok is false when
// both are null: the value is missing.
func construct(dst []byte, m variant.Metadata, sh *shred, value, typed schema.Value) (_ []byte, ok bool) {
	if typed.IsNull() || sh == nil {
		if value.IsNull() {
			return dst, false
		}
		raw := value.Raw()
		if n, err := variant.Size([]byte(raw)); err != nil || n != len(raw) {
			failf("variant value of %d bytes is not one encoded value", len(raw))
		}
		return append(dst, raw...), true
	}
	switch sh.kind {
	case shredPrim:
		if !value.IsNull() {
			failf("shredded variant has both value and a typed_value primitive")
		}
		return appendPrimitive(dst, sh, typed), true
	case shredArray:
		if !value.IsNull() {
			failf("shredded variant has both value and a typed_value array")
		}
		elems := typed.Elements()
		parts := make([][]byte, len(elems))
		for i, e := range elems {
			f := e.Fields()
			if len(f) != 2 {
				failf("shredded array element is null")
			}
			b, ok := construct(nil, m, sh.elem, f[0], f[1])
			if !ok {
				failf("shredded array element %d is missing", i)
			}
			parts[i] = b
		}
		return variant.AppendArray(dst, parts), true
	}
	// An object.
	tf := typed.Fields()
	fields := make([]variant.Field, 0, len(sh.names))
	for i, name := range sh.names {
		f := tf[i].Fields()
		if len(f) != 2 {
			continue // a null field group: missing
		}
		b, ok := construct(nil, m, sh.fields[i], f[0], f[1])
		if !ok {
			continue
		}
		id, found := m.Find(name)
		if !found {
			failf("shredded field %q is not in the variant metadata", name)
		}
		fields = append(fields, variant.Field{Name: name, ID: id, Value: b})
	}
	if !value.IsNull() {
		raw := []byte(value.Raw())
		if !variant.IsObject(raw) {
			failf("partially shredded object's value is not an object")
		}
		shredded := len(fields)
		var err error
		if fields, err = variant.ObjectFields(fields, m, raw); err != nil {
			fail(err)
		}
		for _, f := range fields[shredded:] {
			for _, name := range sh.names {
				if f.Name == name {
					failf("field %q is both shredded and in the variant value", name)
				}
			}
		}
	}
	out, err := variant.AppendObject(dst, fields)
	if err != nil {
		fail(err)
	}
	return out, true
}

// appendPrimitive encodes a typed_value primitive read raw by
// shreddedLeaf's converter.
func appendPrimitive(dst []byte, sh *shred, x schema.Value) []byte {
	switch sh.prim {
	case variant.TypeTrue:
		return variant.AppendBool(dst, x.Bool())
	case variant.TypeFloat:
		return variant.AppendFloat(dst, float32(x.Float64()))
	case variant.TypeDouble:
		return variant.AppendDouble(dst, x.Float64())
	case variant.TypeString:
		return variant.AppendString(dst, x.Raw())
	case variant.TypeBinary:
		return variant.AppendBinary(dst, x.Raw())
	case variant.TypeUUID:
		var u [16]byte
		copy(u[:], x.Raw())
		return variant.AppendUUID(dst, u)
	case variant.TypeDecimal4, variant.TypeDecimal8, variant.TypeDecimal16:
		u, _, _ := x.Decimal()
		out, ok := variant.AppendDecimal(dst, sh.prim, u, sh.scale)
		if !ok {
			failf("decimal %s does not fit its variant type", x)
		}
		return out
	}
	return variant.AppendInt(dst, sh.prim, x.Int64())
}
