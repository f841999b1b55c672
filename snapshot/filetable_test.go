package snapshot

import (
	"fmt"
	"testing"

	"github.com/godelta/delta/actions"
)

var statsCases = []string{
	``,
	`{}`,
	`{"numRecords":1000,"minValues":{"id":5000,"value":5.5,"name":"a0000005","ts":"2026-01-01T00:00:00.000Z"},"maxValues":{"id":5999,"value":6.5,"name":"z0000005","ts":"2026-01-02T00:00:00.000Z"},"nullCount":{"id":0,"value":0,"name":2,"ts":0}}`,
	`{"numRecords":0012,"minValues":{"a":-1.5e-10,"b":"x\"y:\\","c":""},"tightBounds":true}`,
	`{"numRecords":99999999999999999999999,"minValues":{"a":18446744073709551615}}`,
	`{"numRecords":1,"minValues":{"s":"unterminated`,
	"not json at all: \x00 \x01",
	`{"a":"é€","b":[1,2,3],"c":{"d":"0"}}`,
	`:"`, `"`, `9`, `0`, `00`,
}

func TestStatsEncodingRoundTrip(t *testing.T) {
	ft := newFileTable()
	for i, s := range statsCases {
		ref := ft.putStats(s)
		got, _ := ft.stats(ref, nil)
		if got != s {
			t.Errorf("case %d: got %q, want %q", i, got, s)
		}
	}
}

func FuzzStatsEncoding(f *testing.F) {
	for _, s := range statsCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft := newFileTable()
		if got, _ := ft.stats(ft.putStats(s), nil); got != s {
			t.Fatalf("got %q, want %q", got, s)
		}
	})
}

func TestFileTable(t *testing.T) {
	ft := newFileTable()
	var want []actions.Add
	off := int32(3)
	for i := range 10_000 {
		a := actions.Add{
			Path:            fmt.Sprintf("p=%d/f%05d.parquet", i%7, i),
			PartitionValues: map[string]string{"p": fmt.Sprint(i % 7)},
			Size:            int64(i), ModificationTime: int64(2 * i), DataChange: i%2 == 0,
			Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"x":"v%d"}}`, i, i),
		}
		if i%1000 == 1 {
			a.DeletionVector = &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "abc", Offset: &off}
		}
		want = append(want, a)
		ft.add(&a)
	}
	ft.finish()
	for i := range want {
		var got actions.Add
		ft.build(i, &got, nil)
		if fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Fatalf("row %d: got %+v, want %+v", i, got, want[i])
		}
		n := 0
		ft.lookupAll(keyOf(want[i].Path, want[i].DeletionVector), func(row int) {
			n++
			if row != i {
				t.Fatalf("lookup of row %d found row %d", i, row)
			}
		})
		if n != 1 {
			t.Fatalf("lookup of row %d found %d rows", i, n)
		}
	}
	ft.lookupAll(fileKey{path: "p=1/f00001.parquet"}, func(int) { t.Fatal("found a file by its path alone, without its deletion vector") })
	ft.lookupAll(fileKey{path: "nope"}, func(int) { t.Fatal("found a missing file") })
}
