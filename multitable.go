package delta

import (
	"context"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/logstore"
)

// MultiTableTxn commits to several catalog-managed tables as one
// transaction: the catalog ratifies the commits of every table, or of
// none, and readers through the catalog see them together. It lifts, for
// tables one catalog manages, the limit the Delta paper states ("
// transactions are serializable only within a single table"). See
// catalogmanaged.MultiTxn for how the rounds of ratification go.
//
//	m := delta.NewMultiTableTxn(catalog) // a catalogmanaged.MultiCommitter
//	m.Table(ordersURI, ordersID, ordersClient, func(ctx context.Context, t *delta.Table) error {
//		_, err := delta.AppendStructs(ctx, t, orders, delta.WriteOptions{})
//		return err
//	})
//	m.Table(stockURI, stockID, stockClient, func(ctx context.Context, t *delta.Table) error {
//		_, err := t.UpdateRows(ctx, "qty = qty - 1", "sku = 'A1'", delta.DMLOptions{})
//		return err
//	})
//	err := m.Commit(ctx)
//
// A conflict on any table (a *ConflictError, errors.Is ErrConflict) fails
// the whole transaction and nothing is ratified.
type MultiTableTxn struct {
	m *catalogmanaged.MultiTxn
}

// NewMultiTableTxn returns a transaction over tables of the catalog that
// ratifies through committer.
func NewMultiTableTxn(committer catalogmanaged.MultiCommitter) *MultiTableTxn {
	return &MultiTableTxn{m: catalogmanaged.NewMultiTxn(committer)}
}

// Table adds the table at uri, whose catalog ID is id and whose catalog
// client is client, with the work to do on it: when Commit runs, the
// table is opened through the catalog (OpenOptions.Catalog) and work gets
// it. Work commits the table at most once (an append, a DELETE, a MERGE:
// any one commit), and should end with that commit.
func (x *MultiTableTxn) Table(uri, id string, client catalogmanaged.Client, work func(ctx context.Context, t *Table) error) {
	x.m.Join(id, client, func(ctx context.Context, c catalogmanaged.Client) error {
		t, err := OpenWith(ctx, uri, OpenOptions{Catalog: c})
		if err != nil {
			return err
		}
		defer t.Close()
		return work(ctx, t)
	})
}

// TableStore is Table for a table whose store the caller has opened: it
// is read and committed through catalogmanaged.New(store, ...), and left
// open.
func (x *MultiTableTxn) TableStore(name string, store logstore.Store, id string, client catalogmanaged.Client, work func(ctx context.Context, t *Table) error) {
	x.m.Join(id, client, func(ctx context.Context, c catalogmanaged.Client) error {
		t, err := OpenStore(ctx, name, catalogmanaged.New(store, c))
		if err != nil {
			return err
		}
		return work(ctx, t)
	})
}

// Commit runs the work of every table concurrently and has the catalog
// ratify their commits together. It returns nil when they are ratified,
// or the tables' errors joined when nothing is (see
// catalogmanaged.MultiTxn.Commit). A MultiTableTxn commits once.
func (x *MultiTableTxn) Commit(ctx context.Context) error {
	return x.m.Commit(ctx)
}
