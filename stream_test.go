package delta

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

func TestAppendAppTransaction(t *testing.T) {
	ctx := context.Background()
	sch, _ := schema.ParseDDL("id BIGINT")
	tbl, err := Create(ctx, t.TempDir(), TableSpec{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	rows := [][]schema.Value{{schema.LongValue(1)}}
	opts := WriteOptions{AppID: "etl", AppVersion: 4}
	res, err := tbl.AppendRows(ctx, rows, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []int64{4, 3} {
		opts.AppVersion = v
		if _, err := tbl.AppendRows(ctx, rows, opts); !errors.Is(err, ErrAppVersionCommitted) {
			t.Fatalf("replay of version %d: %v, want ErrAppVersionCommitted", v, err)
		}
	}
	if v, ok, err := tbl.AppVersion(ctx, "etl"); v != 4 || !ok || err != nil {
		t.Fatalf("AppVersion = %d %v %v", v, ok, err)
	}
	if _, err := tbl.OverwriteRows(ctx, rows, OverwriteOptions{WriteOptions: WriteOptions{AppID: "etl", AppVersion: 9}}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("overwrite with an app id: %v", err)
	}
	// The commit holds the txn with the rows: a stream from it sees both.
	src, err := tbl.Stream(ctx, StreamOptions{Start: stream.FromVersion(res.Version)})
	if err != nil {
		t.Fatal(err)
	}
	b, ok, err := src.TryNext(ctx)
	if err != nil || !ok {
		t.Fatalf("stream: %v %v", ok, err)
	}
	n := 0
	for _, err := range b.Rows(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("stream read %d rows, want 1", n)
	}
	snap, _ := tbl.Snapshot(ctx)
	if snap.Version() != res.Version {
		t.Fatalf("replays committed: version %d, want %d", snap.Version(), res.Version)
	}
	validateLog(t, tbl)
}
