package datafile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// TestBatches reads a file of several row groups and many pages in small
// batches: rows come in file order, FirstRow counts across row groups and
// a batch never spans two row groups.
func TestBatches(t *testing.T) {
	root := parquet.Group{
		"id": parquet.Int(64),
		"s":  parquet.Optional(parquet.String()),
		"l":  stdList(parquet.Optional(parquet.Int(32))),
	}
	const n = 1000
	var rows []any
	var expect []string
	for i := range n {
		r := row("id", int64(i), "s", nil, "l", nil)
		s, l := "null", "null"
		if i%3 != 0 {
			r["s"] = fmt.Sprint("s", i)
			s = fmt.Sprint("s", i)
		}
		if i%4 != 0 {
			var es []any
			var ss []string
			for j := range i % 5 {
				es = append(es, int32(j))
				ss = append(ss, fmt.Sprint(j))
			}
			r["l"] = lst(es...)
			l = "[" + strings.Join(ss, ", ") + "]"
		}
		rows = append(rows, r)
		expect = append(expect, fmt.Sprintf("[%d, %s, %s]", i, s, l))
	}
	b := writeFile(t, root, rows, []patch{autoAnnotate}, parquet.MaxRowsPerRowGroup(300), parquet.PageBufferSize(128))
	f := openBytes(t, b)
	if f.NumRows() != n {
		t.Fatalf("NumRows %d", f.NumRows())
	}
	want := st(fld("id", schema.Long), fld("s", schema.String), fld("l", arr(schema.Integer)))
	var firsts []int64
	var got []string
	err := f.Read(context.Background(), want, datafile.ReadOptions{BatchSize: 128}, func(b *datafile.Batch) error {
		firsts = append(firsts, b.FirstRow)
		for i := range b.Len {
			got = append(got, formatRow(b, i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(expect, "\n") {
		t.Fatalf("rows differ")
	}
	wantFirsts := []int64{0, 128, 256, 300, 428, 556, 600, 728, 856, 900}
	if fmt.Sprint(firsts) != fmt.Sprint(wantFirsts) {
		t.Fatalf("FirstRow %v, want %v", firsts, wantFirsts)
	}

	stop := errors.New("stop")
	calls := 0
	err = f.Read(context.Background(), want, datafile.ReadOptions{}, func(*datafile.Batch) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("callback error: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Read(ctx, want, datafile.ReadOptions{}, func(*datafile.Batch) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
}

// TestSchema infers the Delta schema of a file with no Delta schema.
func TestSchema(t *testing.T) {
	root := parquet.Group{
		"a_bool":  parquet.Leaf(parquet.BooleanType),
		"b_byte":  parquet.Optional(parquet.Int(8)),
		"c_short": parquet.Optional(parquet.Int(16)),
		"d_int":   parquet.Optional(parquet.Int(32)),
		"e_long":  parquet.Optional(parquet.Int(64)),
		"f_float": parquet.Optional(parquet.Leaf(parquet.FloatType)),
		"g_dbl":   parquet.Optional(parquet.Leaf(parquet.DoubleType)),
		"h_str":   parquet.Optional(parquet.String()),
		"i_bin":   parquet.Optional(parquet.Leaf(parquet.ByteArrayType)),
		"j_date":  parquet.Optional(parquet.Date()),
		"k_ts":    parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, true)),
		"l_ntz":   parquet.Optional(parquet.TimestampAdjusted(parquet.Microsecond, false)),
		"m_i96":   parquet.Optional(parquet.Leaf(parquet.Int96Type)),
		"n_dec":   parquet.Optional(parquet.Decimal(2, 20, parquet.FixedLenByteArrayType(9))),
		"o_list":  stdList(parquet.Int(32)),
		"p_map": parquet.Optional(parquet.Group{"key_value": parquet.Repeated(parquet.Group{
			"key": parquet.String(), "value": parquet.Optional(parquet.Int(64))})}),
		"q_st":  parquet.Group{"x": parquet.Optional(parquet.Int(32))},
		"r_rep": parquet.Repeated(parquet.String()),
		"s_var": parquet.Optional(parquet.Group{"metadata": parquet.Leaf(parquet.ByteArrayType), "value": parquet.Leaf(parquet.ByteArrayType)}),
	}
	b := writeFile(t, root, nil, []patch{autoAnnotate, at("i_bin", noAnnotation), at("s_var", variantAnn), at("e_long", fieldID(7))})
	got, err := openBytes(t, b).Schema()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[` +
		`{"name":"a_bool","type":"boolean","nullable":false,"metadata":{}},` +
		`{"name":"b_byte","type":"byte","nullable":true,"metadata":{}},` +
		`{"name":"c_short","type":"short","nullable":true,"metadata":{}},` +
		`{"name":"d_int","type":"integer","nullable":true,"metadata":{}},` +
		`{"name":"e_long","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":7}},` +
		`{"name":"f_float","type":"float","nullable":true,"metadata":{}},` +
		`{"name":"g_dbl","type":"double","nullable":true,"metadata":{}},` +
		`{"name":"h_str","type":"string","nullable":true,"metadata":{}},` +
		`{"name":"i_bin","type":"binary","nullable":true,"metadata":{}},` +
		`{"name":"j_date","type":"date","nullable":true,"metadata":{}},` +
		`{"name":"k_ts","type":"timestamp","nullable":true,"metadata":{}},` +
		`{"name":"l_ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},` +
		`{"name":"m_i96","type":"timestamp","nullable":true,"metadata":{}},` +
		`{"name":"n_dec","type":"decimal(20,2)","nullable":true,"metadata":{}},` +
		`{"name":"o_list","type":{"type":"array","elementType":"integer","containsNull":false},"nullable":true,"metadata":{}},` +
		`{"name":"p_map","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"q_st","type":{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]},"nullable":false,"metadata":{}},` +
		`{"name":"r_rep","type":{"type":"array","elementType":"string","containsNull":false},"nullable":false,"metadata":{}},` +
		`{"name":"s_var","type":"variant","nullable":true,"metadata":{}}]}`
	if got.String() != want {
		t.Fatalf("schema\n%s\nwant\n%s", got, want)
	}

	// A column with no Delta type.
	b = writeFile(t, parquet.Group{"t": parquet.Optional(parquet.Int(64))}, nil, []patch{at("t", convertedOnly(deprecated.TimeMicros))})
	if _, err := openBytes(t, b).Schema(); !errors.Is(err, datafile.ErrUnsupportedType) || !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("TIME column: %v", err)
	}
}

// TestCorrupt feeds Open and Read bytes that are not a valid Parquet
// file: each gives an error, never a panic.
func TestCorrupt(t *testing.T) {
	root := parquet.Group{
		"id": parquet.Int(64),
		"s":  parquet.Optional(parquet.String()),
		"d":  parquet.Optional(parquet.Decimal(2, 20, parquet.FixedLenByteArrayType(9))),
		"l":  stdList(parquet.Optional(parquet.Int(32))),
	}
	var rows []any
	for i := range 50 {
		rows = append(rows, row("id", int64(i), "s", fmt.Sprint(i), "d", twos(int64(i), 9), "l", lst(int32(i), nil)))
	}
	good := writeFile(t, root, rows, []patch{autoAnnotate}, parquet.Compression(&parquet.Uncompressed))
	want := st(fld("id", schema.Long), fld("s", schema.String), fld("d", dec(20, 2)), fld("l", arr(schema.Integer)))

	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"garbage", bytes.Repeat([]byte("x"), 100)},
		{"no footer", good[:len(good)-8]},
		{"bad magic", append(append([]byte(nil), good[:len(good)-4]...), "PARX"...)},
	} {
		if _, err := datafile.Open(bytes.NewReader(tc.b), int64(len(tc.b))); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%s: Open gave %v", tc.name, err)
		}
	}

	// Flip each byte of the data pages in turn: Read may fail or read
	// other values, but must not panic.
	footer := len(good) - 8 - int(uint32(good[len(good)-8])|uint32(good[len(good)-7])<<8|uint32(good[len(good)-6])<<16|uint32(good[len(good)-5])<<24)
	failures := 0
	for i := 4; i < footer; i++ {
		b := append([]byte(nil), good...)
		b[i] ^= 0xff
		f, err := datafile.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue
		}
		if _, err := tryReadRows(f, want, datafile.ReadOptions{}); err != nil {
			failures++
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("byte %d: error %v does not match ErrCorrupt", i, err)
			}
		}
	}
	if failures == 0 {
		t.Fatal("no corruption was detected")
	}
}

// failingReader fails every read at or after off.
type failingReader struct {
	b   []byte
	off int64
}

var errDisk = errors.New("disk on fire")

func (r *failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.off && off < r.off {
		return 0, errDisk
	}
	if off >= r.off && off < int64(len(r.b))-64<<10 {
		return 0, errDisk
	}
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// TestIOError checks that a failing reader's error comes back as itself,
// not as corruption.
func TestIOError(t *testing.T) {
	var rows []any
	for i := range 100_000 {
		rows = append(rows, row("id", int64(i)*7919))
	}
	b := writeFile(t, parquet.Group{"id": parquet.Int(64)}, rows, nil)
	f, err := datafile.Open(&failingReader{b: b, off: 4}, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tryReadRows(f, st(fld("id", schema.Long)), datafile.ReadOptions{})
	if !errors.Is(err, errDisk) || errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("Read: %v", err)
	}
	if _, err := datafile.Open(&failingReader{b: b, off: 0}, int64(len(b))); !errors.Is(err, errDisk) {
		t.Fatalf("Open: %v", err)
	}
}
