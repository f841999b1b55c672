package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/catalog/server"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/deltaerr"
)

// A TABLE of the form catalog://HOST[:PORT]/NAMESPACE.TABLE (catalogs://
// for HTTPS) is a table of a catalog server (delta catalog serve, or a
// Unity Catalog server with NAMESPACE.TABLE its catalog.schema.table):
// the server says where the table is and what its ID is, with the bearer
// token of $DELTA_CATALOG_TOKEN. A table with the catalogManaged feature
// is then read and committed through the server's commits API; any other
// is opened at its location as a path would be.

// catalogTableURI splits a catalog:// TABLE into the server's base URL
// and the table's name.
func catalogTableURI(uri string) (base, name string, ok bool) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return "", "", false
	}
	switch strings.ToLower(scheme) {
	case "catalog":
		scheme = "http"
	case "catalogs":
		scheme = "https"
	default:
		return "", "", false
	}
	host, name, _ := strings.Cut(rest, "/")
	return scheme + "://" + host, strings.TrimSuffix(name, "/"), true
}

// openCatalogTable opens the table name of the catalog server at base.
func openCatalogTable(ctx context.Context, base, name string, opts delta.OpenOptions) (*delta.Table, error) {
	if name == "" || !strings.Contains(name, ".") {
		return nil, fmt.Errorf("%q names no table of the catalog at %s: want catalog://HOST[:PORT]/NAMESPACE.TABLE: %w", name, base, deltaerr.ErrInvalidArgument)
	}
	client := uc.NewClient(base+server.UCRoot, os.Getenv(catalogTokenEnv), nil)
	info, err := client.TableInfo(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", base, err)
	}
	t, err := delta.OpenWith(ctx, info.StorageLocation, opts)
	if err != nil {
		return nil, err
	}
	// The rule for going through the catalog: the table says so. A
	// catalog-managed table refuses to load without its catalog, which
	// costs a listing and its protocol (no file actions are read).
	if _, err := t.Snapshot(ctx); !errors.Is(err, deltaerr.ErrCatalogManaged) {
		return t, nil
	}
	t.Close()
	opts.Catalog = client.Table(info.TableID, info.StorageLocation)
	return delta.OpenWith(ctx, info.StorageLocation, opts)
}
