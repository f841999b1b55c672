package write

import (
	"context"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/scan"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
)

// fileRows reads the live rows of one data file of snap, in table schema
// order.
func fileRows(t *testing.T, snap *snapshot.Snapshot, add *actions.Add) [][]schema.Value {
	t.Helper()
	fr, err := scan.NewFileReader(snap, scan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]schema.Value
	err = fr.ReadFile(context.Background(), add, func(b *scan.FileBatch) error {
		for i := range b.Len {
			rows = append(rows, b.Row(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
