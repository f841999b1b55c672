package parquetio_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// The corruption tests build one small Parquet file by hand, page by
// page, so that each can break exactly one rule, and read it both as a
// checkpoint and as a data file: the two readers share the page cursor
// and its checks, and both must report ErrCorrupt naming the file and the
// column.
//
// The file has one optional struct column, txn, of two optional leaves:
// appId (a string, dictionary-encoded) and version (an INT64, plain), three
// rows. It is a checkpoint of three txn actions, and a data file of one
// struct column. Both leaves have a maximum definition level of 2, which
// is not all ones: a level of 3 fits the 2-bit encoding and is out of
// range.

// spec says how to build the file; the zero spec is a valid file.
type spec struct {
	appDefs    []byte  // definition levels of appId's page
	appIdx     []uint8 // dictionary indexes of appId's page
	verDefs    []byte  // definition levels of version's page
	damageVer  bool    // overwrite the header of version's page with garbage
	truncVer   int64   // bytes the footer takes off version's chunk length
	dictValues []string
}

const rows = 3

func build(t *testing.T, s spec) []byte {
	t.Helper()
	if s.appDefs == nil {
		s.appDefs = []byte{2, 2, 2}
	}
	if s.appIdx == nil {
		s.appIdx = []uint8{0, 1, 0}
	}
	if s.verDefs == nil {
		s.verDefs = []byte{2, 2, 2}
	}
	if s.dictValues == nil {
		s.dictValues = []string{"a", "b"}
	}
	out := []byte("PAR1")

	// appId: a dictionary page, then a data page of indexes.
	appStart := int64(len(out))
	var dict []byte
	for _, v := range s.dictValues {
		dict = binary.LittleEndian.AppendUint32(dict, uint32(len(v)))
		dict = append(dict, v...)
	}
	out = appendPage(t, out, &format.PageHeader{
		Type:                 format.DictionaryPage,
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(len(s.dictValues)), Encoding: format.Plain}),
	}, dict)
	appData := int64(len(out))
	width := 1
	for _, j := range s.appIdx {
		for j >= 1<<width {
			width++
		}
	}
	idx, err := (&rle.Encoding{BitWidth: width}).EncodeLevels(nil, s.appIdx)
	if err != nil {
		t.Fatal(err)
	}
	body := append(levels(t, s.appDefs), byte(width))
	body = append(body, idx...)
	out = appendPage(t, out, dataPage(len(s.appDefs), format.RLEDictionary), body)
	appEnd := int64(len(out))

	// version: one plain data page.
	verStart := int64(len(out))
	body = levels(t, s.verDefs)
	for _, v := range []int64{1, 2, 3} {
		body = binary.LittleEndian.AppendUint64(body, uint64(v))
	}
	out = appendPage(t, out, dataPage(len(s.verDefs), format.Plain), body)
	verEnd := int64(len(out))
	if s.damageVer {
		for i := verStart; i < verStart+6; i++ {
			out[i] = 0xff
		}
	}

	optional := thrift.New(format.Optional)
	md := format.FileMetaData{
		Version: 1,
		Schema: []format.SchemaElement{
			{Name: "schema", NumChildren: thrift.New(int32(1))},
			{Name: "txn", RepetitionType: optional, NumChildren: thrift.New(int32(2))},
			{Name: "appId", RepetitionType: optional, Type: thrift.New(format.ByteArray), LogicalType: format.LogicalType{Value: &format.StringType{}}},
			{Name: "version", RepetitionType: optional, Type: thrift.New(format.Int64)},
		},
		NumRows: rows,
		RowGroups: []format.RowGroup{{
			NumRows: rows,
			Columns: []format.ColumnChunk{
				chunk(format.ByteArray, []string{"txn", "appId"}, appStart, appData, appEnd-appStart, len(s.appDefs)),
				chunk(format.Int64, []string{"txn", "version"}, 0, verStart, verEnd-verStart-s.truncVer, len(s.verDefs)),
			},
		}},
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

// levels encodes definition levels of maximum 2 as a v1 data page has
// them: RLE/bit-packed hybrid behind a 4-byte length.
func levels(t *testing.T, defs []byte) []byte {
	t.Helper()
	enc, err := (&rle.Encoding{BitWidth: 2}).EncodeLevels(nil, defs)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(enc))), enc...)
}

func dataPage(n int, enc format.Encoding) *format.PageHeader {
	return &format.PageHeader{
		Type: format.DataPage,
		DataPageHeader: thrift.New(format.DataPageHeader{
			NumValues:               int32(n),
			Encoding:                enc,
			DefinitionLevelEncoding: format.RLE,
			RepetitionLevelEncoding: format.RLE,
		}),
	}
}

func appendPage(t *testing.T, out []byte, h *format.PageHeader, body []byte) []byte {
	t.Helper()
	h.UncompressedPageSize, h.CompressedPageSize = int32(len(body)), int32(len(body))
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), h)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(out, hb...), body...)
}

func chunk(typ format.Type, path []string, dictOff, dataOff, length int64, n int) format.ColumnChunk {
	return format.ColumnChunk{
		FileOffset: dataOff,
		MetaData: format.ColumnMetaData{
			Type:                  typ,
			Encoding:              []format.Encoding{format.Plain, format.RLE, format.RLEDictionary},
			PathInSchema:          path,
			Codec:                 format.Uncompressed,
			NumValues:             int64(n),
			TotalUncompressedSize: length,
			TotalCompressedSize:   length,
			DataPageOffset:        dataOff,
			DictionaryPageOffset:  dictOff,
		},
	}
}

const key = "_delta_log/00000000000000000001.checkpoint.parquet"

// readCheckpoint reads the file as a checkpoint and returns its txn
// actions as "appId=version".
func readCheckpoint(t *testing.T, b []byte) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	if err := store.PutIfAbsent(ctx, key, b); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := checkpoint.Read(ctx, store, []string{key}, checkpoint.Txn, func(batch []actions.Action) error {
		for _, a := range batch {
			if a.Txn != nil {
				got = append(got, a.Txn.AppID+"="+strconv.FormatInt(a.Txn.Version, 10))
			}
		}
		return nil
	})
	return got, err
}

// readData reads the file as a data file, through a store, and returns
// its rows as "appId=version".
func readData(t *testing.T, b []byte) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	store := memory.New()
	if err := store.PutIfAbsent(ctx, key, b); err != nil {
		t.Fatal(err)
	}
	f, err := datafile.OpenObject(ctx, store, key, int64(len(b)))
	if err != nil {
		return nil, err
	}
	want := &schema.StructType{Fields: []schema.StructField{{Name: "txn", Nullable: true, Type: &schema.StructType{Fields: []schema.StructField{
		{Name: "appId", Type: schema.String, Nullable: true},
		{Name: "version", Type: schema.Long, Nullable: true},
	}}}}}
	var got []string
	err = f.Read(ctx, want, datafile.ReadOptions{}, func(batch *datafile.Batch) error {
		for _, v := range batch.Columns[0] {
			fields := v.Fields()
			got = append(got, fields[0].String()+"="+strconv.FormatInt(fields[1].Int64(), 10))
		}
		return nil
	})
	return got, err
}

func TestValidFile(t *testing.T) {
	b := build(t, spec{})
	want := "a=1 b=2 a=3"
	for name, read := range map[string]func(*testing.T, []byte) ([]string, error){"checkpoint": readCheckpoint, "datafile": readData} {
		got, err := read(t, b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s := strings.Join(got, " "); s != want {
			t.Errorf("%s: got %q, want %q", name, s, want)
		}
	}
}

func TestCorruptBothReaders(t *testing.T) {
	tests := []struct {
		name   string
		spec   spec
		column string // the column the error must name
		reason string // a piece of the error
	}{
		{"damaged page header", spec{damageVer: true}, "txn.version", "column txn.version"},
		{"truncated chunk", spec{truncVer: 5}, "txn.version", "column txn.version"},
		{"dictionary index out of range", spec{appIdx: []uint8{0, 1, 5}}, "txn.appId", "dictionary index 5 out of range"},
		{"definition level out of range", spec{verDefs: []byte{2, 3, 2}}, "txn.version", "definition level above the maximum 2"},
	}
	for _, tt := range tests {
		b := build(t, tt.spec)
		for name, read := range map[string]func(*testing.T, []byte) ([]string, error){"checkpoint": readCheckpoint, "datafile": readData} {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				got, err := read(t, b)
				if !errors.Is(err, deltaerr.ErrCorrupt) {
					t.Fatalf("got %q, %v; want ErrCorrupt", got, err)
				}
				var ce *deltaerr.CorruptError
				if !errors.As(err, &ce) || ce.Path != key {
					t.Errorf("error %v does not name the file %s", err, key)
				}
				for _, s := range []string{tt.column, tt.reason} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
			})
		}
	}
}
