package dv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

func ptr[T any](v T) *T { return &v }

func TestZ85(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		text string
	}{
		{"empty", nil, ""},
		{"rfc 32 example", []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}, "HelloWorld"},
		{"zero", []byte{0, 0, 0, 0}, "00000"},
		{"max", []byte{0xFF, 0xFF, 0xFF, 0xFF}, "%nSc0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Z85Encode(tc.in); got != tc.text {
				t.Fatalf("Z85Encode = %q, want %q", got, tc.text)
			}
			got, err := Z85Decode(tc.text)
			if err != nil || !bytes.Equal(got, tc.in) {
				t.Fatalf("Z85Decode = %x, %v", got, err)
			}
		})
	}
	// Encode pads to whole groups with zero bytes.
	if got := Z85Encode([]byte{0x86, 0x4F}); got != Z85Encode([]byte{0x86, 0x4F, 0, 0}) {
		t.Fatalf("padding: %q", got)
	}
	// A last group led by '#' has that many padding bytes before its data.
	for text, want := range map[string][]byte{
		"##093":      {0x03, 0x00},
		"0000##093":  nil, // not a multiple of 5
		"00000#0093": {0, 0, 0, 0, 0, 3, 0},
		"00000###03": {0, 0, 0, 0, 3},
	} {
		got, err := Z85Decode(text)
		if want == nil {
			if err == nil {
				t.Errorf("Z85Decode(%q) succeeded", text)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Z85Decode(%q) = %x, %v; want %x", text, got, err, want)
		}
	}
	// Other groups of 2^32 and above, and all-padding groups, are corrupt.
	for _, bad := range []string{"1234", "Hello World", "Hello\"orld", "Hell~", "%nSc1", "#####", "##09300000", "%nSc100000"} {
		if _, err := Z85Decode(bad); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("Z85Decode(%q) err = %v, want ErrCorrupt", bad, err)
		}
	}
}

func TestRelativePath(t *testing.T) {
	tests := []struct {
		path    string
		want    string
		wantErr error
	}{
		// The protocol's JSON example 1.
		{"ab^-aqEH.-t@S}K{vb[*k^", "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", nil},
		{"^-aqEH.-t@S}K{vb[*k^", "deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", nil},
		// kernel-rs/table-with-dv-small
		{"vBn[lx{q8@P<9BNH/isA", "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin", nil},
		{"short", "", deltaerr.ErrCorrupt},
		{"ab^-aqEH.-t@S}K{vb[* ", "", deltaerr.ErrCorrupt},
		{"..^-aqEH.-t@S}K{vb[*k^", "", logstore.ErrInvalidKey},
		{"a/^-aqEH.-t@S}K{vb[*k^", "", deltaerr.ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			got, err := RelativePath(&actions.DeletionVector{StorageType: "u", PathOrInlineDv: tc.path})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err, deltaerr.ErrCorrupt) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("RelativePath = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := RelativePath(&actions.DeletionVector{StorageType: "i"}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("inline: err = %v", err)
	}
}

func TestLoadInlineSpecExample(t *testing.T) {
	// The protocol's JSON example 3 is in an outdated layout (Spark's
	// "native" RoaringBitmapArray, big-endian magic 1681511376), which no
	// current reader accepts; it must be refused, not misread.
	spec := &actions.DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 6}
	if _, err := Load(context.Background(), memory.New(), spec, nil); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Fatalf("spec example: err = %v, want ErrCorrupt", err)
	}
	// The same rows in the portable layout (kernel-rs's version of it).
	d := &actions.DeletionVector{StorageType: "i", PathOrInlineDv: "^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 44, Cardinality: 6}
	b, err := Load(context.Background(), memory.New(), d, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(b.All()); !slices.Equal(got, []uint64{3, 4, 7, 11, 18, 29}) {
		t.Fatalf("rows = %v", got)
	}
	// And our encoder writes exactly those bytes.
	if in, err := NewInline(b); err != nil || in.PathOrInlineDv != d.PathOrInlineDv || in.SizeInBytes != 44 {
		t.Fatalf("NewInline = %+v, %v", in, err)
	}
}

func TestEncodeFileLoad(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	id := [16]byte{0xd2, 0xc6, 0x39, 0xaa, 0x88, 0x16, 0x43, 0x1a, 0xaa, 0xf6, 0xd3, 0xfe, 0x25, 0x12, 0xff, 0x61}
	bitmaps := []*Bitmap{New(0, 9), New(span(0, 100000, 1)...), New(1<<32, 3), New(7)}
	f, err := EncodeFile("ab", id, bitmaps...)
	if err != nil {
		t.Fatal(err)
	}
	if f.Key != "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin" {
		t.Fatalf("Key = %q", f.Key)
	}
	if f.Data[0] != 1 || len(f.Descriptors) != len(bitmaps) {
		t.Fatalf("file header %d, %d descriptors", f.Data[0], len(f.Descriptors))
	}
	wantOff := int32(1)
	for i, d := range f.Descriptors {
		if d.StorageType != "u" || d.PathOrInlineDv != "ab^-aqEH.-t@S}K{vb[*k^" || *d.Offset != wantOff {
			t.Fatalf("descriptor %d = %+v (offset %d, want %d)", i, d, *d.Offset, wantOff)
		}
		wantOff += d.SizeInBytes + 8
	}
	if int(wantOff) != len(f.Data) {
		t.Fatalf("offsets end at %d, file is %d bytes", wantOff, len(f.Data))
	}
	if err := store.Put(ctx, f.Key, f.Data); err != nil {
		t.Fatal(err)
	}
	for i, d := range f.Descriptors {
		b, err := Load(ctx, store, d, nil)
		if err != nil {
			t.Fatalf("Load %d: %v", i, err)
		}
		if !b.Equal(bitmaps[i]) || uint64(d.Cardinality) != b.Cardinality() {
			t.Fatalf("vector %d changed", i)
		}
		if m, _ := b.Max(); *d.MaxRowIndex != int64(m) {
			t.Fatalf("maxRowIndex %d, max %d", *d.MaxRowIndex, m)
		}
	}

	// The same vectors inline, and at an absolute path.
	for i, b := range bitmaps {
		d, err := NewInline(b)
		if err != nil {
			t.Fatal(err)
		}
		if d.Offset != nil || d.StorageType != "i" {
			t.Fatalf("inline descriptor %+v", d)
		}
		got, err := Load(ctx, store, d, nil)
		if err != nil || !got.Equal(b) {
			t.Fatalf("inline %d: %v", i, err)
		}
	}
	abs := *f.Descriptors[1]
	abs.StorageType, abs.PathOrInlineDv = "p", "s3://bucket/table/"+f.Key
	resolve := func(uri string) (string, error) {
		k, ok := strings.CutPrefix(uri, "s3://bucket/table/")
		if !ok {
			return "", fmt.Errorf("outside the table: %w", deltaerr.ErrPathEscapesRoot)
		}
		return k, nil
	}
	if got, err := Load(ctx, store, &abs, resolve); err != nil || !got.Equal(bitmaps[1]) {
		t.Fatalf("absolute: %v", err)
	}
	abs.PathOrInlineDv = "s3://other/x.bin"
	if _, err := Load(ctx, store, &abs, resolve); !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
		t.Fatalf("absolute outside: %v", err)
	}
	if _, err := Load(ctx, store, &abs, nil); !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
		t.Fatalf("absolute, no resolver: %v", err)
	}
}

func TestEncodeFileErrors(t *testing.T) {
	if _, err := EncodeFile("", [16]byte{}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("no bitmaps: %v", err)
	}
	if _, err := EncodeFile("..", [16]byte{}, New(1)); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("bad prefix: %v", err)
	}
	if _, err := EncodeFile("", [16]byte{}, New(1<<63)); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("top bit: %v", err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	ctx := context.Background()
	f, err := EncodeFile("", [16]byte{1, 2, 3}, New(0, 9), New(span(0, 5000, 1)...))
	if err != nil {
		t.Fatal(err)
	}
	good := *f.Descriptors[1]
	// mutate returns a copy of the file with fn applied.
	mutate := func(fn func([]byte) []byte) []byte { return fn(slices.Clone(f.Data)) }
	second := int(*good.Offset)

	tests := []struct {
		name string
		data []byte // nil: the file is absent
		desc func(d *actions.DeletionVector)
		want []error
	}{
		{"missing file", nil, nil, []error{deltaerr.ErrFileNotFound, logstore.ErrNotFound}},
		{"crc", mutate(func(b []byte) []byte { b[second+6] ^= 1; return b }), nil, []error{deltaerr.ErrCorrupt}},
		{"stored crc", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), nil, []error{deltaerr.ErrCorrupt}},
		{"version", mutate(func(b []byte) []byte { b[0] = 2; return b }), nil, []error{deltaerr.ErrCorrupt}},
		{"truncated", f.Data[:len(f.Data)-1], nil, []error{deltaerr.ErrCorrupt}},
		{"dataSize", mutate(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[second:], binary.BigEndian.Uint32(b[second:])-1)
			return b
		}), nil, []error{deltaerr.ErrCorrupt}},
		{"sizeInBytes", f.Data, func(d *actions.DeletionVector) { d.SizeInBytes-- }, []error{deltaerr.ErrCorrupt}},
		{"negative size", f.Data, func(d *actions.DeletionVector) { d.SizeInBytes = -5 }, []error{deltaerr.ErrCorrupt}},
		{"cardinality", f.Data, func(d *actions.DeletionVector) { d.Cardinality++ }, []error{deltaerr.ErrCorrupt}},
		{"maxRowIndex", f.Data, func(d *actions.DeletionVector) { d.MaxRowIndex = ptr(int64(100)) }, []error{deltaerr.ErrCorrupt}},
		{"offset absent", f.Data, func(d *actions.DeletionVector) { d.Offset = nil }, []error{deltaerr.ErrCorrupt}},
		{"offset wrong", f.Data, func(d *actions.DeletionVector) { d.Offset = ptr(int32(2)) }, []error{deltaerr.ErrCorrupt}},
		{"offset past end", f.Data, func(d *actions.DeletionVector) { d.Offset = ptr(int32(1 << 30)) }, []error{deltaerr.ErrCorrupt}},
		{"bad uuid", f.Data, func(d *actions.DeletionVector) { d.PathOrInlineDv = "~~~~~~~~~~~~~~~~~~~~" }, []error{deltaerr.ErrCorrupt}},
		{"unknown type", f.Data, func(d *actions.DeletionVector) { d.StorageType = "r" }, []error{deltaerr.ErrUnsupportedFeature}},
		{"inline not z85", f.Data, func(d *actions.DeletionVector) { d.StorageType, d.PathOrInlineDv = "i", "abc" }, []error{deltaerr.ErrCorrupt}},
		{"inline size", f.Data, func(d *actions.DeletionVector) {
			in, _ := NewInline(New(span(0, 5000, 1)...))
			*d = *in
			d.SizeInBytes -= 4
		}, []error{deltaerr.ErrCorrupt}},
		{"inline bytes", f.Data, func(d *actions.DeletionVector) {
			d.StorageType, d.PathOrInlineDv, d.Offset = "i", Z85Encode([]byte("not a bitmap")), nil
			d.SizeInBytes = 12
		}, []error{deltaerr.ErrCorrupt}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			if tc.data != nil {
				if err := store.Put(ctx, f.Key, tc.data); err != nil {
					t.Fatal(err)
				}
			}
			d := good
			if tc.desc != nil {
				tc.desc(&d)
			}
			b, err := Load(ctx, store, &d, nil)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Fatalf("Load = %v, %v; want %v", b, err, w)
				}
			}
		})
	}
}

func TestLoadFarOffset(t *testing.T) {
	// A vector beyond the first 4 KiB is read on its own.
	var bitmaps []*Bitmap
	for i := range 300 {
		bitmaps = append(bitmaps, New(uint64(i), uint64(i)+1000))
	}
	f, err := EncodeFile("x", [16]byte{9}, bitmaps...)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Descriptors[len(f.Descriptors)-1]
	if *last.Offset <= headReadLimit {
		t.Fatalf("offset %d is not far", *last.Offset)
	}
	store := memory.New()
	if err := store.Put(context.Background(), f.Key, f.Data); err != nil {
		t.Fatal(err)
	}
	b, err := Load(context.Background(), store, last, nil)
	if err != nil || !b.Equal(bitmaps[len(bitmaps)-1]) {
		t.Fatalf("Load: %v", err)
	}
}

func TestRelativePathOrInline(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"deletion_vector_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", true},
		{"ab/deletion_vector_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", true},
		{"a/b/deletion_vector_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", false},
		{"/deletion_vector_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", false},
		{"deletion_vector_0B2D7C2A-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", false}, // not the canonical form
		{"deletion_vector_0b2d7c2a3c1e4f5e9a7b1c2d3e4f5a6b.bin", false},
		{"dv_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.bin", false},
		{"deletion_vector_0b2d7c2a-3c1e-4f5e-9a7b-1c2d3e4f5a6b.dv", false},
	} {
		p, ok := RelativePathOrInline(tc.key)
		if ok != tc.ok {
			t.Errorf("%q: ok = %v, want %v", tc.key, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		back, err := RelativePath(&actions.DeletionVector{StorageType: StorageRelative, PathOrInlineDv: p})
		if err != nil || back != tc.key {
			t.Errorf("%q -> %q -> %q, %v", tc.key, p, back, err)
		}
	}
}
