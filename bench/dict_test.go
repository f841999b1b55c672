package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

// dictRows is the size of the string-heavy file of BenchmarkDictionary.
const dictRows = 500_000

// stringHeavy returns the columns of a string-heavy table, as event logs
// and dimension-laden fact tables are: a unique id and email, strings of
// low and middling cardinality, a long user agent from a few hundred, a
// timestamp-like string, an amount with few distinct values. Values are
// drawn from a fixed seed.
func stringHeavy() (*schema.StructType, [][]schema.Value) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long},
		{Name: "email", Type: schema.String, Nullable: true},
		{Name: "country", Type: schema.String, Nullable: true},
		{Name: "city", Type: schema.String, Nullable: true},
		{Name: "status", Type: schema.String, Nullable: true},
		{Name: "user_agent", Type: schema.String, Nullable: true},
		{Name: "day", Type: schema.String, Nullable: true},
		{Name: "amount", Type: schema.Double, Nullable: true},
	}}
	r := rand.New(rand.NewPCG(19, 4))
	agents := make([]string, 300)
	for i := range agents {
		agents[i] = fmt.Sprintf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Safari/537.36",
			90+i%40, 4000+i, r.IntN(200))
	}
	statuses := []string{"ok", "pending", "failed", "refunded", "cancelled"}
	cols := make([][]schema.Value, len(sch.Fields))
	for j := range cols {
		cols[j] = make([]schema.Value, dictRows)
	}
	for i := range dictRows {
		cols[0][i] = schema.LongValue(int64(i))
		cols[1][i] = schema.StringValue(fmt.Sprintf("user%07d@example.com", r.IntN(10_000_000)))
		cols[2][i] = schema.StringValue(fmt.Sprintf("country-%02d", r.IntN(50)))
		cols[3][i] = schema.StringValue(fmt.Sprintf("city-%04d", r.IntN(2000)))
		cols[4][i] = schema.StringValue(statuses[r.IntN(len(statuses))])
		cols[5][i] = schema.StringValue(agents[r.IntN(len(agents))])
		cols[6][i] = schema.StringValue(fmt.Sprintf("2024-%02d-%02d", 1+i*12/dictRows, 1+r.IntN(28)))
		cols[7][i] = schema.DoubleValue(float64(r.IntN(1000)) / 4)
	}
	return sch, cols
}

// BenchmarkDictionary writes the string-heavy file with dictionary
// encoding (the default) and without (PLAIN pages, as before issue 19),
// snappy-compressed, and reports the file's size; the ratio is in
// bench/RESULTS.md.
func BenchmarkDictionary(b *testing.B) {
	sch, cols := stringHeavy()
	for _, c := range []struct {
		name   string
		noDict bool
	}{{"dictionary", false}, {"plain", true}} {
		b.Run(c.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				w, err := datafile.NewWriter(&buf, sch, datafile.WriteOptions{NoDictionary: c.noDict})
				if err != nil {
					b.Fatal(err)
				}
				const batch = 8192
				part := make([][]schema.Value, len(cols))
				for start := 0; start < dictRows; start += batch {
					n := min(batch, dictRows-start)
					for j := range cols {
						part[j] = cols[j][start : start+n]
					}
					if err := w.Write(part, n); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "file-bytes")
		})
	}
}
