package convert_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/convert"
	"github.com/godelta/delta/schema"
)

// Dir puts a Hive-partitioned directory of Parquet files under a Delta log.
func ExampleDir() {
	dir, _ := os.MkdirTemp("", "convert")
	defer os.RemoveAll(dir)
	type row struct {
		ID int64 `parquet:"id"`
	}
	for _, day := range []string{"2024-01-01", "2024-01-02"} {
		p := filepath.Join(dir, "day="+day, "part-0.parquet")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := parquet.WriteFile(p, []row{{1}, {2}}); err != nil {
			fmt.Println(err)
			return
		}
	}
	parts, _ := schema.ParseDDL("day DATE")
	res, err := convert.Dir(context.Background(), dir, convert.Options{PartitionSchema: parts})
	fmt.Println("version", res.Version, "files", res.Files, err)
	// Output:
	// version 0 files 2 <nil>
}
