package dv

import "testing"

// A million deleted rows: every other row of 2M (bitmap containers) and a
// dense range (run containers).
func benchBitmaps() map[string]*Bitmap {
	return map[string]*Bitmap{
		"sparse": New(span(0, 2_000_000, 2)...),
		"dense":  New(span(0, 1_000_000, 1)...),
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for name, bm := range benchBitmaps() {
		data, err := bm.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Unmarshal(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarshal(b *testing.B) {
	for name, bm := range benchBitmaps() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bm.MarshalBinary(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAddAscending(b *testing.B) {
	for b.Loop() {
		bm := &Bitmap{}
		for i := range uint64(1_000_000) {
			bm.Add(i * 2)
		}
	}
}

func BenchmarkContains(b *testing.B) {
	bm := benchBitmaps()["sparse"]
	for b.Loop() {
		for i := range uint64(1_000_000) {
			bm.Contains(i)
		}
	}
}
