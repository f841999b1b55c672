package delta

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
	"github.com/godelta/delta/schema"
)

// Untrusted paths: a log that names a data, change-data or deletion-vector
// file outside the table root is refused with ErrPathEscapesRoot by scans
// and by the change data feed, and no error message carries the
// credentials of the table's URI.

// evilPaths climb out of a table whose URI is s3://bucket/t (or one with
// credentials in it).
var evilPaths = []string{
	"../outside.parquet",
	"a/../../outside.parquet",
	"%2e%2e/outside.parquet",
	"a/%2E%2E/%2e%2e/outside.parquet",
	"%2Fetc%2Fpasswd",
	"..\\outside.parquet",
	"a\\..\\..\\outside.parquet",
	"%5c..%5coutside.parquet",
	"a/b\x00.parquet",
	"a/b%00.parquet",
	"/etc/passwd",
	"//evil-host/share/x.parquet",
	"file:///etc/passwd",
	"file:/etc/passwd",
	"s3://other-bucket/t/part.parquet",
	"s3://bucket/t2/part.parquet",
	"s3://bucket/t/../other/part.parquet",
	"s3://bucket/t/%2e%2e/other/part.parquet",
	"gs://bucket/t/part.parquet",
	"https://evil.example/t/part.parquet",
}

// secrets are in the table names below and must appear in no error.
var secrets = []string{"s3cr3tPass", "SeCrEtToKeN", "tok3nValue"}

var tableNames = []string{
	"s3://bucket/t",
	"s3://AKIAUSER:s3cr3tPass@bucket/t",
	"s3://bucket/t?X-Amz-Security-Token=SeCrEtToKeN",
	"s3://user:s3cr3tPass@bucket/t?access_token=tok3nValue",
}

func TestUntrustedPathsFault(t *testing.T) {
	ctx := context.Background()
	kinds := []string{"add", "remove", "cdc", "dv"}
	for _, name := range tableNames {
		for _, kind := range kinds {
			for _, evil := range evilPaths {
				if kind == "dv" && !isAbs(evil) {
					continue // a relative DV path is a UUID, not a path
				}
				tbl, valid := pathTable(t, name)
				var acts []actions.Action
				ci := actions.Action{CommitInfo: &actions.CommitInfo{Operation: "WRITE", TxnID: "evil"}}
				switch kind {
				case "add":
					acts = []actions.Action{ci, {Add: &actions.Add{Path: evil, Size: 100, DataChange: true, PartitionValues: map[string]string{}}}}
				case "remove":
					acts = []actions.Action{ci, {Add: &actions.Add{Path: evil, Size: 100, DataChange: false, PartitionValues: map[string]string{}}}}
				case "cdc":
					acts = []actions.Action{ci, {CDC: &actions.CDC{Path: evil, Size: 100, PartitionValues: map[string]string{}}}}
				case "dv":
					a := valid
					a.DeletionVector = &actions.DeletionVector{StorageType: "p", PathOrInlineDv: evil, Offset: new(int32(1)), SizeInBytes: 40, Cardinality: 1}
					acts = []actions.Action{ci, {Remove: &actions.Remove{Path: valid.Path, DataChange: true, PartitionValues: map[string]string{}}}, {Add: &a}}
				}
				putCommit(t, tbl.Store(), 2, acts)
				if kind == "remove" {
					// The evil file is live at 2; remove it at 3, so
					// the feed reads it as deleted rows.
					putCommit(t, tbl.Store(), 3, []actions.Action{ci, {Remove: &actions.Remove{Path: evil, DataChange: true, PartitionValues: map[string]string{}}}})
				}
				check := func(what string, err error) {
					t.Helper()
					if !errors.Is(err, deltaerr.ErrPathEscapesRoot) {
						t.Errorf("%s, %s %q, table %s: %v; want ErrPathEscapesRoot", what, kind, evil, name, err)
					}
					leaks(t, err)
				}
				if kind == "add" || kind == "dv" {
					snap, err := tbl.Snapshot(ctx)
					if err != nil {
						t.Fatal(err)
					}
					s, err := tbl.Scan(snap, ScanOptions{})
					if err != nil {
						t.Fatal(err)
					}
					check("scan", drain(s.Rows(ctx)))
				}
				c, err := tbl.Changes(ctx, ChangeOptions{Start: 2})
				if err != nil {
					check("changes", err)
					continue
				}
				check("changes", drain(c.Rows(ctx)))
			}
		}
	}
}

// TestNoCredentialsInErrors: the errors of opening, reading and writing a
// table whose name carries credentials do not show them.
func TestNoCredentialsInErrors(t *testing.T) {
	ctx := context.Background()
	for _, name := range tableNames[1:] {
		_, err := OpenStore(ctx, name, memory.New())
		if err == nil {
			t.Fatal("an empty store opened as a table")
		}
		leaks(t, err)
		tbl, _ := pathTable(t, name)
		_ = tbl.Store().Put(ctx, "_delta_log/00000000000000000002.json", []byte("not json"))
		_, err = tbl.Snapshot(ctx)
		leaks(t, err)
		_, err = tbl.SnapshotAt(ctx, 99)
		leaks(t, err)
		_, err = tbl.Changes(ctx, ChangeOptions{Start: 50})
		leaks(t, err)
	}
	_, err := Open(ctx, "ftp://AKIAUSER:s3cr3tPass@host/t?access_token=tok3nValue")
	leaks(t, err)
}

func leaks(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error shows a credential: %v", err)
		}
	}
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || strings.Contains(p, "://") || strings.HasPrefix(p, "file:")
}

func drain[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// pathTable creates an unpartitioned table with change data feed and
// deletion vectors on a memory store named name, with one appended file,
// and returns it and that file's add.
func pathTable(t *testing.T, name string) (*Table, actions.Add) {
	t.Helper()
	ctx := context.Background()
	sch, err := schema.ParseDDL("id BIGINT")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := CreateStore(ctx, name, memory.New(), TableSpec{Schema: sch,
		Properties: map[string]string{"delta.enableChangeDataFeed": "true", "delta.enableDeletionVectors": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1)}, {schema.LongValue(2)}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for f, err := range snap.Files(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		return tbl, *f
	}
	t.Fatal("no file")
	return nil, actions.Add{}
}

func putCommit(t *testing.T, store logstore.Store, v int64, acts []actions.Action) {
	t.Helper()
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.PutIfAbsent(context.Background(), deltalog.CommitKey(v), data); err != nil {
		t.Fatal(err)
	}
}
