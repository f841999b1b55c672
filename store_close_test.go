package delta

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/logstore/memory"
)

// TestTableClose checks who owns the store: Close of a Table from Open or
// Create closes the store it opened, Close of one from OpenStore leaves the
// caller's store open.
func TestTableClose(t *testing.T) {
	ctx := t.Context()
	uri := "memory://TestTableClose"
	created, err := Create(ctx, uri, TableSpec{Schema: allTypesSchema()})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if err := created.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := created.Snapshot(ctx); !errors.Is(err, logstore.ErrClosed) {
		t.Errorf("Snapshot after Close = %v, want ErrClosed", err)
	}
	// Another Open of the same memory table has a store of its own.
	if _, err := opened.Snapshot(ctx); err != nil {
		t.Errorf("Snapshot of a second Table after the first was closed: %v", err)
	}
	if err := opened.Close(); err != nil {
		t.Fatal(err)
	}
	if err := opened.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}

	store := memory.Named("TestTableClose")
	tbl, err := OpenStore(ctx, uri, store)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Snapshot(ctx); err != nil {
		t.Errorf("Snapshot after Close of an OpenStore Table = %v, want the caller's store still open", err)
	}
	if _, err := Open(ctx, filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrTableNotFound) {
		t.Errorf("Open of an empty directory = %v, want ErrTableNotFound", err)
	}
}

// TestResolveUnknownScheme checks the message for a scheme no imported
// backend registered.
func TestResolveUnknownScheme(t *testing.T) {
	_, err := Resolve("ftp://user:secret@host/t")
	if !errors.Is(err, ErrUnsupportedScheme) || !errors.Is(err, logstore.ErrUnknownScheme) {
		t.Fatalf("Resolve(ftp://...) = %v, want ErrUnsupportedScheme", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "registered: ") || !strings.Contains(msg, "file") || strings.Contains(msg, "secret") {
		t.Errorf("message %q should list the registered schemes and hide the credentials", msg)
	}
}
