// Package conformance runs godelta against a corpus of real Delta tables
// written by Spark, Databricks and delta-rs, and compares what it reads with
// what the reference implementations' own tests expect.
//
// The corpus is a directory laid out like shared/testdata: an index.json
// listing the tables, their roots and their expectations, and the tables
// themselves (see its MANIFEST.md). Its location comes from the environment
// variable GODELTA_TESTDATA, or else ../shared/testdata beside the checkout.
// Nothing of a particular corpus is built in: the same harness runs any
// directory with the same index format.
//
// Every case goes through the public API of package delta only, as a user's
// program would. Run it with
//
//	go test ./conformance/ -run . -count=1 -v
//
// The last line it prints is "conformance: N passed, M failed, K skipped".
package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Index is the machine-readable manifest of a corpus (index.json).
type Index struct {
	Format int          `json:"format"`
	Set    string       `json:"set"`
	Tables []IndexTable `json:"tables"`
}

// IndexTable is one table folder of the corpus.
type IndexTable struct {
	Folder     string `json:"folder"`
	TableRoots []string
	// Protocol is, per root, the latest protocol action (null when the
	// table has none).
	Protocol        []*ProtocolJSON `json:"protocol"`
	Features        []string        `json:"features"`
	Expected        []Expected      `json:"expected"`
	ExpectedFailure *string         `json:"expected_failure"`
}

// UnmarshalJSON maps the snake_case key.
func (t *IndexTable) UnmarshalJSON(b []byte) error {
	type plain IndexTable
	var p struct {
		plain
		Roots []string `json:"table_roots"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*t = IndexTable(p.plain)
	t.TableRoots = p.Roots
	return nil
}

// ProtocolJSON is a protocol action as the index records it.
type ProtocolJSON struct {
	MinReaderVersion int32    `json:"minReaderVersion"`
	MinWriterVersion int32    `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures"`
	WriterFeatures   []string `json:"writerFeatures"`
}

// Expected is one expectation of a table: a folder of Spark-written parquet
// rows ("parquet") or a file of derived cases ("derived-json").
type Expected struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	Rows int64  `json:"rows"`
	// Version is, for per-version parquet expectations, "v<N>", "latest",
	// or a description of a writer step.
	Version string   `json:"version"`
	Schema  []string `json:"schema"`
}

// Derived is a derived-expected JSON file.
type Derived struct {
	Table string            `json:"table"`
	Cases []json.RawMessage `json:"cases"`
}

// Case is the common part of a derived case; kind-specific fields are
// decoded from the raw case by each checker.
type Case struct {
	Kind    string          `json:"kind"`
	Version *int64          `json:"version"`
	Root    string          `json:"root"`
	Note    string          `json:"note"`
	Raw     json.RawMessage `json:"-"`
}

// Root returns the corpus directory and whether it exists.
func Root() (string, bool) {
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		// Tests run in internal/conformance; the corpus is beside the
		// checkout.
		dir = filepath.Join("..", "..", "..", "shared", "testdata")
	}
	_, err := os.Stat(filepath.Join(dir, "index.json"))
	return dir, err == nil
}

// LoadIndex reads dir/index.json.
func LoadIndex(dir string) (*Index, error) {
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, fmt.Errorf("conformance: %s/index.json: %w", dir, err)
	}
	return &idx, nil
}
