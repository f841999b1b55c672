package dv

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

// FuzzUnmarshal checks that no input panics, that every failure is
// ErrCorrupt, and that whatever decodes re-encodes to the same set.
func FuzzUnmarshal(f *testing.F) {
	// kernel-rs/table-with-dv-small: rows {0, 9}.
	small, _ := hex.DecodeString("d1d339640100000000000000000000003a300000010000000000010010000000000009")
	f.Add(small)
	for _, tc := range roundTripCases() {
		if len(tc.rows) > 5000 {
			continue
		}
		data, err := New(tc.rows...).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	runs, _ := New(span(0, 70000, 1)...).MarshalBinary()
	f.Add(runs)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Unmarshal(data)
		if err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		var n uint64
		prev, first := uint64(0), true
		for i := range b.All() {
			if !first && i <= prev {
				t.Fatalf("All not ascending: %d after %d", i, prev)
			}
			if !b.Contains(i) {
				t.Fatalf("Contains(%d) = false for a yielded index", i)
			}
			prev, first = i, false
			n++
		}
		if n != b.Cardinality() {
			t.Fatalf("All yields %d indexes, Cardinality %d", n, b.Cardinality())
		}
		out, err := b.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unmarshal(out)
		if err != nil {
			t.Fatalf("re-encoded bitmap does not decode: %v", err)
		}
		if !back.Equal(b) {
			t.Fatal("round trip changed the set")
		}
	})
}

// FuzzZ85Decode checks that no input panics, that every failure is
// ErrCorrupt, and that decoding is stable under re-encoding.
func FuzzZ85Decode(f *testing.F) {
	for _, s := range []string{"", "HelloWorld", "vBn[lx{q8@P<9BNH/isA", "^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093", "%nSc0", "1234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := Z85Decode(s)
		if err != nil {
			if !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if n := len(s) / 5 * 4; len(b) > n || len(b) <= n-4 && len(s) > 0 {
			t.Fatalf("decoded %d bytes from %d characters", len(b), len(s))
		}
		again, err := Z85Decode(Z85Encode(b))
		if err != nil || !bytes.Equal(again[:len(b)], b) {
			t.Fatalf("decode(encode(%x)) = %x, %v", b, again, err)
		}
	})
}
