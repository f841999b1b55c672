package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// convert --json prints the stable document main.go documents.
func TestConvertJSON(t *testing.T) {
	type rec struct {
		ID int64 `parquet:"id"`
	}
	dir := t.TempDir()
	var size int64
	for i, name := range []string{"a.parquet", "b.parquet"} {
		f := filepath.Join(dir, name)
		if err := parquet.WriteFile(f, []rec{{int64(i)}}); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	r := mustRun(t, "convert", dir, "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("convert --json printed %q: %v", r.stdout, err)
	}
	if doc["version"] != float64(0) || doc["numConvertedFiles"] != float64(2) || doc["sizeInBytes"] != float64(size) || len(doc) != 3 {
		t.Errorf("convert --json = %v, want version 0, 2 files, %d bytes", doc, size)
	}
}

// alter --json prints the stable document main.go documents.
func TestAlterJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t")
	mustRun(t, "create", dir, "--schema", "id BIGINT")
	for v, op := range [][]string{{"set", "delta.appendOnly=true"}, {"add-column", "n INT"}} {
		r := mustRun(t, append([]string{"alter", "--json", dir}, op...)...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("alter --json printed %q: %v", r.stdout, err)
		}
		if doc["operation"] != op[0] || doc["committed"] != true || doc["version"] != float64(v+1) || len(doc) != 3 {
			t.Errorf("alter --json = %v, want operation %s, committed, version %d", doc, op[0], v+1)
		}
	}
}
