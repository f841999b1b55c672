package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// scanAll reads every row of the table's latest version.
func scanAll(ctx context.Context, tbl *Table) (int, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	s, err := tbl.Scan(snap, ScanOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, err := range s.Rows(ctx) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// TestErrorMessages: each common failure says what happened once: the
// message names no package (the CLI adds one "delta: "), carries the
// context of each layer, names a path once, repeats no part, and still
// matches its kind. The messages before issue 25's fix are in comments.
func TestErrorMessages(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tbl, err := Create(ctx, filepath.Join(dir, "t"), TableSpec{Schema: idSchema,
		Properties: map[string]string{"delta.enableChangeDataFeed": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, longRows(1), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// withCommit returns a copy of the table with commit 2 holding data.
	withCommit := func(name, data string) *Table {
		t.Helper()
		root := filepath.Join(dir, name)
		if err := os.CopyFS(root, os.DirFS(filepath.Join(dir, "t"))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, deltalog.CommitKey(2)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Open(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	corrupt := withCommit("corrupt", "{\"commitInfo\":{}}\n{\"add\": {\"path\": \n")
	// gone: a copy of the table whose data file was deleted outside the log.
	gone := withCommit("gone", `{"commitInfo":{}}`+"\n")
	dataFile := ""
	matches, _ := filepath.Glob(filepath.Join(dir, "gone", "*.parquet"))
	if len(matches) != 1 {
		t.Fatalf("data files %v, want one", matches)
	}
	dataFile = filepath.Base(matches[0])
	if err := os.Remove(matches[0]); err != nil {
		t.Fatal(err)
	}
	// hole: a copy whose commit 1 is gone, with commit 2 after it.
	hole := withCommit("hole", `{"commitInfo":{}}`+"\n")
	if err := os.Remove(filepath.Join(dir, "hole", deltalog.CommitKey(1))); err != nil {
		t.Fatal(err)
	}
	// nested: a table with a struct column, for MERGE.
	nestedSchema, err := schema.ParseDDL("id BIGINT, s STRUCT<a: INT, b: STRING>")
	if err != nil {
		t.Fatal(err)
	}
	nested, err := Create(ctx, filepath.Join(dir, "nested"), TableSpec{Schema: nestedSchema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nested.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1),
		schema.StructValue([]schema.Value{schema.IntegerValue(1), schema.StringValue("x")})}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	flatSchema, err := schema.ParseDDL("id BIGINT, s STRING")
	if err != nil {
		t.Fatal(err)
	}
	idString, err := schema.ParseDDL("id STRING")
	if err != nil {
		t.Fatal(err)
	}
	feature := withCommit("feature", `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["fancyFeature"],"writerFeatures":["fancyFeature"]}}`+"\n")

	for _, c := range []struct {
		name string
		run  func() error
		kind error
		want string // the whole message; "" to check only the kind and prefixes
	}{
		{"missing table", func() error { _, err := Open(ctx, filepath.Join(dir, "none")); return err }, ErrTableNotFound,
			filepath.Join(dir, "none") + " has no Delta log (_delta_log/ with a commit or checkpoint): table not found"},
		{"version not found", func() error { _, err := tbl.SnapshotAt(ctx, 99); return err }, ErrVersionNotFound,
			"version 99 is after the latest version 1: version not found"},
		{"timestamp out of range", func() error { _, err := tbl.SnapshotAtTimestamp(ctx, time.Unix(0, 0)); return err }, ErrTimestampOutOfRange, ""},
		{"corrupt commit line", func() error { _, err := corrupt.Snapshot(ctx); return err }, ErrCorrupt,
			"corrupt _delta_log/00000000000000000002.json: line 2 is not a valid action: unexpected end of JSON input"},
		// Before: "data file F: corrupt table data: datafile: reading F:
		// logstore: get range "F": logstore/local: logstore: object not
		// found: stat /abs/F: no such file or directory" (ErrCorrupt).
		{"missing data file", func() error {
			_, err := scanAll(ctx, gone)
			if errors.Is(err, ErrCorrupt) {
				t.Errorf("a missing data file is ErrCorrupt: %v", err)
			}
			return err
		}, ErrFileNotFound,
			"data file " + dataFile + " is in the log but not in storage: it was deleted outside the log " +
				"(by a VACUUM with too short a retention, or by hand); restore it from a backup"},
		{"missing commit", func() error { _, err := hole.Snapshot(ctx); return err }, ErrMissingLogFile,
			"commit _delta_log/00000000000000000001.json is missing (needed for version 2): missing log file"},
		// Before: "merge: column: dml: invalid operation: invalid argument:
		// WHEN MATCHED clause 1: expr: cannot store value: invalid
		// argument: s: cannot store string in struct<a:int,b:string>".
		{"merge type mismatch", func() error {
			src := MergeRows(flatSchema, [][]schema.Value{{schema.LongValue(1), schema.StringValue("q")}})
			_, err := nested.Merge(src, "t.id = s.id").WhenMatchedUpdateAll("").Execute(ctx)
			return err
		}, ErrInvalidArgument, "merge: WHEN MATCHED clause 1: column s: cannot store string in struct<a:int,b:string>"},
		// Before: "write: rows 0 to 0: datafile: value does not fit its
		// column: invalid argument: column id, row 0: string value for a
		// column of type long".
		{"append type mismatch", func() error {
			_, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.StringValue("x")}}, WriteOptions{})
			return err
		}, ErrInvalidArgument, "rows 0 to 0: column id, row 0: string value for a column of type long"},
		// Before: "write: the rows' schema does not merge into the table's:
		// invalid argument: column id is long in the table, string in the
		// rows".
		{"append schema mismatch", func() error {
			_, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.StringValue("x")}}, WriteOptions{MergeSchema: idString})
			return err
		}, ErrInvalidArgument, "the rows' schema does not merge into the table's: column id is long in the table, string in the rows"},
		{"unknown reader feature", func() error { _, err := feature.Snapshot(ctx); return err }, ErrUnsupportedFeature,
			"table requires reader feature fancyFeature, which godelta does not support for read"},
		{"table exists", func() error { _, err := Create(ctx, filepath.Join(dir, "t"), TableSpec{Schema: idSchema}); return err }, ErrTableExists,
			"creating " + filepath.Join(dir, "t") + ": table already exists: invalid argument"},
		{"changes past the end", func() error { _, err := tbl.Changes(ctx, ChangeOptions{End: UpTo(9)}); return err }, ErrVersionNotFound,
			"end version 9 after last table version 1: version not found"},
		{"conflict", func() error {
			a, err := tbl.Begin(ctx, TxnOptions{})
			if err != nil {
				return err
			}
			b, err := tbl.Begin(ctx, TxnOptions{})
			if err != nil {
				return err
			}
			a.SetTransaction("app", 1)
			b.SetTransaction("app", 1)
			if _, err := a.Commit(ctx); err != nil {
				return err
			}
			_, err = b.Commit(ctx)
			return err
		}, ErrConflict, "concurrent transaction for the same application id by the commit of version 2: application id app (version 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if !errors.Is(err, c.kind) {
				t.Fatalf("err = %v, want %v", err, c.kind)
			}
			msg := err.Error()
			for _, prefix := range []string{"delta: ", "deltalog: ", "snapshot: ", "scan: ", "txn: "} {
				if strings.Contains(msg, prefix) {
					t.Errorf("message %q names a package (%q)", msg, prefix)
				}
			}
			// Each part of the message once: no kind or prefix repeated,
			// no path named twice.
			seen := map[string]bool{}
			for part := range strings.SplitSeq(msg, ": ") {
				if seen[part] {
					t.Errorf("message %q says %q twice", msg, part)
				}
				seen[part] = true
			}
			for _, word := range strings.Fields(msg) {
				if strings.Contains(word, "/") && strings.Count(msg, strings.Trim(word, `"():,`)) > 1 {
					t.Errorf("message %q names %s more than once", msg, word)
				}
			}
			if c.want != "" && msg != c.want {
				t.Errorf("message\n got %q\nwant %q", msg, c.want)
			}
			t.Log(msg)
		})
	}
}
