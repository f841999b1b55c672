package snapshot

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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
	// One table for all cases, each after every other, so that a shape is
	// compared with each other shape (putStats starts from the last one).
	ft := newFileTable()
	for i, a := range statsCases {
		for j, b := range statsCases {
			ra, rb := ft.putStats(a), ft.putStats(b)
			if got, _ := ft.stats(ra, nil); got != a {
				t.Errorf("case %d after %d: got %q, want %q", i, j, got, a)
			}
			if got, _ := ft.stats(rb, nil); got != b {
				t.Errorf("case %d after %d: got %q, want %q", j, i, got, b)
			}
		}
	}
	// A shape that is a prefix of the last one, and one that extends it.
	for _, pair := range [][2]string{
		{`{"numRecords":1,"minValues":{"a":1}}`, `{"numRecords":1,"minValues":{"a":1}`},
		{`{"numRecords":1`, `{"numRecords":1,"x":2}`},
	} {
		ra, rb := ft.putStats(pair[0]), ft.putStats(pair[1])
		if ra.shape&shapeMask == rb.shape&shapeMask {
			t.Errorf("%q and %q share a shape", pair[0], pair[1])
		}
		for k, r := range []statsRef{ra, rb} {
			if got, _ := ft.stats(r, nil); got != pair[k] {
				t.Errorf("got %q, want %q", got, pair[k])
			}
		}
	}
	// Stats of one shape whose values change class: each is split along
	// the first one's shape where it fits, and reads back exactly.
	base := `{"numRecords":12,"minValues":{"id":5,"s":"ab","n":007},"maxValues":{"id":99999999999999999999}}`
	for _, v := range []string{
		`{"numRecords":0,"minValues":{"id":5,"s":"","n":007},"maxValues":{"id":99999999999999999999}}`,
		`{"numRecords":012,"minValues":{"id":5,"s":"a\"b\\","n":7},"maxValues":{"id":1}}`,
		`{"numRecords":1,"minValues":{"id":5,"s":"x\u0000\u0001","n":007},"maxValues":{"id":18446744073709551615}}`,
		`{"numRecords":1,"minValues":{"id":5,"s":"x","n":},"maxValues":{"id":1}}`,
		`{"numRecords":1,"minValues":{"id":5,"s":"unterminated`,
		"{\"numRecords\":1,\"minValues\":{\"id\":5,\"s\":\"\x00\x01\",\"n\":1},\"maxValues\":{\"id\":1}}",
	} {
		for _, pair := range [][2]string{{base, v}, {v, base}} {
			ra, rb := ft.putStats(pair[0]), ft.putStats(pair[1])
			for k, r := range []statsRef{ra, rb} {
				if got, _ := ft.stats(r, nil); got != pair[k] {
					t.Errorf("got %q, want %q", got, pair[k])
				}
			}
		}
	}
	if len(ft.shapes) > len(statsCases)+20 {
		t.Errorf("%d shapes interned: shapes are not shared", len(ft.shapes))
	}
}

// FuzzStatsEncoding stores two stats one after the other in one table (the
// second is split while compared with the first's shape) and reads both
// back.
func FuzzStatsEncoding(f *testing.F) {
	for _, a := range statsCases {
		for _, b := range statsCases[:4] {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ft := newFileTable()
		ra, rb, ra2 := ft.putStats(a), ft.putStats(b), ft.putStats(a)
		for _, c := range []struct {
			ref  statsRef
			want string
		}{{ra, a}, {rb, b}, {ra2, a}} {
			if got, _ := ft.stats(c.ref, nil); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
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
		if i%3 == 0 { // row tracking
			base, ver := int64(i*10), int64(i%5)
			a.BaseRowID = &base
			if i%2 == 0 {
				a.DefaultRowCommitVersion = &ver
			}
		}
		if i%5 == 0 {
			a.ClusteringProvider = []string{"liquid", "other"}[i%2]
		}
		if i%11 == 0 {
			a.Tags = map[string]string{"k": "v"}
		}
		switch {
		case i%13 == 0: // a directory whose files differ in their values
			a.PartitionValues = map[string]string{"p": "other"}
		case i%17 == 0:
			a.PartitionValues = nil
		case i%2503 == 0: // a record larger than an arena block, alone in its block
			a.Stats = fmt.Sprintf(`{"numRecords":%d,"minValues":{"x":"%0*d"}}`, i, blockSize+10, i)
		}
		want = append(want, a)
		ft.add(&a)
	}
	ft.finish()
	for i := range want {
		var got actions.Add
		ft.build(i, &got, nil)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want[i])
		if string(g) != string(w) {
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

// TestFileTableNames stores names of many forms, against templates and
// not, and reads each path back, with its key.
func TestFileTableNames(t *testing.T) {
	ft := newFileTable()
	rng := rand.New(rand.NewPCG(1, 26))
	job := func(j int) string { return fmt.Sprintf("%08x-5b6a-4bd4-8d6f-0a0d7b5c3b%02d", j*7919, j%100) }
	var want []string
	for i := range 20_000 {
		var name string
		switch rng.IntN(8) {
		case 0: // Spark, jobs interleaved
			name = fmt.Sprintf("part-%05d-%s-c000.snappy.parquet", rng.IntN(300), job(rng.IntN(50)))
		case 1: // Spark, one job in a row
			name = fmt.Sprintf("part-%05d-%s-c000.snappy.parquet", i, job(i/1000))
		case 2: // short
			name = fmt.Sprintf("f%d.parquet", i)
		case 3: // unique throughout
			name = fmt.Sprintf("%016x%016x.parquet", rng.Uint64(), rng.Uint64())
		case 4: // a name that is a prefix of another's
			name = "part-00001-" + job(3)
			if rng.IntN(2) == 0 {
				name += "-c000.snappy.parquet"
			}
		case 5: // digits only, and percent-encoded
			name = fmt.Sprintf("%040d", rng.Uint64())
			if rng.IntN(2) == 0 {
				name = "a%20b-" + name
			}
		case 6: // multi-byte text
			name = fmt.Sprintf("é€-%d-ü-long-enough-name.parquet", rng.IntN(1000))
		default: // empty name, a directory alone
			name = ""
		}
		dir := []string{"", "p=1/", "a/b/c=%3A/", "s3://bucket/t/x=2/"}[rng.IntN(4)]
		a := actions.Add{Path: dir + name, Size: int64(i), ModificationTime: -int64(i), Stats: `{"numRecords":1}`}
		want = append(want, a.Path)
		ft.add(&a)
	}
	ft.finish()
	for i, p := range want {
		var got actions.Add
		ft.build(i, &got, nil)
		if got.Path != p || got.Size != int64(i) || got.ModificationTime != -int64(i) || got.Stats != `{"numRecords":1}` {
			t.Fatalf("row %d: got %q %d %d %q, want %q", i, got.Path, got.Size, got.ModificationTime, got.Stats, p)
		}
		found := false
		ft.lookupAll(keyOf(p, nil), func(row int) { found = found || row == i })
		if !found {
			t.Fatalf("row %d (%q) not found by its key", i, p)
		}
	}
	if len(ft.names.tmpls) > 15_000 {
		t.Errorf("%d templates for %d names: names are not shared", len(ft.names.tmpls), len(want))
	}
}

// TestStatsDictionary checks that a constant bound is interned and a
// unique one stops being looked up, and that both read back.
func TestStatsDictionary(t *testing.T) {
	ft := newFileTable()
	var refs []statsRef
	var want []string
	for i := range 20_000 {
		s := fmt.Sprintf(`{"numRecords":1,"minValues":{"c":"constant-value","u":"unique-%07d"}}`, i)
		refs = append(refs, ft.putStats(s))
		want = append(want, s)
	}
	if n := len(ft.dict.strs); n > 2*dictTrial {
		t.Errorf("%d strings in the dictionary: unique values fill it", n)
	}
	for i, r := range refs {
		if got, _ := ft.stats(r, nil); got != want[i] {
			t.Fatalf("%d: got %q, want %q", i, got, want[i])
		}
	}
	last := refs[len(refs)-1]
	_, _, _, rec := ft.record(last.shape, last.rec)
	if len(rec) > 1+1+1+1+1+len("unique-0000000")+1 {
		t.Errorf("record of %d bytes: the constant value is not interned", len(rec))
	}
}

// TestMatchHelpers compares the word-at-a-time helpers of the table build
// with the plain byte loops they replace, on texts of every length around
// a word's, that end anywhere.
func TestMatchHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	alphabet := `ab"\/0123456789:,{}`
	text := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20_000 {
		s := text(rng.IntN(40))
		i := rng.IntN(len(s) + 1)
		// A literal that is there, one that differs in one byte, and one
		// that runs past the end.
		n := rng.IntN(len(s) - i + 1)
		lits := []string{s[i : i+n], text(rng.IntN(30)), s[i:] + "x"}
		if n > 0 {
			b := []byte(s[i : i+n])
			b[rng.IntN(n)] ^= 1
			lits = append(lits, string(b))
		}
		for _, lit := range lits {
			seg := newShapeSeg(lit, numHole, false)
			has := len(s)-i >= len(lit) && s[i:i+len(lit)] == lit
			if got := hasLit(s, i, &seg); got != has {
				t.Fatalf("hasLit(%q, %d, %q) = %v, want %v", s, i, lit, got, has)
			}
			// matchStats has hasLit inline: the literal, then a number.
			_, ok := matchStats(splitShape(lit+"\x01", nil), s[i:], nil, &strDict{})
			num := false
			if has {
				j, _, canon := scanNumber(s, i+len(lit))
				num = canon && j == len(s)
			}
			if ok != (has && num) {
				t.Fatalf("matchStats of %q and a number on %q: %v (has %v)", lit, s[i:], ok, has)
			}
		}
		k := strings.LastIndexByte(s, '/') + 1
		if dir, name := splitPath(s); dir != s[:k] || name != s[k:] {
			t.Fatalf("splitPath(%q) = %q, %q", s, dir, name)
		}
		if got, want := stringEnd(s, i), refStringEnd(s, i); got != want && !(got >= len(s) && want >= len(s)) {
			t.Fatalf("stringEnd(%q, %d) = %d, want %d", s, i, got, want)
		}
		u := text(rng.IntN(40))
		if rng.IntN(2) == 0 {
			u = s[:rng.IntN(len(s)+1)] + u // a shared prefix
		}
		if rng.IntN(2) == 0 {
			u += s[rng.IntN(len(s)+1):] // and suffix
		}
		p, q := shared(s, u)
		wp := 0
		for wp < len(s) && wp < len(u) && s[wp] == u[wp] {
			wp++
		}
		wq := 0
		for wq < min(len(s), len(u))-wp && s[len(s)-1-wq] == u[len(u)-1-wq] {
			wq++
		}
		if p != wp || q != wq {
			t.Fatalf("shared(%q, %q) = %d, %d, want %d, %d", s, u, p, q, wp, wq)
		}
	}
}

// refStringEnd is stringEnd as a plain loop.
func refStringEnd(s string, i int) int {
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	return i
}

// TestStatsEncodingRandom stores stats of a few shapes, with values of
// every kind and length (numbers with and without leading zeros, strings
// with escapes, keys of every length) and some bytes changed, one after
// the other in one table, so that each is matched against the shape of the
// one before, and reads all of them back.
func TestStatsEncodingRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2))
	num := func() string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprint(rng.IntN(10))
		case 1:
			return fmt.Sprint(rng.Uint64() >> rng.IntN(64))
		case 2:
			return fmt.Sprintf("%0*d", 1+rng.IntN(25), rng.IntN(1000))
		}
		return fmt.Sprintf("%d.%d", rng.IntN(1e6), rng.IntN(100))
	}
	str := func() string {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = `ab0"\:,{}é`[rng.IntN(11)]
		}
		return strings.ReplaceAll(strings.ReplaceAll(string(b), `\`, `\\`), `"`, `\"`)
	}
	keys := []string{"a", "id", "value", "name", "a_rather_long_column_name", "ts", "k2345678", "k23456789012345", "k2345678901234567890123"}
	ft := newFileTable()
	var refs []statsRef
	var want []string
	for i := range 30_000 {
		shape := i / 3000 % 4
		var b strings.Builder
		b.WriteString(`{"numRecords":` + num() + `,"minValues":{`)
		for k, key := range keys[:3+shape*2] {
			if k > 0 {
				b.WriteByte(',')
			}
			if (k+shape)%2 == 0 {
				b.WriteString(`"` + key + `":` + num())
			} else if rng.IntN(4) == 0 {
				b.WriteString(`"` + key + `":"constant"`)
			} else {
				b.WriteString(`"` + key + `":"` + str() + `"`)
			}
		}
		b.WriteString(`},"tightBounds":true}`)
		s := b.String()
		if rng.IntN(50) == 0 { // a byte changed: another shape, or none
			p := []byte(s)
			p[rng.IntN(len(p))] = `"0:{\x00`[rng.IntN(5)]
			s = string(p)
		}
		if rng.IntN(100) == 0 {
			s = s[:rng.IntN(len(s))]
		}
		refs = append(refs, ft.putStats(s))
		want = append(want, s)
	}
	for i, r := range refs {
		if got, _ := ft.stats(r, nil); got != want[i] {
			t.Fatalf("%d: got %q, want %q", i, got, want[i])
		}
	}
}

// TestFileTableBlocks fills many arena blocks, with records written in
// place and, near a block's end, through scratch space, and an oversized
// one between, and checks that every row reads back and that the blocks
// are laid out as store lays them: a record goes to a new block only when
// the last one has no room for it.
func TestFileTableBlocks(t *testing.T) {
	ft := newFileTable()
	rng := rand.New(rand.NewPCG(26, 3))
	var want []actions.Add
	for i := range 60_000 {
		a := actions.Add{
			Path: fmt.Sprintf("d=%d/part-%05d-0a0d7b5c.parquet", i%3, i),
			Size: int64(i), ModificationTime: int64(i) << 20, DataChange: true,
			Stats: fmt.Sprintf(`{"numRecords":%d,"minValues":{"s":"%s"}}`, i, strings.Repeat("x", rng.IntN(300))),
		}
		if i == 30_000 {
			a.Stats = fmt.Sprintf(`{"numRecords":1,"minValues":{"s":"%s"}}`, strings.Repeat("y", blockSize))
		}
		want = append(want, a)
		ft.add(&a)
	}
	ft.finish()
	if len(ft.blocks) < 10 {
		t.Fatalf("%d blocks: the test fills too few", len(ft.blocks))
	}
	for i := range want {
		var got actions.Add
		ft.build(i, &got, nil)
		if got.Path != want[i].Path || got.Stats != want[i].Stats || got.Size != want[i].Size || got.ModificationTime != want[i].ModificationTime {
			t.Fatalf("row %d: got %+v, want %+v", i, got, want[i])
		}
	}
	// The first record of each block, by row: a block ends where the next
	// one's first record would not have fitted.
	first := map[uint32]int{}
	for i := len(want) - 1; i >= 0; i-- {
		c, j := ft.at(i)
		first[uint32(c.recAt(j)>>32)] = i
	}
	for k := 0; k+1 < len(ft.blocks); k++ {
		b, next := ft.blocks[k], ft.blocks[k+1]
		if len(b) > blockSize || len(next) > blockSize {
			continue // an oversized record, alone in its block
		}
		c, j := ft.at(first[uint32(k+1)])
		if off := c.recAt(j) & (blockSize - 1); off != 0 {
			t.Fatalf("block %d starts with a record at offset %d", k+1, off)
		}
		n := len(next)
		if i := first[uint32(k+1)] + 1; i < len(want) {
			if c, j := ft.at(i); c.recAt(j)>>32 == uint64(k+1) {
				n = int(c.recAt(j) & (blockSize - 1))
			}
		}
		if len(b)+n <= blockSize {
			t.Fatalf("block %d of %d bytes ended before a record of %d that fitted", k, len(b), n)
		}
	}
}
