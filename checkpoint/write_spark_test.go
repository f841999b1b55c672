package checkpoint_test

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/checkpoint"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// What Spark writes in and around a checkpoint, beyond its actions.

// schemaLeaves returns the Parquet leaf column paths of a Delta schema,
// with the Delta type of each leaf: structs as groups, maps as
// key_value.key and key_value.value, arrays as list.element.
func schemaLeaves(prefix string, t schema.DataType, out map[string]string) {
	switch t := t.(type) {
	case *schema.StructType:
		for _, f := range t.Fields {
			p := f.Name
			if prefix != "" {
				p = prefix + "." + f.Name
			}
			schemaLeaves(p, f.Type, out)
		}
	case *schema.MapType:
		schemaLeaves(prefix+".key_value.key", t.KeyType, out)
		schemaLeaves(prefix+".key_value.value", t.ValueType, out)
	case *schema.ArrayType:
		schemaLeaves(prefix+".list.element", t.ElementType, out)
	default:
		out[prefix] = t.String()
	}
}

// parquetLeaves returns the leaf column paths of the Parquet file at key.
func parquetLeaves(t *testing.T, store logstore.Store, key string) []string {
	t.Helper()
	data, err := store.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquetOpen(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range f.Schema().Columns() {
		out = append(out, strings.Join(p, "."))
	}
	slices.Sort(out)
	return out
}

// TestLastCheckpointSchema: _last_checkpoint carries checkpointSchema, the
// Delta schema of the checkpoint's Parquet file, as Spark's
// LastCheckpointInfo does (Checkpoints.scala writeCheckpoint: the schema
// of a classic checkpoint, or of a V2 checkpoint's Parquet file; none for
// a JSON V2 checkpoint). Its fields are the file's columns, every one
// nullable, and the hint still passes its checksum.
func TestLastCheckpointSchema(t *testing.T) {
	v1 := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	v2 := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureV2Checkpoint},
		WriterFeatures: []string{actions.FeatureV2Checkpoint}}
	both := map[string]string{"delta.checkpoint.writeStatsAsStruct": "true"}
	for _, tc := range []struct {
		name     string
		protocol actions.Protocol
		opts     checkpoint.WriteOptions
		want     bool
	}{
		{"v1", v1, checkpoint.WriteOptions{}, true},
		{"v2 parquet with sidecars", v2, checkpoint.WriteOptions{SidecarMinActions: 1}, true},
		{"v2 json", v2, checkpoint.WriteOptions{V2Format: "json"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			buildTable(t, store, tc.protocol, both)
			snap, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := checkpoint.Write(ctx, store, snap, tc.opts); err != nil {
				t.Fatal(err)
			}
			raw, err := store.Get(ctx, deltalog.LastCheckpointKey)
			if err != nil {
				t.Fatal(err)
			}
			if err := deltalog.VerifyLastCheckpoint(raw); err != nil {
				t.Fatal(err)
			}
			hint, err := deltalog.ReadLastCheckpoint(ctx, store)
			if err != nil {
				t.Fatal(err)
			}
			cpSchema := checkpointSchemaOf(t, raw)
			if !tc.want {
				if cpSchema != nil {
					t.Fatalf("checkpointSchema %s for a JSON checkpoint", cpSchema)
				}
				return
			}
			if cpSchema == nil {
				t.Fatalf("_last_checkpoint has no checkpointSchema: %s", raw)
			}
			sch, err := schema.Parse(string(cpSchema))
			if err != nil {
				t.Fatalf("checkpointSchema %s: %v", cpSchema, err)
			}
			leaves := map[string]string{}
			schemaLeaves("", sch, leaves)
			cpKey, _ := written(t, *hint)
			if got, want := slices.Sorted(maps.Keys(leaves)), parquetLeaves(t, store, cpKey); !slices.Equal(got, want) {
				t.Errorf("checkpointSchema columns\n%v\nthe file's\n%v", got, want)
			}
			var nonNull []string
			var walk func(string, *schema.StructType)
			walk = func(p string, st *schema.StructType) {
				for _, f := range st.Fields {
					if !f.Nullable {
						nonNull = append(nonNull, p+f.Name)
					}
					if s, ok := f.Type.(*schema.StructType); ok {
						walk(p+f.Name+".", s)
					}
				}
			}
			walk("", sch)
			if len(nonNull) > 0 {
				t.Errorf("fields not nullable, as Spark has none: %v", nonNull)
			}
		})
	}
}

// TestLastCheckpointSchemaMatchesSpark compares the checkpointSchema we
// write for a corpus table with the one Spark wrote for its checkpoint:
// every leaf of Spark's is in ours with the same type.
func TestLastCheckpointSchemaMatchesSpark(t *testing.T) {
	root := corpus(t)
	tableDir := filepath.Join(root, "golden", "checkpoint", "delta")
	if _, err := os.Stat(tableDir); err != nil {
		t.Skip("not in the corpus")
	}
	ctx := context.Background()
	src, _ := local.New(tableDir)
	sparkRaw, err := src.Get(ctx, deltalog.LastCheckpointKey)
	if err != nil {
		t.Fatal(err)
	}
	sparkSchema := checkpointSchemaOf(t, sparkRaw)
	if sparkSchema == nil {
		t.Fatalf("Spark's _last_checkpoint has no checkpointSchema: %s", sparkRaw)
	}
	snap, err := snapshot.Load(ctx, src, deltalog.Latest)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := local.New(copyLog(t, tableDir), local.WithoutSync())
	if _, err := checkpoint.Write(ctx, store, snap, checkpoint.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ourRaw, err := store.Get(ctx, deltalog.LastCheckpointKey)
	if err != nil {
		t.Fatal(err)
	}
	leavesOf := func(raw json.RawMessage) map[string]string {
		sch, err := schema.Parse(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		out := map[string]string{}
		schemaLeaves("", sch, out)
		return out
	}
	ours := checkpointSchemaOf(t, ourRaw)
	if ours == nil {
		t.Fatalf("our _last_checkpoint has no checkpointSchema: %s", ourRaw)
	}
	compareColumns(t, leavesOf(sparkSchema), leavesOf(ours), nil)
}

// checkpointSchemaOf returns the checkpointSchema of the _last_checkpoint
// bytes raw, or nil.
func checkpointSchemaOf(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var lc struct {
		CheckpointSchema json.RawMessage `json:"checkpointSchema"`
	}
	if err := json.Unmarshal(raw, &lc); err != nil {
		t.Fatal(err)
	}
	return lc.CheckpointSchema
}

// pageKinds returns, for every leaf column of the Parquet file data, the
// kinds of its pages read from their headers: "DICTIONARY_PAGE/<encoding>"
// or "DATA_PAGE/<encoding>" ("DATA_PAGE_V2/<encoding>" for a v2 page), and
// checks that v1 data pages encode their levels with RLE and, with
// checkCRC, that every page has the CRC-32 of its bytes in its header.
func pageKinds(t *testing.T, data []byte, checkCRC bool) map[string][]string {
	t.Helper()
	f, err := parquetOpen(data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, rg := range f.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			md := cc.MetaData
			path := strings.Join(md.PathInSchema, ".")
			start := md.DataPageOffset
			if md.DictionaryPageOffset != 0 {
				start = md.DictionaryPageOffset
			}
			r := bytes.NewReader(data[start : start+md.TotalCompressedSize])
			dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r))
			for r.Len() > 0 {
				var h format.PageHeader
				if err := dec.Decode(&h); err != nil {
					t.Fatalf("%s: page header: %v", path, err)
				}
				at := int64(len(data)) - int64(len(data[start+md.TotalCompressedSize:])) - int64(r.Len())
				page := data[at : at+int64(h.CompressedPageSize)]
				if checkCRC && h.CRC != int32(crc32.ChecksumIEEE(page)) {
					t.Errorf("%s: page CRC %#x, its bytes' %#x", path, uint32(h.CRC), crc32.ChecksumIEEE(page))
				}
				if _, err := r.Seek(int64(h.CompressedPageSize), io.SeekCurrent); err != nil {
					t.Fatal(err)
				}
				var enc format.Encoding
				switch {
				case h.DictionaryPageHeader.Valid:
					enc = h.DictionaryPageHeader.V.Encoding
				case h.DataPageHeader.Valid:
					dp := h.DataPageHeader.V
					enc = dp.Encoding
					// parquet-mr names BIT_PACKED for the repetition levels
					// of a column that has none (no bytes either way).
					if dp.DefinitionLevelEncoding != format.RLE ||
						dp.RepetitionLevelEncoding != format.RLE && dp.RepetitionLevelEncoding != format.BitPacked {
						t.Errorf("%s: levels encoded %v and %v, not RLE", path, dp.DefinitionLevelEncoding, dp.RepetitionLevelEncoding)
					}
				case h.DataPageHeaderV2.Valid:
					enc = h.DataPageHeaderV2.V.Encoding
				}
				out[path] = append(out[path], h.Type.String()+"/"+enc.String())
			}
		}
	}
	return out
}

// sparkPageKinds are the page kinds of Spark's checkpoints (parquet-mr's
// v1 writer, Spark's default): DATA_PAGE (v1) pages PLAIN or, after a
// PLAIN_DICTIONARY dictionary page, PLAIN_DICTIONARY; each with its CRC
// (parquet-mr 1.12 and later).
var sparkPageKinds = []string{"DICTIONARY_PAGE/PLAIN_DICTIONARY", "DATA_PAGE/PLAIN_DICTIONARY", "DATA_PAGE/PLAIN"}

// TestWritePagesAsSpark reads the page headers of the checkpoints and
// sidecars Write makes: DATA_PAGE (v1) pages, PLAIN_DICTIONARY where a
// dictionary pays (a column of few distinct values) and PLAIN elsewhere,
// never a dictionary for booleans, RLE levels, page CRCs: what Spark's checkpoints
// hold (checked against one from the corpus when it is there), so that
// readers tested only against Spark's meet nothing new (no DATA_PAGE_V2,
// no DELTA_LENGTH_BYTE_ARRAY).
func TestWritePagesAsSpark(t *testing.T) {
	allowed := sparkPageKinds
	if root := os.Getenv("GODELTA_TESTDATA"); root != "" {
		data, err := os.ReadFile(filepath.Join(root, "golden", "dv-with-columnmapping", "delta", "_delta_log", "00000000000000000010.checkpoint.parquet"))
		if err == nil {
			var spark []string
			for _, kinds := range pageKinds(t, data, true) {
				spark = append(spark, kinds...)
			}
			for _, k := range spark {
				if !slices.Contains(allowed, k) {
					t.Errorf("Spark's checkpoint has %s pages, not in the list", k)
				}
			}
		}
	}
	v1 := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	v2 := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
		ReaderFeatures: []string{actions.FeatureV2Checkpoint},
		WriterFeatures: []string{actions.FeatureV2Checkpoint}}
	both := map[string]string{"delta.checkpoint.writeStatsAsStruct": "true"}
	for _, tc := range []struct {
		name     string
		protocol actions.Protocol
		opts     checkpoint.WriteOptions
	}{
		{"v1", v1, checkpoint.WriteOptions{}},
		{"v1 small row groups", v1, checkpoint.WriteOptions{RowGroupRows: 3}},
		{"v2 with sidecars", v2, checkpoint.WriteOptions{SidecarMinActions: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			store := memory.New()
			buildTable(t, store, tc.protocol, both)
			// Many files of a few partitions: dictionaries pay for the
			// partition values.
			var acts []actions.Action
			for i := range 200 {
				p := string(rune('a' + i%3))
				acts = append(acts, actions.Action{Add: &actions.Add{Path: "p=" + p + "/many-" + strconv.Itoa(i) + ".parquet",
					PartitionValues: map[string]string{"p": p, "q": "7"}, Size: 10, ModificationTime: 1, DataChange: true, Stats: testStats}})
			}
			data, err := actions.EncodeCommit(acts)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.PutIfAbsent(ctx, deltalog.CommitKey(3), data); err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.Load(ctx, store, deltalog.Latest)
			if err != nil {
				t.Fatal(err)
			}
			lc, err := checkpoint.Write(ctx, store, snap, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cpKey, sidecars := written(t, lc)
			dict := false
			for _, key := range append([]string{cpKey}, sidecars...) {
				data, err := store.Get(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				f, err := parquetOpen(data)
				if err != nil {
					t.Fatal(err)
				}
				boolean := map[string]bool{}
				for _, c := range f.Metadata().Schema {
					if c.Type.Valid && c.Type.V == format.Boolean {
						boolean[c.Name] = true
					}
				}
				for path, kinds := range pageKinds(t, data, true) {
					leaf := path[strings.LastIndexByte(path, '.')+1:]
					for _, k := range kinds {
						if !slices.Contains(allowed, k) {
							t.Errorf("%s: column %s has a %s page; Spark writes only %v", key, path, k, allowed)
						}
						if strings.Contains(k, "DICTIONARY") {
							dict = true
							if boolean[leaf] {
								t.Errorf("%s: boolean column %s is dictionary-encoded", key, path)
							}
						}
					}
				}
			}
			if !dict {
				t.Error("no column is dictionary-encoded, though partition values repeat")
			}
		})
	}
}
