package dv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

// span returns lo, lo+step, ... below hi.
func span(lo, hi, step uint64) []uint64 {
	var out []uint64
	for v := lo; v < hi; v += step {
		out = append(out, v)
	}
	return out
}

func roundTripCases() []struct {
	name string
	rows []uint64
} {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]uint64, 20000)
	for i := range random {
		random[i] = rng.Uint64N(1 << 20)
	}
	return []struct {
		name string
		rows []uint64
	}{
		{"empty", nil},
		{"one", []uint64{0}},
		{"small", []uint64{9, 0, 3, 3, 65535}},
		{"container edges", []uint64{65535, 65536, 131071, 131072}},
		{"32-bit boundary", []uint64{1<<32 - 1, 1 << 32, 1<<32 + 1, 5<<32 + 7, 3}},
		{"far buckets", []uint64{0, 1 << 40, 1<<62 + 12345, 1<<63 - 1}},
		{"array full", span(0, 4096*2, 2)},      // exactly 4096 values: array
		{"array to bitmap", span(0, 4097*3, 3)}, // 4097 values: bitmap
		{"dense run", span(0, 200000, 1)},       // run containers
		{"runs with gaps", append(span(10, 5000, 1), span(7000, 60000, 1)...)},
		{"bitmap sparse-ish", span(1<<32, 1<<32+1<<20, 7)}, // bitmap containers in bucket 1
		{"random", random},
		{"alternating runs", func() []uint64 {
			var out []uint64
			for s := uint64(0); s < 65536; s += 10 {
				out = append(out, s, s+1, s+2, s+3)
			}
			return out
		}()},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range roundTripCases() {
		t.Run(tc.name, func(t *testing.T) {
			want := slices.Clone(tc.rows)
			slices.Sort(want)
			want = slices.Compact(want)

			b := New(tc.rows...)
			if got := b.Cardinality(); got != uint64(len(want)) {
				t.Fatalf("Cardinality = %d, want %d", got, len(want))
			}
			if got := slices.Collect(b.All()); !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("All differs from the sorted input (len %d vs %d)", len(got), len(want))
			}
			for _, r := range want {
				if !b.Contains(r) {
					t.Fatalf("Contains(%d) = false", r)
				}
			}
			for _, r := range []uint64{1, 2, 4, 65534, 1 << 32, 1<<32 + 2, 1 << 50} {
				_, in := slices.BinarySearch(want, r)
				if b.Contains(r) != in {
					t.Fatalf("Contains(%d) = %v, want %v", r, !in, in)
				}
			}
			if m, ok := b.Max(); ok != (len(want) > 0) || ok && m != want[len(want)-1] {
				t.Fatalf("Max = %d, %v", m, ok)
			}

			data, err := b.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if got := binary.LittleEndian.Uint32(data); got != MagicPortable {
				t.Fatalf("magic = %d", got)
			}
			back, err := Unmarshal(data)
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !back.Equal(b) {
				t.Fatalf("round trip changed the set")
			}
			for _, r := range want {
				if !back.Contains(r) {
					t.Fatalf("after round trip Contains(%d) = false", r)
				}
			}
			// Serialization is deterministic: the decoded set (whatever
			// container kinds it now has) encodes to the same bytes.
			again, err := back.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Fatalf("re-encoding differs: %d vs %d bytes", len(again), len(data))
			}
			// Adding to decoded containers (run ones included) still works.
			back.Add(65533)
			back.Add(1 << 33)
			if !back.Contains(65533) || !back.Contains(1<<33) {
				t.Fatal("Add after Unmarshal lost a value")
			}
		})
	}
}

func TestContainerKindChoice(t *testing.T) {
	tests := []struct {
		name string
		rows []uint64
		size int // total serialized size
	}{
		// magic 4 + count 8 + key 4 + cookie/count 8 + header 4 + offsets 4 + 2 per value
		{"array", []uint64{0, 9}, 4 + 8 + 4 + 8 + 4 + 4 + 4},
		// magic 4 + count 8 + key 4 + cookie 4 + flags 1 + header 4 + run (2 + 4)
		{"run", span(0, 65536, 1), 4 + 8 + 4 + 4 + 1 + 4 + 6},
		// a bitmap beats both an array (too big) and 4000 runs
		{"bitmap", span(0, 65536, 2), 4 + 8 + 4 + 8 + 4 + 4 + 8192},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := New(tc.rows...).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != tc.size {
				t.Fatalf("size = %d, want %d", len(data), tc.size)
			}
		})
	}
}

func TestMarshalRejectsTopBit(t *testing.T) {
	_, err := New(1 << 63).MarshalBinary()
	if !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Fatalf("err = %v, want ErrInvalidArgument", err)
	}
}

func TestOr(t *testing.T) {
	a, b := New(1, 5, 1<<32), New(5, 6, 70000)
	a.Or(b)
	if got := slices.Collect(a.All()); !slices.Equal(got, []uint64{1, 5, 6, 70000, 1 << 32}) {
		t.Fatalf("Or = %v", got)
	}
}

// le builds a byte slice from little-endian fields, for hand-made
// corrupt inputs.
func le(fields ...any) []byte {
	var out []byte
	for _, f := range fields {
		switch v := f.(type) {
		case uint16:
			out = binary.LittleEndian.AppendUint16(out, v)
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, v)
		case uint64:
			out = binary.LittleEndian.AppendUint64(out, v)
		case []byte:
			out = append(out, v...)
		}
	}
	return out
}

func TestUnmarshalCorrupt(t *testing.T) {
	magic := MagicPortable
	bitmapOf := func(pop int) []byte {
		bm := make([]byte, bitmapBytes)
		for i := range pop {
			bm[i/8] |= 1 << (i % 8)
		}
		return bm
	}
	valid := le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(1), uint16(0), uint16(1), uint32(16), uint16(0), uint16(9))
	if b, err := Unmarshal(valid); err != nil || b.Cardinality() != 2 {
		t.Fatalf("valid input: %v", err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"short magic", []byte{0xd1, 0xd3}},
		{"bad magic", le(uint32(1), uint64(0))},
		{"native magic", le(magicNative, uint32(0))},
		{"no bucket count", le(magic)},
		{"huge bucket count", le(magic, uint64(1)<<60, uint32(0))},
		{"truncated", valid[:len(valid)-1]},
		{"trailing", append(slices.Clone(valid), 0)},
		{"key top bit", le(magic, uint64(1), uint32(1<<31), uint32(cookieNoRun), uint32(0))},
		{"keys not increasing", le(magic, uint64(2),
			uint32(3), uint32(cookieNoRun), uint32(0),
			uint32(3), uint32(cookieNoRun), uint32(0))},
		{"bad cookie", le(magic, uint64(1), uint32(0), uint32(99), uint32(0))},
		{"too many containers", le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(65537))},
		{"container keys not increasing", le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(2),
			uint16(4), uint16(0), uint16(4), uint16(0), uint32(0), uint32(0), uint16(1), uint16(2))},
		{"array not increasing", le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(1),
			uint16(0), uint16(1), uint32(16), uint16(9), uint16(9))},
		{"bitmap population", le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(1),
			uint16(0), uint16(4999), uint32(16), bitmapOf(5001))},
		{"bitmap truncated", le(magic, uint64(1), uint32(0), uint32(cookieNoRun), uint32(1),
			uint16(0), uint16(4999), uint32(16), bitmapOf(5000)[:100])},
		{"zero runs", le(magic, uint64(1), uint32(0), uint32(cookieRun), []byte{1},
			uint16(0), uint16(0), uint16(0))},
		{"run past end", le(magic, uint64(1), uint32(0), uint32(cookieRun), []byte{1},
			uint16(0), uint16(0), uint16(1), uint16(65535), uint16(1))},
		{"runs overlap", le(magic, uint64(1), uint32(0), uint32(cookieRun), []byte{1},
			uint16(0), uint16(0), uint16(2), uint16(0), uint16(5), uint16(5), uint16(1))},
		{"run truncated", le(magic, uint64(1), uint32(0), uint32(cookieRun), []byte{1},
			uint16(0), uint16(0), uint16(3), uint16(0), uint16(5))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Unmarshal(tc.data)
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("Unmarshal = %v, %v; want ErrCorrupt", b, err)
			}
		})
	}
}

func TestUnmarshalAcceptsEmptyBuckets(t *testing.T) {
	// Spark's RoaringBitmapArray writes a bucket for every high key up to
	// the largest, empty ones included; readers must take them.
	data := le(MagicPortable, uint64(2),
		uint32(0), uint32(cookieNoRun), uint32(0),
		uint32(1), uint32(cookieNoRun), uint32(1), uint16(0), uint16(0), uint32(16), uint16(7))
	b, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(b.All()); !slices.Equal(got, []uint64{1<<32 + 7}) {
		t.Fatalf("rows = %v", got)
	}
}

func TestUnmarshalRunWithOffsets(t *testing.T) {
	// Four containers with a run cookie carry the offsets section too.
	var runs []uint64
	for k := range uint64(4) {
		runs = append(runs, span(k<<16, k<<16+1000, 1)...)
	}
	data, err := New(runs...).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// magic 4 + count 8 + key 4 + cookie 4 + flags 1 + header 16 + offsets 16 + 4 runs of 6
	if want := 4 + 8 + 4 + 4 + 1 + 16 + 16 + 24; len(data) != want {
		t.Fatalf("size = %d, want %d", len(data), want)
	}
	b, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if b.Cardinality() != 4000 || !b.Contains(3<<16+999) || b.Contains(3<<16+1000) {
		t.Fatalf("decoded set wrong: card %d", b.Cardinality())
	}
}
