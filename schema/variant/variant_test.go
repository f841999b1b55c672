package variant_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema/variant"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dec(t *testing.T, ty variant.Type, x string, scale int) []byte {
	t.Helper()
	u, _ := new(big.Int).SetString(x, 10)
	b, ok := variant.AppendDecimal(nil, ty, u, scale)
	if !ok {
		t.Fatalf("AppendDecimal(%v, %s, %d) refused", ty, x, scale)
	}
	return b
}

func obj(t *testing.T, fields ...variant.Field) []byte {
	t.Helper()
	b, err := variant.AppendObject(nil, fields)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEncode checks the builders against bytes worked out by hand from
// VariantEncoding.md's tables, and against values Spark wrote (the
// corpus's spark-shredded-variant-preview-delta holds {"key": n} as
// 02 01 00 00 02 0c nn).
func TestEncode(t *testing.T) {
	long := strings.Repeat("x", 64)
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"null", variant.AppendNull(nil), "00"},
		{"true", variant.AppendBool(nil, true), "04"},
		{"false", variant.AppendBool(nil, false), "08"},
		{"int8", variant.AppendInt(nil, variant.TypeInt8, -1), "0c ff"},
		{"int16", variant.AppendInt(nil, variant.TypeInt16, 0x0102), "10 0201"},
		{"int32", variant.AppendInt(nil, variant.TypeInt32, -2), "14 feffffff"},
		{"int64", variant.AppendInt(nil, variant.TypeInt64, 1), "18 0100000000000000"},
		{"date", variant.AppendInt(nil, variant.TypeDate, 19675), "2c db4c0000"},
		{"timestamp", variant.AppendInt(nil, variant.TypeTimestamp, 1), "30 0100000000000000"},
		{"timestamp_ntz", variant.AppendInt(nil, variant.TypeTimestampNTZ, 1), "34 0100000000000000"},
		{"time", variant.AppendInt(nil, variant.TypeTime, 1), "44 0100000000000000"},
		{"timestamp nanos", variant.AppendInt(nil, variant.TypeTimestampNanos, -1), "48 ffffffffffffffff"},
		{"timestamp_ntz nanos", variant.AppendInt(nil, variant.TypeTimestampNTZNanos, 2), "4c 0200000000000000"},
		{"float", variant.AppendFloat(nil, 1.5), "38 0000c03f"},
		{"double", variant.AppendDouble(nil, -2), "1c 00000000000000c0"},
		{"decimal4", dec(t, variant.TypeDecimal4, "-12345", 2), "20 02 c7cfffff"},
		{"decimal8", dec(t, variant.TypeDecimal8, "1", 0), "24 00 0100000000000000"},
		{"decimal16 small", dec(t, variant.TypeDecimal16, "-1", 38), "28 26 ffffffffffffffffffffffffffffffff"},
		{"decimal16 wide", dec(t, variant.TypeDecimal16, "18446744073709551616", 0), "28 00 00000000000000000100000000000000"},
		{"short string", variant.AppendString(nil, "n/a"), "0d 6e2f61"},
		{"empty string", variant.AppendString(nil, ""), "01"},
		{"long string", variant.AppendString(nil, long), "40 40000000" + hex.EncodeToString([]byte(long))},
		{"binary", variant.AppendBinary(nil, "\x00\xff"), "3c 02000000 00ff"},
		{"uuid", variant.AppendUUID(nil, [16]byte{0: 0x12, 15: 0x34}), "50 12000000000000000000000000000034"},
		{"spark object", obj(t, variant.Field{Name: "key", ID: 0, Value: []byte{0x0c, 0x07}}), "02 01 00 00 02 0c07"},
		// Fields sorted by name, whatever the ids; offsets ascend.
		{"object order", obj(t,
			variant.Field{Name: "c", ID: 0, Value: []byte{0x0c, 3}},
			variant.Field{Name: "a", ID: 2, Value: []byte{0x0c, 1}},
			variant.Field{Name: "b", ID: 1, Value: []byte{0x04}}),
			"02 03 02 01 00 00 02 03 05 0c01 04 0c03"},
		{"empty object", obj(t), "02 00 00"},
		{"array", variant.AppendArray(nil, [][]byte{{0x0c, 1}, {0x05, 'a'}}), "03 02 00 02 04 0c01 0561"},
		{"empty array", variant.AppendArray(nil, nil), "03 00 00"},
		{"metadata", variant.AppendMetadata(nil, []string{"key"}), "11 01 00 03 6b6579"},
		{"empty metadata", variant.AppendMetadata(nil, nil), "01 00 00"},
		{"unsorted metadata", variant.AppendMetadata(nil, []string{"b", "a"}), "01 02 00 01 02 6261"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if want := unhex(t, c.want); !bytes.Equal(c.got, want) {
				t.Fatalf("got % x, want % x", c.got, want)
			}
			if c.name == "metadata" || strings.HasSuffix(c.name, " metadata") {
				return
			}
			if n, err := variant.Size(c.got); err != nil || n != len(c.got) {
				t.Fatalf("Size = %d, %v; want %d", n, err, len(c.got))
			}
		})
	}
}

// TestWideHeaders: more than 255 elements take a 4-byte count, and ids
// and offsets past 255 take two bytes.
func TestWideHeaders(t *testing.T) {
	elems := make([][]byte, 300)
	fields := make([]variant.Field, 300)
	names := make([]string, 300)
	for i := range elems {
		elems[i] = variant.AppendInt(nil, variant.TypeInt8, int64(i%100))
		names[i] = string(rune('a'+i/26/26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
		fields[i] = variant.Field{Name: names[i], ID: i, Value: elems[i]}
	}
	arr := variant.AppendArray(nil, elems)
	if arr[0] != (1<<2|1)<<2|3 || arr[1] != 44 || arr[2] != 1 {
		t.Fatalf("array header % x", arr[:5])
	}
	o := obj(t, fields...)
	if o[0] != (1<<4|1<<2|1)<<2|2 {
		t.Fatalf("object header %x", o[0])
	}
	m, err := variant.ParseMetadata(variant.AppendMetadata(nil, names))
	if err != nil {
		t.Fatal(err)
	}
	got, err := variant.ObjectFields(nil, m, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 || got[299].Name != names[299] || !bytes.Equal(got[299].Value, elems[299]) {
		t.Fatalf("fields back: %d, last %+v", len(got), got[len(got)-1])
	}
	for _, name := range []string{"aaa", "all", names[299]} {
		if id, ok := m.Find(name); !ok || names[id] != name {
			t.Fatalf("Find(%q) = %d, %v", name, id, ok)
		}
	}
}

// TestObjectFields reads an object whose values are not in field order,
// as the encoding allows, with an unsorted metadata.
func TestObjectFields(t *testing.T) {
	m, err := variant.ParseMetadata(unhex(t, "01 02 00 01 02 6261")) // ["b", "a"]
	if err != nil {
		t.Fatal(err)
	}
	// {"a": true, "b": 7}: ids [1 (a), 0 (b)], offsets [2, 0, 3]: b's
	// value first.
	o := unhex(t, "02 02 01 00 02 00 03 0c07 04")
	got, err := variant.ObjectFields(nil, m, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "a" || !bytes.Equal(got[0].Value, []byte{4}) ||
		got[1].Name != "b" || !bytes.Equal(got[1].Value, []byte{0x0c, 7}) {
		t.Fatalf("fields %+v", got)
	}
	if id, ok := m.Find("a"); !ok || id != 1 {
		t.Fatalf("Find(a) = %d, %v", id, ok)
	}
	if _, ok := m.Find("z"); ok {
		t.Fatal("Find(z) found")
	}
	if _, err := variant.AppendObject(nil, []variant.Field{{Name: "a"}, {Name: "a", ID: 1}}); !errors.Is(err, variant.ErrMalformed) {
		t.Fatalf("duplicate field: %v", err)
	}
}

// TestMalformed: bad bytes give ErrMalformed (and deltaerr.ErrCorrupt),
// never a panic.
func TestMalformed(t *testing.T) {
	meta := []string{"", "02", "01 05 00", "01 01 01 00", "41 00", "01 02 00 03 01 616263"}
	for _, s := range meta {
		if _, err := variant.ParseMetadata(unhex(t, s)); !errors.Is(err, variant.ErrMalformed) || !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("ParseMetadata(%s) = %v", s, err)
		}
	}
	m, _ := variant.ParseMetadata(unhex(t, "01 01 00 01 61"))
	values := []string{"", "3c 0500", "3c 05000000 00", "02 05 00", "02 01 00 00 09 0c01", "03 01 00 05 0c01",
		"02 01 07 00 02 0c01", "fc", "02 01 00 02 02 0c01"}
	for _, s := range values {
		v := unhex(t, s)
		_, err1 := variant.Size(v)
		_, err2 := variant.ObjectFields(nil, m, v)
		if err1 == nil && err2 == nil {
			t.Errorf("% x: no error", v)
		}
		for _, err := range []error{err1, err2} {
			if err != nil && !errors.Is(err, variant.ErrMalformed) {
				t.Errorf("% x: %v", v, err)
			}
		}
	}
}

// FuzzDecode: no input panics the decoders.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{1, 1, 0, 1, 'a'}, []byte{2, 1, 0, 0, 2, 0x0c, 1})
	f.Fuzz(func(t *testing.T, meta, value []byte) {
		m, err := variant.ParseMetadata(meta)
		if err == nil {
			for id := range min(m.Len(), 4) {
				name, _ := m.Key(id)
				m.Find(name)
			}
			variant.ObjectFields(nil, m, value)
		}
		variant.Size(value)
	})
}
