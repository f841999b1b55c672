package delta_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/schema"
)

func TestRestoreTimestamp(t *testing.T) {
	ctx := context.Background()
	tbl, err := delta.Create(ctx, t.TempDir(), delta.TableSpec{
		Schema:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.Long, Nullable: true}}},
		Properties: map[string]string{"delta.enableInCommitTimestamps": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	base := time.Now().Add(time.Hour)
	for i := int64(1); i <= 3; i++ {
		ts := base.Add(time.Duration(i) * time.Minute)
		o := delta.WriteOptions{Txn: delta.TxnOptions{Clock: func() time.Time { return ts }}}
		if _, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(i)}}, o); err != nil {
			t.Fatal(err)
		}
	}
	// Between versions 1 and 2: version 1 is restored.
	at := base.Add(90 * time.Second)
	res, err := tbl.RestoreTimestamp(ctx, at, delta.TxnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Restored != 1 || res.Version != 4 {
		t.Fatalf("restored %d as %d, want 1 as 4", res.Restored, res.Version)
	}
	if got := sortedRows(t, tbl, -1); !slices.Equal(got, []string{"[1]"}) {
		t.Fatalf("rows %v", got)
	}
	hist, err := tbl.History(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := hist[0].Info.OperationParameters
	if p["version"] != nil || p["timestamp"] != at.UTC().Format("2006-01-02 15:04:05.000") {
		t.Fatalf("parameters %v", p)
	}
	// A version that does not exist fails before anything is committed.
	if _, err := tbl.RestoreVersion(ctx, 42, delta.TxnOptions{}); !errors.Is(err, delta.ErrVersionNotFound) {
		t.Fatalf("restore to 42: %v", err)
	}
}
