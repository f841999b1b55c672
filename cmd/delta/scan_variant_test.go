package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestScanVariantJSON: scan shows variant columns as their JSON text, as
// Spark does, wherever they are nested (in arrays, structs and maps), in
// table and CSV output; the Spark-written corpus table holds {"key": n}
// in every variant of row n.
func TestScanVariantJSON(t *testing.T) {
	table := filepath.Join(testdata(t), "delta-rs", "spark-shredded-variant-preview-delta")
	r := runDelta("scan", table, "--limit", "2", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("scan: %d %s", r.code, r.stderr)
	}
	want := "id,v,array_of_variants,struct_of_variants,map_of_variants,array_of_struct_of_variants,struct_of_array_of_variants\n" +
		`0,"{""key"":0}","[{""key"":0}, null, {""key"":0}, null, {""key"":0}]","{{""key"":0}}","{0: {""key"":0}, nullKey: null}","[{{""key"":0}}, {null}, null, {{""key"":0}}, null, {{""key"":0}}]","{[null, {""key"":0}]}"` + "\n" +
		`1,"{""key"":1}","[{""key"":1}, null, {""key"":1}, null, {""key"":1}]","{{""key"":1}}","{1: {""key"":1}, nullKey: null}","[{{""key"":1}}, {null}, null, {{""key"":1}}, null, {{""key"":1}}]","{[null, {""key"":1}]}"` + "\n"
	if r.stdout != want {
		t.Fatalf("got\n%s\nwant\n%s", r.stdout, want)
	}
	r = runDelta("scan", table, "--limit", "1")
	if r.code != 0 || !strings.Contains(r.stdout, `{"key":0}  [{"key":0}, null`) {
		t.Fatalf("table output: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
