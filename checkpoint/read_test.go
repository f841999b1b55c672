package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// collect reads a checkpoint and returns every action, in order.
func collect(t testing.TB, store logstore.Store, parts []string, want ActionSet) ([]actions.Action, error) {
	t.Helper()
	var out []actions.Action
	err := Read(context.Background(), store, parts, want, func(batch []actions.Action) error {
		out = append(out, batch...)
		return nil
	})
	return out, err
}

// roundTrip is a checkpoint holding every kind of action with every field
// set, or null, and the actions it must decode to.
func roundTrip() ([]sRow, []actions.Action) {
	created, lastUpdated, delTS := int64(1700000000123), int64(1700000000456), int64(1700000000789)
	rows := []sRow{
		{Protocol: &sProto{MinReaderVersion: ptr[int32](3), MinWriterVersion: ptr[int32](7),
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "appendOnly"}}},
		{MetaData: &sMeta{ID: ptr("id-1"), Name: ptr("t"), Description: ptr("a table"),
			Format:       &sFormat{Provider: ptr("parquet"), Options: map[string]*string{"k": ptr("v")}},
			SchemaString: ptr(`{"type":"struct","fields":[]}`), PartitionColumns: []string{"date", "region"},
			Configuration: map[string]*string{"a": ptr("1"), "null": nil}, CreatedTime: &created}},
		{Txn: &sTxn{AppID: ptr("app"), Version: ptr[int64](5), LastUpdated: &lastUpdated}},
		{Txn: &sTxn{AppID: ptr("app2"), Version: ptr[int64](6)}},
		{DomainMetadata: &sDomain{Domain: ptr("delta.rowTracking"), Configuration: ptr(`{"x":1}`), Removed: ptr(false)}},
		{Add: &sAdd{Path: ptr("date=2024-01-01/region=eu/a.parquet"),
			PartitionValues: map[string]*string{"date": ptr("2024-01-01"), "region": nil},
			Size:            ptr[int64](1234), ModificationTime: ptr[int64](1700000000000), DataChange: ptr(true),
			Tags: map[string]*string{"INSERTION_TIME": ptr("1700000000000000")},
			DeletionVector: &sDV{StorageType: ptr("u"), PathOrInlineDv: ptr("ab^-aqEH.-t@S}K{vb[*k^"),
				Offset: ptr[int32](1), SizeInBytes: ptr[int32](36), Cardinality: ptr[int64](2)},
			BaseRowID: ptr[int64](7), DefaultRowCommitVersion: ptr[int64](3), ClusteringProvider: ptr("liquid"),
			Stats: ptr(`{"numRecords":10}`)}},
		{Remove: &sRemove{Path: ptr("date=2023-12-31/region=us/b.parquet"), DeletionTimestamp: &delTS, DataChange: ptr(true),
			ExtendedFileMetadata: ptr(true), PartitionValues: map[string]*string{"date": ptr("2023-12-31"), "region": ptr("us")},
			Size: ptr[int64](99), DeletionVector: &sDV{StorageType: ptr("i"), PathOrInlineDv: ptr("wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"),
				SizeInBytes: ptr[int32](40), Cardinality: ptr[int64](6), MaxRowIndex: ptr[int64](9)}}},
		{Add: &sAdd{Path: ptr("c.parquet")}},
		{},
		{CheckpointMetadata: &sCheckpointMeta{Version: ptr[int64](12), Tags: map[string]*string{"t": ptr("1")}}},
		{Sidecar: &sSidecar{Path: ptr("00000000000000000012.checkpoint.0000000001.0000000001.uuid.parquet"),
			SizeInBytes: ptr[int64](100), ModificationTime: ptr[int64](200)}},
	}
	want := []actions.Action{
		{Protocol: &actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "appendOnly"}}},
		{Metadata: &actions.Metadata{ID: "id-1", Name: "t", Description: "a table",
			Format:       actions.Format{Provider: "parquet", Options: map[string]string{"k": "v"}},
			SchemaString: `{"type":"struct","fields":[]}`, PartitionColumns: []string{"date", "region"},
			Configuration: map[string]string{"a": "1", "null": ""}, CreatedTime: &created}},
		{Txn: &actions.Txn{AppID: "app", Version: 5, LastUpdated: &lastUpdated}},
		{Txn: &actions.Txn{AppID: "app2", Version: 6}},
		{DomainMetadata: &actions.DomainMetadata{Domain: "delta.rowTracking", Configuration: `{"x":1}`}},
		{Add: &actions.Add{Path: "date=2024-01-01/region=eu/a.parquet",
			PartitionValues: map[string]string{"date": "2024-01-01", "region": ""},
			Size:            1234, ModificationTime: 1700000000000, DataChange: true,
			Tags: map[string]string{"INSERTION_TIME": "1700000000000000"},
			DeletionVector: &actions.DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^",
				Offset: ptr[int32](1), SizeInBytes: 36, Cardinality: 2},
			BaseRowID: ptr[int64](7), DefaultRowCommitVersion: ptr[int64](3), ClusteringProvider: "liquid",
			Stats: `{"numRecords":10}`}},
		{Remove: &actions.Remove{Path: "date=2023-12-31/region=us/b.parquet", DeletionTimestamp: &delTS, DataChange: true,
			ExtendedFileMetadata: ptr(true), PartitionValues: map[string]string{"date": "2023-12-31", "region": "us"},
			Size: ptr[int64](99), DeletionVector: &actions.DeletionVector{StorageType: "i",
				PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", SizeInBytes: 40, Cardinality: 6, MaxRowIndex: ptr[int64](9)}}},
		{Add: &actions.Add{Path: "c.parquet", PartitionValues: map[string]string{}}},
		{CheckpointMetadata: &actions.CheckpointMetadata{Version: 12, Tags: map[string]string{"t": "1"}}},
		{Sidecar: &actions.Sidecar{Path: "00000000000000000012.checkpoint.0000000001.0000000001.uuid.parquet",
			SizeInBytes: 100, ModificationTime: 200}},
	}
	return rows, want
}

// manyFiles returns n adds and n/10 removes, interleaved, and the actions
// they must decode to.
func manyFiles(n int) ([]sRow, []actions.Action) {
	var rows []sRow
	var want []actions.Action
	for i := range n {
		p := fmt.Sprintf("part=%d/file-%06d.parquet", i%13, i)
		part := fmt.Sprint(i % 13)
		stats := fmt.Sprintf(`{"numRecords":%d}`, i)
		add := &sAdd{Path: &p, PartitionValues: map[string]*string{"part": &part}, Size: ptr(int64(i)),
			ModificationTime: ptr(int64(2 * i)), DataChange: ptr(i%2 == 0), Stats: &stats}
		w := &actions.Add{Path: p, PartitionValues: map[string]string{"part": part}, Size: int64(i),
			ModificationTime: int64(2 * i), DataChange: i%2 == 0, Stats: stats}
		if i%7 == 0 {
			add.Tags = map[string]*string{"a": ptr("x"), "b": ptr(fmt.Sprint(i)), "c": nil}
			w.Tags = map[string]string{"a": "x", "b": fmt.Sprint(i), "c": ""}
		}
		if i%5 == 0 {
			add.Stats = nil
			w.Stats = ""
		}
		rows = append(rows, sRow{Add: add})
		want = append(want, actions.Action{Add: w})
		if i%10 == 3 {
			rows = append(rows, sRow{Remove: &sRemove{Path: ptr("gone-" + p), DeletionTimestamp: ptr(int64(i)), DataChange: ptr(false)}})
			want = append(want, actions.Action{Remove: &actions.Remove{Path: "gone-" + p, DeletionTimestamp: ptr(int64(i))}})
		}
	}
	return rows, want
}

func TestRoundTrip(t *testing.T) {
	head, headWant := roundTrip()
	files, filesWant := manyFiles(5000)
	rows := append(append(head, files...), head...)
	want := append(append(headWant, filesWant...), headWant...)
	// The sidecar action of head is followed, twice.
	sideRows, sideWant := manyFiles(30)
	sideKey := "_delta_log/_sidecars/00000000000000000012.checkpoint.0000000001.0000000001.uuid.parquet"
	want = append(append(want, sideWant...), sideWant...)
	for _, tc := range []struct {
		name string
		opts []parquet.WriterOption
	}{
		{"spark-like", nil},
		{"small pages, v1", []parquet.WriterOption{parquet.PageBufferSize(512)}},
		{"small pages, v2", []parquet.WriterOption{parquet.PageBufferSize(700), parquet.DataPageVersion(2)}},
		{"small row groups", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(999), parquet.PageBufferSize(2048)}},
		{"uncompressed", []parquet.WriterOption{parquet.Compression(&parquet.Uncompressed), parquet.MaxRowsPerRowGroup(100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "_delta_log/00000000000000000012.checkpoint.parquet"
			store := newMemStore(map[string][]byte{key: writeRows(t, rows, tc.opts...), sideKey: writeRows(t, sideRows, tc.opts...)})
			got, err := collect(t, store, []string{key}, All)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d actions, want %d", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("action %d:\n got %s\nwant %s", i, show(got[i]), show(want[i]))
				}
			}
			// Each subset of kinds yields the same actions of those kinds.
			for _, set := range []ActionSet{Protocol | Metadata, Add, Remove, Txn | DomainMetadata, Sidecar | CheckpointMetadata} {
				sub, err := collect(t, store, []string{key}, set)
				if err != nil {
					t.Fatal(err)
				}
				var exp []actions.Action
				for _, a := range want {
					if f := filter(&a, set); !f.IsEmpty() {
						exp = append(exp, f)
					}
				}
				if !reflect.DeepEqual(sub, exp) {
					t.Errorf("Read(%b): %d actions, want %d", set, len(sub), len(exp))
				}
			}
		})
	}
}

func show(a actions.Action) string {
	b, _ := json.Marshal(a)
	return string(b)
}

func TestBatches(t *testing.T) {
	rows, _ := manyFiles(3 * batchSize)
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	store := newMemStore(map[string][]byte{key: writeRows(t, rows)})
	var sizes []int
	var first *actions.Add
	err := Read(context.Background(), store, []string{key}, Add, func(batch []actions.Action) error {
		sizes = append(sizes, len(batch))
		if first == nil {
			first = batch[0].Add // the pointers may be kept
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range sizes {
		if n == 0 || n > batchSize {
			t.Errorf("batch of %d", n)
		}
		total += n
	}
	if total != 3*batchSize || len(sizes) < 3 {
		t.Errorf("batches %v", sizes)
	}
	if first.Path != "part=0/file-000000.parquet" {
		t.Errorf("kept add changed: %+v", first)
	}
}

// statsRow is an add with stats_parsed of most types Delta has.
type statsRow struct {
	Add *struct {
		Path        *string     `parquet:"path,optional"`
		Stats       *string     `parquet:"stats,optional"`
		StatsParsed *statsValue `parquet:"stats_parsed,optional"`
	} `parquet:"add,optional"`
}

type statsValue struct {
	NumRecords  *int64      `parquet:"numRecords,optional"`
	MinValues   *typedStats `parquet:"minValues,optional"`
	NullCount   *nullStats  `parquet:"nullCount,optional"`
	TightBounds *bool       `parquet:"tightBounds,optional"`
}

type typedStats struct {
	I32      *int32    `parquet:"i32,optional"`
	I64      *int64    `parquet:"i64,optional"`
	I8       *int32    `parquet:"i8,optional,int(8)"`
	F32      *float32  `parquet:"f32,optional"`
	F64      *float64  `parquet:"f64,optional"`
	NaN      *float64  `parquet:"nan,optional"`
	Str      *string   `parquet:"str,optional"`
	Bin      []byte    `parquet:"bin,optional"`
	Bool     *bool     `parquet:"bool,optional"`
	Date     *int32    `parquet:"date,optional,date"`
	TS       *int64    `parquet:"ts,optional,timestamp(microsecond:utc)"`
	TSMilli  *int64    `parquet:"tsms,optional,timestamp(millisecond:utc)"`
	TSNano   *int64    `parquet:"tsns,optional,timestamp(nanosecond:utc)"`
	NTZ      *int64    `parquet:"ntz,optional,timestamp(microsecond:local)"`
	Dec32    *int32    `parquet:"dec32,optional,decimal(2:9)"`
	Dec64    *int64    `parquet:"dec64,optional,decimal(3:18)"`
	DecFixed *[16]byte `parquet:"decfixed,optional,decimal(4:38)"`
	Null     *int64    `parquet:"null,optional"`
	Nested   *struct {
		A     *int64 `parquet:"a,optional"`
		Empty *struct {
			B []byte `parquet:"b,optional"`
		} `parquet:"empty,optional"`
	} `parquet:"nested,optional"`
}

type nullStats struct {
	I32    *int64 `parquet:"i32,optional"`
	Nested *struct {
		A *int64 `parquet:"a,optional"`
	} `parquet:"nested,optional"`
}

func TestParsedStats(t *testing.T) {
	tsMicros := int64(1609459200123456) // 2021-01-01T00:00:00.123456Z
	neg := [16]byte{}
	for i := range neg {
		neg[i] = 0xff
	}
	neg[15] = 0x85 // -123
	v := statsValue{
		NumRecords: ptr[int64](42),
		MinValues: &typedStats{
			I32: ptr[int32](-7), I64: ptr[int64](1 << 40), I8: ptr[int32](-3), F32: ptr[float32](1.1), F64: ptr(2.5e-300),
			NaN: ptr(math.NaN()), Str: ptr("a\"b\\c\n\x01é"), Bin: []byte{1, 2}, Bool: ptr(true), Date: ptr[int32](-1),
			TS: &tsMicros, TSMilli: ptr[int64](-1), TSNano: ptr[int64](1_500_000_000), NTZ: &tsMicros,
			Dec32: ptr[int32](-5), Dec64: ptr[int64](123456), DecFixed: &neg,
		},
		NullCount: &nullStats{I32: ptr[int64](0), Nested: &struct {
			A *int64 `parquet:"a,optional"`
		}{A: ptr[int64](3)}},
		TightBounds: ptr(false),
	}
	v.MinValues.Nested = &struct {
		A     *int64 `parquet:"a,optional"`
		Empty *struct {
			B []byte `parquet:"b,optional"`
		} `parquet:"empty,optional"`
	}{A: ptr[int64](9), Empty: &struct {
		B []byte `parquet:"b,optional"`
	}{B: []byte("x")}}

	mk := func(path string, stats *string, sp *statsValue) statsRow {
		var r statsRow
		r.Add = &struct {
			Path        *string     `parquet:"path,optional"`
			Stats       *string     `parquet:"stats,optional"`
			StatsParsed *statsValue `parquet:"stats_parsed,optional"`
		}{&path, stats, sp}
		return r
	}
	rows := []statsRow{
		{},
		mk("a", nil, &v),
		mk("b", ptr(`{"numRecords":1}`), &v),
		mk("c", nil, nil),
		mk("d", nil, &statsValue{NumRecords: ptr[int64](0)}),
	}
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	store := newMemStore(map[string][]byte{key: writeRows(t, rows)})
	got, err := collect(t, store, []string{key}, Add)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"numRecords":42,"minValues":{"i32":-7,"i64":1099511627776,"i8":-3,"f32":1.1,"f64":2.5e-300,` +
			`"str":"a\"b\\c\n\u0001é","bool":true,"date":"1969-12-31","ts":"2021-01-01T00:00:00.123Z",` +
			`"tsms":"1969-12-31T23:59:59.999Z","tsns":"1970-01-01T00:00:01.500Z","ntz":"2021-01-01T00:00:00.123",` +
			`"dec32":-0.05,"dec64":123.456,"decfixed":-0.0123,"nested":{"a":9}},` +
			`"nullCount":{"i32":0,"nested":{"a":3}},"tightBounds":false}`,
		`{"numRecords":1}`,
		``,
		`{"numRecords":0}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d adds", len(got))
	}
	for i, w := range want {
		if s := got[i].Add.Stats; s != w {
			t.Errorf("add %s: stats\n%s\nwant\n%s", got[i].Add.Path, s, w)
		}
		if w != "" && !json.Valid([]byte(got[i].Add.Stats)) {
			t.Errorf("add %s: stats are not JSON", got[i].Add.Path)
		}
	}
}

// partsRow is an add with partitionValues_parsed only.
type partsRow struct {
	Add *struct {
		Path   *string `parquet:"path,optional"`
		Parsed *struct {
			S    *string `parquet:"s,optional"`
			I    *int64  `parquet:"i,optional"`
			D    *int32  `parquet:"d,optional,date"`
			B    *bool   `parquet:"b,optional"`
			TS   *int64  `parquet:"ts,optional,timestamp(microsecond:utc)"`
			NTZ  *int64  `parquet:"ntz,optional,timestamp(microsecond:local)"`
			NTZ0 *int64  `parquet:"ntz0,optional,timestamp(microsecond:local)"`
			Dec  *int64  `parquet:"dec,optional,decimal(2:10)"`
			F    *float64
			Bin  []byte `parquet:"bin,optional"`
		} `parquet:"partitionValues_parsed,optional"`
	} `parquet:"add,optional"`
}

func TestParsedPartitionValues(t *testing.T) {
	var r partsRow
	r.Add = &struct {
		Path   *string `parquet:"path,optional"`
		Parsed *struct {
			S    *string `parquet:"s,optional"`
			I    *int64  `parquet:"i,optional"`
			D    *int32  `parquet:"d,optional,date"`
			B    *bool   `parquet:"b,optional"`
			TS   *int64  `parquet:"ts,optional,timestamp(microsecond:utc)"`
			NTZ  *int64  `parquet:"ntz,optional,timestamp(microsecond:local)"`
			NTZ0 *int64  `parquet:"ntz0,optional,timestamp(microsecond:local)"`
			Dec  *int64  `parquet:"dec,optional,decimal(2:10)"`
			F    *float64
			Bin  []byte `parquet:"bin,optional"`
		} `parquet:"partitionValues_parsed,optional"`
	}{Path: ptr("x")}
	r.Add.Parsed = &struct {
		S    *string `parquet:"s,optional"`
		I    *int64  `parquet:"i,optional"`
		D    *int32  `parquet:"d,optional,date"`
		B    *bool   `parquet:"b,optional"`
		TS   *int64  `parquet:"ts,optional,timestamp(microsecond:utc)"`
		NTZ  *int64  `parquet:"ntz,optional,timestamp(microsecond:local)"`
		NTZ0 *int64  `parquet:"ntz0,optional,timestamp(microsecond:local)"`
		Dec  *int64  `parquet:"dec,optional,decimal(2:10)"`
		F    *float64
		Bin  []byte `parquet:"bin,optional"`
	}{I: ptr[int64](-42), D: ptr[int32](19723), B: ptr(false), TS: ptr[int64](1609459200000001),
		NTZ: ptr[int64](1609459200123456), NTZ0: ptr[int64](1609459200000000), Dec: ptr[int64](-150), F: ptr(0.5), Bin: []byte("ab")}
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	store := newMemStore(map[string][]byte{key: writeRows(t, []partsRow{{}, r})})
	got, err := collect(t, store, []string{key}, Add)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d adds", len(got))
	}
	want := map[string]string{
		"s": "", "i": "-42", "d": "2024-01-01", "b": "false", "ts": "2021-01-01T00:00:00.000001Z",
		"ntz": "2021-01-01 00:00:00.123456", "ntz0": "2021-01-01 00:00:00", "dec": "-1.50", "F": "0.5", "bin": "ab",
	}
	if pv := got[0].Add.PartitionValues; !reflect.DeepEqual(pv, want) {
		t.Errorf("partition values\n%v\nwant\n%v", pv, want)
	}
}

// TestParsedAgainstStrings builds the string forms from stats_parsed and
// partitionValues_parsed in every corpus checkpoint that has both forms,
// and compares them with the strings the writer put next to them.
func TestParsedAgainstStrings(t *testing.T) {
	corpus := corpusDir(t)
	cps, _ := findCheckpoints(t, corpus, corpus)
	compared := 0
	for _, cp := range cps {
		store := dirStore{cp.table}
		plain, err := readAll(t, store, cp.parts, Add)
		if err != nil {
			t.Fatalf("%s: %v", cp, err)
		}
		testPreferParsed = true
		parsed, err := readAll(t, store, cp.parts, Add)
		testPreferParsed = false
		if err != nil {
			t.Fatalf("%s: %v", cp, err)
		}
		for i, a := range plain.adds {
			b := parsed.adds[i]
			if b.Stats != a.Stats {
				compared++
				if a.Stats != "" && b.Stats != "" && !sameStats(t, b.Stats, a.Stats) {
					t.Errorf("%s: add %s: stats from stats_parsed\n%s\nthe writer's\n%s", cp, a.Path, b.Stats, a.Stats)
				}
			}
			if !reflect.DeepEqual(a.PartitionValues, b.PartitionValues) {
				t.Errorf("%s: add %s: partition values from partitionValues_parsed %v, the writer's %v", cp, a.Path, b.PartitionValues, a.PartitionValues)
			}
		}
	}
	t.Logf("compared %d stats built from stats_parsed", compared)
}

// TestStructStatsOnly reads the corpus tables whose checkpoints have only
// stats_parsed: every add must get JSON statistics.
func TestStructStatsOnly(t *testing.T) {
	corpus := corpusDir(t)
	for _, table := range []string{
		"kernel-rs/v1-single-part-struct-stats-only",
		"kernel-rs/v1-multi-part-struct-stats-only",
		"kernel-rs/v2-classic-parquet-struct-stats-only",
		"kernel-rs/v2-parquet-sidecars-struct-stats-only",
		"delta-rs/delta-1.2.1-only-struct-stats",
		"kernel-rs/parsed-stats",
	} {
		t.Run(table, func(t *testing.T) {
			dir := filepath.Join(corpus, filepath.FromSlash(table))
			if _, err := os.Stat(dir); err != nil {
				t.Skip("not in the corpus")
			}
			cps, _ := findCheckpoints(t, corpus, dir)
			if len(cps) == 0 {
				t.Skip("not in the corpus")
			}
			for _, cp := range cps {
				d, err := readAll(t, dirStore{cp.table}, cp.parts, Add)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.adds) == 0 {
					t.Fatalf("%s: no adds", cp)
				}
				for _, a := range d.adds {
					var st struct {
						NumRecords *int64 `json:"numRecords"`
					}
					if err := json.Unmarshal([]byte(a.Stats), &st); err != nil || st.NumRecords == nil {
						t.Errorf("%s: add %s: stats %q", cp, a.Path, a.Stats)
					}
				}
				t.Logf("%s: %s", cp, d.adds[0].Stats)
			}
		})
	}
}

func TestMultiPart(t *testing.T) {
	corpus := corpusDir(t)
	for _, table := range []string{"golden/multi-part-checkpoint/delta", "kernel-rs/v1-multi-part-struct-stats-only", "kernel-rs/parquet_row_group_skipping"} {
		t.Run(table, func(t *testing.T) {
			dir := filepath.Join(corpus, filepath.FromSlash(table))
			if _, err := os.Stat(dir); err != nil {
				t.Skip("not in the corpus")
			}
			cps, _ := findCheckpoints(t, corpus, dir)
			var cp *corpusCheckpoint
			for i := range cps {
				if len(cps[i].parts) > 1 {
					cp = &cps[i]
				}
			}
			if cp == nil {
				t.Skip("no multi-part checkpoint in the corpus")
			}
			store := dirStore{cp.table}
			whole, err := collect(t, store, cp.parts, All)
			if err != nil {
				t.Fatal(err)
			}
			// The parts read one by one give the same actions, in order.
			var each []actions.Action
			for _, p := range cp.parts {
				a, err := collect(t, store, []string{p}, All)
				if err != nil {
					t.Fatal(err)
				}
				each = append(each, a...)
			}
			if !reflect.DeepEqual(whole, each) {
				t.Errorf("reading %d parts together gives %d actions, one by one %d", len(cp.parts), len(whole), len(each))
			}
			// A missing part is an error, not fewer actions.
			missing := append(append([]string(nil), cp.parts...), strings.Replace(cp.parts[0], ".0000000001.", ".0000000009.", 1))
			if _, err := collect(t, store, missing, All); !errors.Is(err, logstore.ErrNotFound) {
				t.Errorf("with a missing part: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestV2Corpus(t *testing.T) {
	corpus := corpusDir(t)
	for _, table := range []string{
		"kernel-rs/v2-checkpoints-json-with-sidecars",
		"kernel-rs/v2-checkpoints-parquet-with-sidecars",
		"kernel-rs/v2-parquet-sidecars-struct-stats-only",
		"delta-rs/checkpoint-v2-table",
		"golden/v2-checkpoint-json/delta",
	} {
		t.Run(table, func(t *testing.T) {
			dir := filepath.Join(corpus, filepath.FromSlash(table))
			if _, err := os.Stat(dir); err != nil {
				t.Skip("not in the corpus")
			}
			cps, _ := findCheckpoints(t, corpus, dir)
			n := 0
			for _, cp := range cps {
				if !v2Name.MatchString(filepath.Base(cp.parts[0])) {
					continue
				}
				n++
				store := newRecordingStore(dirStore{cp.table})
				d, err := readAll(t, store, cp.parts, All)
				if err != nil {
					t.Fatal(err)
				}
				// The adds are those of the sidecars, read on their own.
				adds := 0
				for _, sc := range d.sidecars {
					key := "_delta_log/_sidecars/" + sc.Path
					if store.gets[key] == 0 && len(store.ranges[key]) == 0 {
						t.Errorf("%s: sidecar %s not read", cp, sc.Path)
					}
					s, err := readAll(t, dirStore{cp.table}, []string{key}, All)
					if err != nil {
						t.Fatal(err)
					}
					adds += len(s.adds)
				}
				direct, err := readAll(t, dirStore{cp.table}, cp.parts, Sidecar)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.sidecars) > 0 && adds+countDirect(t, cp) != len(d.adds) {
					t.Errorf("%s: %d adds, its sidecars hold %d", cp, len(d.adds), adds)
				}
				if len(direct.sidecars) != len(d.sidecars) {
					t.Errorf("%s: Read(Sidecar) gives %d sidecars, Read(All) %d", cp, len(direct.sidecars), len(d.sidecars))
				}
				// Without file actions asked for, no sidecar is read.
				store = newRecordingStore(dirStore{cp.table})
				if _, err := readAll(t, store, cp.parts, Protocol|Metadata|Sidecar|CheckpointMetadata); err != nil {
					t.Fatal(err)
				}
				for key := range store.ranges {
					if strings.Contains(key, "_sidecars/") {
						t.Errorf("%s: Read without Add or Remove read %s", cp, key)
					}
				}
			}
			if n == 0 {
				t.Skip("no UUID-named checkpoint in the corpus")
			}
		})
	}
}

// countDirect returns the adds held in the V2 checkpoint file itself.
func countDirect(t *testing.T, cp corpusCheckpoint) int {
	store := newRecordingStore(dirStore{cp.table})
	var n int
	// Reading Add|Remove follows sidecars; count the adds of the
	// checkpoint file by reading it as a sidecar would be, without them.
	if strings.HasSuffix(cp.parts[0], ".json") {
		data, err := store.Get(context.Background(), cp.parts[0])
		if err != nil {
			t.Fatal(err)
		}
		acts, err := actions.DecodeCommit(cp.parts[0], data)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acts {
			if a.Add != nil {
				n++
			}
		}
		return n
	}
	d, err := readAll(t, store, cp.parts, Add|Sidecar)
	if err != nil {
		t.Fatal(err)
	}
	return len(d.adds) - sidecarAdds(t, cp, d.sidecars)
}

func sidecarAdds(t *testing.T, cp corpusCheckpoint, sidecars []*actions.Sidecar) int {
	n := 0
	for _, sc := range sidecars {
		d, err := readAll(t, dirStore{cp.table}, []string{"_delta_log/_sidecars/" + sc.Path}, Add)
		if err != nil {
			t.Fatal(err)
		}
		n += len(d.adds)
	}
	return n
}

func TestV2JSON(t *testing.T) {
	sideRows, sideWant := manyFiles(50)
	files := map[string][]byte{
		"_delta_log/_sidecars/s1.parquet": writeRows(t, sideRows),
		"_delta_log/00000000000000000003.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json": []byte(
			`{"checkpointMetadata":{"version":3}}
{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["v2Checkpoint"],"writerFeatures":["v2Checkpoint"]}}

{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}
{"add":{"path":"a.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":false}}
{"sidecar":{"path":"s1.parquet","sizeInBytes":1,"modificationTime":1}}
{"someFutureAction":{"x":1}}
{"txn":{"appId":"app","version":4}}
`),
	}
	key := "_delta_log/00000000000000000003.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"
	store := newRecordingStore(newMemStore(files))
	d, err := readAll(t, store, []string{key}, All)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.protocols) != 1 || len(d.metadata) != 1 || len(d.cpMeta) != 1 || len(d.sidecars) != 1 || len(d.txns) != 1 ||
		len(d.adds) != 1+len(sideWant)*10/11 || len(d.removes) != len(sideWant)-len(sideWant)*10/11 {
		t.Errorf("got protocol=%d metaData=%d checkpointMetadata=%d sidecar=%d txn=%d add=%d remove=%d",
			len(d.protocols), len(d.metadata), len(d.cpMeta), len(d.sidecars), len(d.txns), len(d.adds), len(d.removes))
	}
	if d.adds[0].Path != "a.parquet" || d.adds[1].Path != sideWant[0].Add.Path {
		t.Errorf("adds in the wrong order: %s, %s", d.adds[0].Path, d.adds[1].Path)
	}
	store = newRecordingStore(newMemStore(files))
	d, err = readAll(t, store, []string{key}, Txn|Sidecar)
	if err != nil || len(d.txns) != 1 || len(d.sidecars) != 1 || d.total() != 2 {
		t.Errorf("Read(Txn|Sidecar): %+v, %v", d, err)
	}
	if len(store.ranges["_delta_log/_sidecars/s1.parquet"]) != 0 {
		t.Error("Read(Txn|Sidecar) read the sidecar")
	}

	// A missing sidecar is the store's not-found error.
	delete(files, "_delta_log/_sidecars/s1.parquet")
	if _, err := readAll(t, newMemStore(files), []string{key}, Add); !errors.Is(err, logstore.ErrNotFound) {
		t.Errorf("missing sidecar: %v, want ErrNotFound", err)
	}
	// A line that is not JSON makes the checkpoint corrupt.
	files[key] = append(files[key], "{not json\n"...)
	if _, err := readAll(t, newMemStore(files), []string{key}, Protocol); !errors.Is(err, deltaerr.ErrCorrupt) {
		t.Errorf("bad line: %v, want ErrCorrupt", err)
	}
}

func TestSidecarKey(t *testing.T) {
	from := "_delta_log/00000000000000000003.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"
	for _, tc := range []struct {
		path    string
		want    string
		corrupt bool
		escapes bool
	}{
		{path: "a.parquet", want: "_delta_log/_sidecars/a.parquet"},
		{path: "a%20b.parquet", want: "_delta_log/_sidecars/a b.parquet"},
		{path: "sub/a.parquet", want: "_delta_log/_sidecars/sub/a.parquet"},
		{path: "", corrupt: true},
		{path: "%zz", corrupt: true},
		{path: "../x.parquet", corrupt: true, escapes: true},
		{path: "a/../../x.parquet", corrupt: true, escapes: true},
		{path: "%2e%2e/x.parquet", corrupt: true, escapes: true},
		{path: "..", corrupt: true, escapes: true},
		{path: "a//b", corrupt: true, escapes: true},
		{path: "/etc/passwd", escapes: true},
		{path: "%2Fetc", escapes: true},
		{path: "s3://bucket/t/_delta_log/_sidecars/a.parquet", escapes: true},
		{path: "file:///t/_delta_log/_sidecars/a.parquet", escapes: true},
	} {
		got, err := sidecarKey(from, tc.path)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("sidecarKey(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
			continue
		}
		if err == nil || errors.Is(err, deltaerr.ErrCorrupt) != tc.corrupt || errors.Is(err, deltaerr.ErrPathEscapesRoot) != tc.escapes {
			t.Errorf("sidecarKey(%q) = %q, %v; want corrupt=%v escapes=%v", tc.path, got, err, tc.corrupt, tc.escapes)
		}
	}
	if got, err := sidecarKey("t/_delta_log/1.checkpoint.u.json", "a.parquet"); err != nil || got != "t/_delta_log/_sidecars/a.parquet" {
		t.Errorf("under a prefix: %q, %v", got, err)
	}
}

func TestErrors(t *testing.T) {
	rows, _ := manyFiles(2000)
	key := "_delta_log/00000000000000000001.checkpoint.parquet"
	data := writeRows(t, rows, parquet.PageBufferSize(4096))
	ctx := context.Background()

	t.Run("not found", func(t *testing.T) {
		store := newMemStore(map[string][]byte{})
		for _, k := range []string{key, "_delta_log/00000000000000000001.checkpoint.0e42c15b-17cc-4918-990d-2ff76e918e4d.json"} {
			if _, err := collect(t, store, []string{k}, All); !errors.Is(err, logstore.ErrNotFound) || errors.Is(err, deltaerr.ErrCorrupt) {
				t.Errorf("%s: %v, want ErrNotFound", k, err)
			}
		}
	})
	t.Run("no parts", func(t *testing.T) {
		if err := Read(ctx, newMemStore(nil), nil, All, nil); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("store failure", func(t *testing.T) {
		boom := errors.New("connection reset")
		counter := &failingStore{Store: newMemStore(map[string][]byte{key: data}), after: 1 << 30}
		if _, err := collect(t, counter, []string{key}, All); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < counter.n; n++ {
			store := &failingStore{Store: newMemStore(map[string][]byte{key: data}), after: n, err: boom}
			_, err := collect(t, store, []string{key}, All)
			if !errors.Is(err, boom) || errors.Is(err, deltaerr.ErrCorrupt) {
				t.Errorf("failing after %d reads: %v, want the store's error", n, err)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := Read(cctx, newMemStore(map[string][]byte{key: data}), []string{key}, All, func([]actions.Action) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		calls := 0
		err := Read(ctx, newMemStore(map[string][]byte{key: data}), []string{key}, All, func([]actions.Action) error {
			calls++
			return stop
		})
		if err != stop || calls != 1 {
			t.Errorf("got %v after %d calls, want the callback's error after 1", err, calls)
		}
	})
	t.Run("callback panic", func(t *testing.T) {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the callback's panic", r)
			}
		}()
		Read(ctx, newMemStore(map[string][]byte{key: data}), []string{key}, All, func([]actions.Action) error { panic("boom") })
		t.Error("Read returned")
	})
}

// failingStore fails every GetRange after the first after.
type failingStore struct {
	logstore.Store
	after, n int
	err      error
}

func (s *failingStore) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.n++
	if s.n > s.after {
		return nil, s.err
	}
	return s.Store.GetRange(ctx, key, off, n)
}
