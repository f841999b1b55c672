package datafile_test

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/schema"
)

// patch edits the schema elements of a written file's footer: it adds
// what parquet-go's writer cannot write itself, such as LIST annotations
// on legacy list groups or legacy converted types.
type patch func(elems []format.SchemaElement)

// at applies fn to the element at the dotted path.
func at(path string, fn func(e *format.SchemaElement)) patch {
	return func(elems []format.SchemaElement) {
		type frame struct {
			prefix string
			left   int32
		}
		stack := []frame{{"", elems[0].NumChildren.V}}
		for i := 1; i < len(elems); i++ {
			for stack[len(stack)-1].left == 0 {
				stack = stack[:len(stack)-1]
			}
			top := &stack[len(stack)-1]
			top.left--
			p := top.prefix + elems[i].Name
			if p == path {
				fn(&elems[i])
				return
			}
			if nc, ok := elems[i].NumChildren.Get(); ok && nc > 0 && !elems[i].Type.Valid {
				stack = append(stack, frame{p + ".", nc})
			}
		}
		panic("no schema element " + path)
	}
}

func listAnn(e *format.SchemaElement) {
	e.LogicalType = format.LogicalType{}
	e.ConvertedType = thrift.New(deprecated.List)
}

func mapAnn(e *format.SchemaElement) {
	e.LogicalType = format.LogicalType{}
	e.ConvertedType = thrift.New(deprecated.Map)
}

func mapKeyValueAnn(e *format.SchemaElement) {
	e.LogicalType = format.LogicalType{}
	e.ConvertedType = thrift.New(deprecated.MapKeyValue)
}

func variantAnn(e *format.SchemaElement) {
	e.LogicalType = format.LogicalType{Value: &format.VariantType{}}
}

// legacyDecimal replaces a leaf's logical type by the DECIMAL converted
// type alone, as old writers wrote it.
func legacyDecimal(precision, scale int) func(e *format.SchemaElement) {
	return func(e *format.SchemaElement) {
		e.LogicalType = format.LogicalType{}
		e.ConvertedType = thrift.New(deprecated.Decimal)
		e.Precision = thrift.New(int32(precision))
		e.Scale = thrift.New(int32(scale))
	}
}

func convertedOnly(ct deprecated.ConvertedType) func(e *format.SchemaElement) {
	return func(e *format.SchemaElement) {
		e.LogicalType = format.LogicalType{}
		e.ConvertedType = thrift.New(ct)
	}
}

func fieldID(id int32) func(e *format.SchemaElement) {
	return func(e *format.SchemaElement) { e.FieldID = id }
}

// writeFile writes rows (map[string]any, as parquet-go's writer takes
// them) with the schema root, then applies the patches to the footer.
func writeFile(t testing.TB, root parquet.Group, rows []any, patches []patch, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append([]parquet.WriterOption{parquet.NewSchema("spark_schema", root)}, opts...)
	w := parquet.NewWriter(&buf, opts...)
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatalf("write %v: %v", r, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(patches) == 0 {
		return b
	}
	n := len(b)
	flen := int(binary.LittleEndian.Uint32(b[n-8:]))
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[n-8-flen:n-8], &md); err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		p(md.Schema)
	}
	meta, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), b[:n-8-flen]...)
	out = append(out, meta...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(meta)))
	return append(out, "PAR1"...)
}

// Schema builders for the wanted schemas of the tests.

func st(fs ...schema.StructField) *schema.StructType { return &schema.StructType{Fields: fs} }

func fld(name string, t schema.DataType) schema.StructField {
	return schema.StructField{Name: name, Type: t, Nullable: true}
}

func withID(f schema.StructField, id int) schema.StructField {
	f.Metadata = append(f.Metadata, schema.MetadataEntry{Key: schema.MetadataColumnMappingID, Value: []byte(strconv.Itoa(id))})
	return f
}

func arr(t schema.DataType) *schema.ArrayType {
	return &schema.ArrayType{ElementType: t, ContainsNull: true}
}

func mp(k, v schema.DataType) *schema.MapType {
	return &schema.MapType{KeyType: k, ValueType: v, ValueContainsNull: true}
}

func dec(p, s int) schema.DecimalType { return schema.DecimalType{Precision: p, Scale: s} }

// row builds a map row from alternating keys and values.
func row(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

func rowsOf(rs ...map[string]any) []any {
	out := make([]any, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// twos returns x as a size-byte big-endian two's complement.
func twos(x int64, size int) []byte {
	b := make([]byte, size)
	for i := size - 1; i >= 0; i-- {
		b[i] = byte(x)
		x >>= 8
	}
	return b
}

// int96 encodes micros since the epoch as an INT96 timestamp.
func int96(micros int64) deprecated.Int96 {
	const day = 86_400_000_000
	days := micros / day
	rem := micros % day
	if rem < 0 {
		rem += day
		days--
	}
	nanos := uint64(rem) * 1000
	return deprecated.Int96{uint32(nanos), uint32(nanos >> 32), uint32(days + 2_440_588)}
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

func noAnnotation(e *format.SchemaElement) {
	e.LogicalType = format.LogicalType{}
	e.ConvertedType = thrift.Null[deprecated.ConvertedType]{}
}

// stdList is the standard three-level LIST of elem, written as plain
// groups: parquet-go's writer does not take Go values for its List node.
// autoAnnotate adds the LIST annotation.
func stdList(elem parquet.Node) parquet.Node {
	return parquet.Optional(parquet.Group{"list": parquet.Repeated(parquet.Group{"element": elem})})
}

// lst is the row value of a stdList.
func lst(elems ...any) map[string]any {
	out := make([]any, len(elems))
	for i, e := range elems {
		out[i] = row("element", e)
	}
	return row("list", out)
}

// autoAnnotate marks every group whose only child is a repeated group
// named "list" as a LIST, and "key_value" as a MAP.
func autoAnnotate(elems []format.SchemaElement) {
	for i := range len(elems) - 1 {
		e, c := &elems[i], &elems[i+1]
		if nc, _ := e.NumChildren.Get(); nc != 1 || c.RepetitionType.V != format.Repeated {
			continue
		}
		switch c.Name {
		case "list":
			listAnn(e)
		case "key_value":
			mapAnn(e)
		}
	}
}
