package delta

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/testutil/faultstore"
	"github.com/godelta/delta/txn"
)

// TestDMLCrashFault: a DELETE or UPDATE crashed at any storage call (data
// files, the deletion vector file, the commit) leaves the table at the old
// version with the old rows, or, when the commit put was done, at the new
// version with the rows the operation leaves; every version still reads
// its rows. Both strategies.
func TestDMLCrashFault(t *testing.T) {
	for _, b := range faultBackends {
		for _, kind := range []faultstore.Kind{faultstore.Crash, faultstore.CrashAfter} {
			for _, dv := range []bool{false, true} {
				for _, op := range []string{"delete", "update"} {
					name := b.name + "/" + kind.String() + "/" + op + map[bool]string{true: "/dv", false: "/cow"}[dv]
					t.Run(name, func(t *testing.T) {
						props := map[string]string{"delta.enableDeletionVectors": "false"}
						if dv {
							props["delta.enableDeletionVectors"] = "true"
						}
						setup := func(t *testing.T) (logstore.Store, [][]int64) {
							store := b.new(t)
							_, model := faultTable(t, store, props, 2, 3)
							// ids 0..5: DELETE drops the even ones; UPDATE
							// moves them to id + 100.
							var next []int64
							for _, id := range model[len(model)-1] {
								switch {
								case id%2 == 1:
									next = append(next, id)
								case op == "update":
									next = append(next, id+100)
								}
							}
							slices.Sort(next)
							return store, append(model, next)
						}
						run := func(ctx context.Context, tbl *Table) error {
							var err error
							if op == "delete" {
								_, err = tbl.Delete(ctx, "id % 2 = 0", DMLOptions{})
							} else {
								_, err = tbl.UpdateRows(ctx, "id = id + 100", "id % 2 = 0", DMLOptions{})
							}
							return err
						}
						sweep(t, kind, setup, run, func(t *testing.T, inner logstore.Store, model [][]int64, opErr error) {
							tbl := checkVersions(t, inner, model, 0)
							snap, err := tbl.Snapshot(context.Background())
							if err != nil {
								t.Fatal(err)
							}
							if snap.Version() == int64(len(model)-1) && opErr != nil && !errors.Is(opErr, txn.ErrCommitUnknown) &&
								!errors.Is(opErr, faultstore.ErrCrashed) {
								t.Errorf("the commit landed, but the %s said %v", op, opErr)
							}
						})
					})
				}
			}
		}
	}
}
