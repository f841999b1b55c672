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
)

// TestErrorMessages: each common failure says what happened once: the
// message names no package (the CLI adds one "delta: "), carries the
// context of each layer, and still matches its kind.
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
			if c.want != "" && msg != c.want {
				t.Errorf("message\n got %q\nwant %q", msg, c.want)
			}
			t.Log(msg)
		})
	}
}
