package datafile_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

// tableMeta is what the corpus test needs of a table's log: the latest
// schema, its partition columns and its column mapping mode.
type tableMeta struct {
	schema     *schema.StructType
	partitions []string
	mode       schema.ColumnMappingMode
}

// readMeta returns the last metaData action of the table's JSON commits.
func readMeta(t *testing.T, root string) tableMeta {
	t.Helper()
	commits, err := filepath.Glob(filepath.Join(root, "_delta_log", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(commits)
	var meta tableMeta
	for _, p := range commits {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var line struct {
				MetaData *struct {
					SchemaString     string            `json:"schemaString"`
					PartitionColumns []string          `json:"partitionColumns"`
					Configuration    map[string]string `json:"configuration"`
				} `json:"metaData"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.MetaData == nil {
				continue
			}
			st, err := schema.Parse(line.MetaData.SchemaString)
			if err != nil {
				t.Fatalf("%s: schema: %v", p, err)
			}
			mode, err := schema.ParseColumnMappingMode(line.MetaData.Configuration[tableconfig.KeyColumnMappingMode])
			if err != nil {
				t.Fatal(err)
			}
			meta = tableMeta{schema: st, partitions: line.MetaData.PartitionColumns, mode: mode}
		}
		fh.Close()
	}
	if meta.schema == nil {
		t.Fatalf("%s: no metaData", root)
	}
	return meta
}

// dataSchema is the schema of the data files: the table schema without
// its partition columns, with physical names.
func (m tableMeta) dataSchema(t *testing.T) *schema.StructType {
	t.Helper()
	phys, err := m.schema.PhysicalSchema(m.mode)
	if err != nil {
		t.Fatal(err)
	}
	out := &schema.StructType{}
	for i, f := range phys.Fields {
		if !slices.ContainsFunc(m.partitions, func(p string) bool { return strings.EqualFold(p, m.schema.Fields[i].Name) }) {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}

// parquetFiles lists the .parquet files under dir, leaving out the log.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "_delta_log" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func openPath(t *testing.T, p string) *datafile.File {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return openBytes(t, b)
}

// TestCorpus reads the data files of real tables with their table's
// schema and, where the table has an expected/ folder, compares the rows
// with it (read through Schema and Read) as multisets.
func TestCorpus(t *testing.T) {
	corpus := corpusDir(t)
	tables := []struct {
		dir      string // under the corpus
		root     string // table root under dir
		expected bool
		minRows  int
	}{
		{"golden/parquet-all-types", "delta", true, 1},
		{"golden/parquet-all-types-legacy-format", "delta", true, 1},
		{"golden/parquet-decimal-type", "delta", true, 1},
		{"golden/parquet-decimal-dictionaries", "delta", true, 1},
		{"golden/decimal-various-scale-precision", "delta", true, 1},
		{"golden/data-reader-map", "delta", true, 1},
		{"golden/data-reader-nested-struct", "delta", true, 1},
		{"golden/data-reader-array-primitives", "delta", true, 1},
		{"golden/kernel-timestamp-int96", "delta", true, 1},
		{"kernel-rs/unshredded-variant", "", false, 1},
		{"kernel-rs/type-widening", "", false, 1},
	}
	for _, tc := range tables {
		t.Run(tc.dir, func(t *testing.T) {
			root := filepath.Join(corpus, tc.dir, tc.root)
			meta := readMeta(t, root)
			want := meta.dataSchema(t)
			var got []string
			for _, p := range parquetFiles(t, root) {
				got = append(got, readRows(t, openPath(t, p), want, datafile.ReadOptions{})...)
			}
			if len(got) < tc.minRows {
				t.Fatalf("read %d rows", len(got))
			}
			if !tc.expected {
				if testing.Verbose() {
					for _, r := range got[:min(len(got), 5)] {
						t.Log(r)
					}
				}
				return
			}
			var exp []string
			for _, p := range parquetFiles(t, filepath.Join(corpus, tc.dir, "expected")) {
				f := openPath(t, p)
				st, err := f.Schema()
				if err != nil {
					t.Fatalf("%s: Schema: %v", p, err)
				}
				// The expected rows hold the partition columns too; keep
				// the data columns, in the data schema's order.
				proj := &schema.StructType{}
				for _, wf := range want.Fields {
					ef, ok := st.FieldFold(wf.Name)
					if !ok {
						t.Fatalf("%s: expected rows lack column %s", p, wf.Name)
					}
					proj.Fields = append(proj.Fields, *ef)
				}
				exp = append(exp, readRows(t, f, proj, datafile.ReadOptions{})...)
			}
			if !sameMultiset(got, exp) {
				slices.Sort(got)
				slices.Sort(exp)
				for i := range max(len(got), len(exp)) {
					var g, e string
					if i < len(got) {
						g = got[i]
					}
					if i < len(exp) {
						e = exp[i]
					}
					if g != e {
						t.Errorf("row %d:\n got  %s\n want %s", i, g, e)
						break
					}
				}
				t.Fatalf("%d rows read, %d expected; they differ", len(got), len(exp))
			}
		})
	}
}

// TestCorpusDerived compares projected scans of flat tables with the
// rows that kernel-rs's tests assert (derived-expected/), formatted with
// Value.String, which matches arrow's display for these types.
func TestCorpusDerived(t *testing.T) {
	corpus := corpusDir(t)
	for _, name := range []string{"type-widening"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(corpus, "derived-expected", "kernel-rs", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Cases []struct {
					Kind      string
					Version   *int64
					Predicate *string
					Columns   []string
					Expected  struct {
						Rows [][]*string
					}
				}
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(corpus, "kernel-rs", name)
			full := readMeta(t, root).dataSchema(t)
			checked := 0
			for _, c := range doc.Cases {
				if c.Kind != "scan" || c.Version != nil || c.Predicate != nil || len(c.Columns) == 0 {
					continue
				}
				want := &schema.StructType{}
				for _, col := range c.Columns {
					f, ok := full.Field(col)
					if !ok {
						t.Fatalf("no column %s", col)
					}
					want.Fields = append(want.Fields, *f)
				}
				var got, exp []string
				for _, p := range parquetFiles(t, root) {
					got = append(got, readRows(t, openPath(t, p), want, datafile.ReadOptions{})...)
				}
				for _, r := range c.Expected.Rows {
					cells := make([]string, len(r))
					for i, v := range r {
						cells[i] = "null"
						if v != nil {
							cells[i] = *v
						}
					}
					exp = append(exp, "["+strings.Join(cells, ", ")+"]")
				}
				if !sameMultiset(got, exp) {
					t.Errorf("columns %v:\n got  %v\n want %v", c.Columns, got, exp)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no case checked")
			}
		})
	}
}
