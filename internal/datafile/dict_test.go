package datafile_test

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// TestWriteDictionary checks dictionary encoding and its fallbacks, column
// by column, in files that parquet-go's reader and ours read back whole:
//
//   - few distinct values: every data page dictionary-encoded;
//   - distinct values: the first page does not pay, PLAIN throughout;
//   - long values, each twice: dictionary pages until the dictionary
//     would pass 1 MiB, then PLAIN pages;
//   - booleans: always PLAIN.
//
// Statistics do not depend on the encoding.
func TestWriteDictionary(t *testing.T) {
	dec := schema.DecimalType{Precision: 20, Scale: 2} // FIXED_LEN_BYTE_ARRAY
	sch := st(fld("low", schema.String), req("uniq", schema.Long), fld("big", schema.String),
		fld("f", schema.Double), fld("d", dec), fld("b", schema.Boolean), fld("n", schema.Integer), fld("c", schema.String))
	const n = 30000
	rows := make([][]schema.Value, n)
	want := make([][]string, len(sch.Fields))
	for i := range rows {
		low := fmt.Sprint("city-", i%7)
		big := strings.Repeat("x", 200) + fmt.Sprint(i/2)
		d, err := schema.DecimalValue(big0(int64(i%5)*1_000_000_000_000), dec.Precision, dec.Scale)
		if err != nil {
			t.Fatal(err)
		}
		var nv schema.Value
		nDef, nStr := 0, "null"
		if i%3 != 0 {
			nv = schema.IntegerValue(int32(i % 4))
			nDef, nStr = 1, pI32(int32(i%4))
		}
		rows[i] = []schema.Value{str(low), i64(int64(i)), str(big), schema.DoubleValue(float64(i % 3)), d, schema.BooleanValue(i%2 == 0), nv, str("same")}
		want[0] = append(want[0], lv(0, 1, pStr(low)))
		want[1] = append(want[1], lv(0, 0, pI64(int64(i))))
		want[2] = append(want[2], lv(0, 1, pStr(big)))
		want[3] = append(want[3], lv(0, 1, pF64(float64(i%3))))
		want[5] = append(want[5], lv(0, 1, pBool(i%2 == 0)))
		want[6] = append(want[6], lv(0, nDef, nStr))
		want[7] = append(want[7], lv(0, 1, pStr("same"))) // one entry: indexes of bit width 0
	}
	for _, c := range []struct {
		name string
		opts datafile.WriteOptions
	}{
		{"snappy", datafile.WriteOptions{}},
		{"none", datafile.WriteOptions{Compression: "none"}},
		{"row groups", datafile.WriteOptions{RowGroupSize: 4 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, stats := writeRows(t, sch, c.opts, rows, 4096)
			plainOpts := c.opts
			plainOpts.NoDictionary = true
			plain, plainStats := writeRows(t, sch, plainOpts, rows, 4096)
			if got, want := string(stats.JSON()), string(plainStats.JSON()); got != want {
				t.Errorf("stats %s, without a dictionary %s", got, want)
			}
			if len(data) >= len(plain) {
				t.Errorf("%d bytes with dictionaries, %d without", len(data), len(plain))
			}
			pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			for i, rg := range pf.Metadata().RowGroups {
				for _, cc := range rg.Columns {
					name := cc.MetaData.PathInSchema[0]
					pages := dataPages(t, data, cc)
					var encs []format.Encoding
					for _, h := range pages {
						if e := h.DataPageHeader.V.Encoding; !slices.Contains(encs, e) {
							encs = append(encs, e)
						}
					}
					var wantEncs []format.Encoding
					switch name {
					case "low", "f", "d", "n", "c":
						wantEncs = []format.Encoding{plainDict}
					case "uniq", "b":
						wantEncs = []format.Encoding{format.Plain}
					case "big":
						wantEncs = []format.Encoding{plainDict, format.Plain}
						if len(pages) < 3 || i > 0 {
							// A row group of 4 MiB may end before the
							// dictionary fills: not checked there.
							continue
						}
					}
					if !slices.Equal(encs, wantEncs) {
						t.Errorf("row group %d, column %s: data pages encoded %v, want %v", i, name, encs, wantEncs)
					}
				}
			}
			got := parquetGoColumns(t, data)
			for _, k := range []int{0, 1, 2, 3, 5, 6, 7} {
				compareColumns(t, []string{sch.Fields[k].Name}, got[k:k+1], want[k:k+1])
			}
			checkRows(t, readAll(t, data, sch, datafile.ReadOptions{}), rows)
		})
	}
}

// plainDict is PLAIN_DICTIONARY, whose parquet-go name is deprecated.
const plainDict = format.Encoding(2)

func big0(x int64) *big.Int { return big.NewInt(x) }
