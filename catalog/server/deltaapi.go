package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/ucrest"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// The server answers Unity Catalog's Delta-Tables API (package
// catalogmanaged/ucrest) under UCRoot+ucrest.V1Path, behind the server's
// token, so that this library's ucrest client, and Unity Catalog clients
// such as delta-kernel-rs's, load, create and commit its tables.
//
// # Names
//
// Unity Catalog names a table catalog.schema.table; this catalog has
// namespaces of one or more levels. The catalog is a namespace's first
// level and the schema its other levels, dotted as the CLI writes them:
// catalogs/sales/schemas/eu.retail/tables/orders is the table orders of
// the namespace sales.eu.retail. A table of a one-level namespace (as
// the warehouse scan registers <warehouse>/<ns>/<table>) has no such
// name: it is reached through the Iceberg API and the commits API of
// package catalogmanaged/uc.
//
// # Tables and versions
//
// Every table of the catalog answers with its commits: those the catalog
// ratified and holds unpublished, and its latest ratified version. A
// table whose commits the catalog has never ratified (registered from
// the warehouse, or just created) answers the latest version published
// in its _delta_log, and its first commit through the API must follow
// that version. table-type is MANAGED for a table created through the
// API or with a ratified version, EXTERNAL otherwise.
//
// Creating a managed table: staging-tables registers the name at once,
// at a new location <warehouse>/_managed/<uuid> (no namespace begins
// with '_', so it is never inside another table), and answers the
// table's ID; the client writes version 0 there, published; create table
// then checks that version 0 is there and answers the table. An EXTERNAL
// create registers the name at the location given, which must hold a
// Delta table and be inside the warehouse or an allowed location
// (Config.AllowLocations). A location's query (an object store's endpoint=, region=)
// is never shown to clients.

// serveDeltaAPI serves r when it is a request of the Delta-Tables API.
func (s *Server) serveDeltaAPI(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, UCRoot+ucrest.V1Path+"/") {
		return false
	}
	s.deltaAPI.ServeHTTP(w, r)
	return true
}

// mountDeltaAPI makes the API's handler; staged tables are placed under
// s.warehouseBase.
func (s *Server) mountDeltaAPI() {
	s.deltaAPI = http.StripPrefix(UCRoot, ucrest.Handler(deltaCatalog{s}, "", s.log))
}

// managedDir is the warehouse directory of staged tables.
const managedDir = "_managed"

// deltaCatalog is the server's catalog as ucrest.Handler sees it.
type deltaCatalog struct{ s *Server }

var _ ucrest.Catalog = deltaCatalog{}

// ident maps a three-part name onto the catalog (see Names above).
func ident(n ucrest.TableName) (catalog.TableIdent, error) {
	schema, err := catalog.ParseNamespace(n.Schema)
	if err != nil {
		return catalog.TableIdent{}, fmt.Errorf("%w (%w)", err, deltaerr.ErrInvalidArgument)
	}
	id := catalog.TableIdent{Namespace: append(catalog.Namespace{n.Catalog}, schema...), Name: n.Table}
	if err := id.Check(); err != nil {
		return id, fmt.Errorf("%w (%w)", err, deltaerr.ErrInvalidArgument)
	}
	return id, nil
}

func (c deltaCatalog) CheckCatalog(ctx context.Context, name string) error {
	_, err := c.s.store.Namespace(ctx, catalog.Namespace{name})
	return c.mapErr(ctx, name, err)
}

// mapErr gives the catalog's errors their kinds in the API.
func (c deltaCatalog) mapErr(ctx context.Context, catalogName string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		if _, cerr := c.s.store.Namespace(ctx, catalog.Namespace{catalogName}); errors.Is(cerr, catalog.ErrNoSuchNamespace) {
			return fmt.Errorf("%w: %s", ucrest.ErrNoSuchCatalog, catalogName)
		}
		return fmt.Errorf("%w (%w)", err, ucrest.ErrNoSuchSchema)
	case errors.Is(err, catalog.ErrNoSuchTable):
		return fmt.Errorf("%w (%w)", err, deltaerr.ErrTableNotFound)
	case errors.Is(err, catalog.ErrAlreadyExists):
		return fmt.Errorf("%w (%w)", err, ucrest.ErrTableExists)
	case errors.Is(err, catalog.ErrInvalidName):
		return fmt.Errorf("%w (%w)", err, deltaerr.ErrInvalidArgument)
	}
	return err
}

func (c deltaCatalog) Table(ctx context.Context, n ucrest.TableName) (ucrest.Table, error) {
	id, err := ident(n)
	if err != nil {
		return ucrest.Table{}, err
	}
	t, err := c.s.store.Table(ctx, id)
	if err != nil {
		return ucrest.Table{}, c.mapErr(ctx, n.Catalog, err)
	}
	return c.table(ctx, t)
}

// table is the API's view of the registered table t.
func (c deltaCatalog) table(ctx context.Context, t catalog.Table) (ucrest.Table, error) {
	r, err := c.s.store.ManagedCommits(ctx, t.ID)
	if err != nil {
		return ucrest.Table{}, err
	}
	typ := ucrest.External
	if r.Latest >= 0 || strings.HasPrefix(t.Location, catalog.JoinLocation(c.s.warehouseBase, managedDir)+"/") {
		typ = ucrest.Managed
	}
	shown, _, _ := strings.Cut(t.Location, "?")
	return ucrest.Table{ID: t.ID, Location: shown, Type: typ, Created: t.Created, Updated: t.Created,
		Commits: deltaCommits{s: c.s, t: t, inner: c.s.store.ManagedClient(t.ID)}}, nil
}

func (c deltaCatalog) StageTable(ctx context.Context, n ucrest.TableName) (ucrest.Table, error) {
	id, err := ident(n)
	if err != nil {
		return ucrest.Table{}, err
	}
	loc := catalog.JoinLocation(c.s.warehouseBase, managedDir, uuid.NewString())
	t, err := c.s.store.RegisterTable(ctx, catalog.Table{Ident: id, Location: loc})
	if err != nil {
		return ucrest.Table{}, c.mapErr(ctx, n.Catalog, err)
	}
	return c.table(ctx, t)
}

func (c deltaCatalog) CreateTable(ctx context.Context, n ucrest.TableName, req ucrest.CreateTableRequest) (ucrest.Table, error) {
	id, err := ident(n)
	if err != nil {
		return ucrest.Table{}, err
	}
	var t catalog.Table
	if req.TableType == ucrest.Managed {
		t, err = c.s.store.Table(ctx, id)
		if err != nil {
			return ucrest.Table{}, fmt.Errorf("%w (a managed table is created at the location its staging gave)", c.mapErr(ctx, n.Catalog, err))
		}
		shown, _, _ := strings.Cut(t.Location, "?")
		if strings.TrimSuffix(shown, "/") != strings.TrimSuffix(req.Location, "/") {
			return ucrest.Table{}, fmt.Errorf("catalog server: table %s was staged at %s, not %s: %w", id, shown, req.Location, deltaerr.ErrInvalidArgument)
		}
		if v, ok := req.Properties[ucrest.TableIDProperty]; ok && v != t.ID {
			return ucrest.Table{}, fmt.Errorf("catalog server: table %s has ID %s, not %s: %w", id, t.ID, v, deltaerr.ErrInvalidArgument)
		}
	} else {
		if err := c.s.checkLocation(req.Location); err != nil {
			return ucrest.Table{}, err
		}
		t = catalog.Table{Ident: id, Location: req.Location}
	}
	v, err := publishedLatest(ctx, t.Location)
	if err != nil {
		return ucrest.Table{}, err
	}
	if v < 0 {
		return ucrest.Table{}, fmt.Errorf("catalog server: no Delta table at %s (write its version 0 first): %w", logstore.RedactURI(req.Location), deltaerr.ErrInvalidArgument)
	}
	if req.TableType != ucrest.Managed {
		if t, err = c.s.store.RegisterTable(ctx, t); err != nil {
			return ucrest.Table{}, c.mapErr(ctx, n.Catalog, err)
		}
	}
	return c.table(ctx, t)
}

// deltaCommits is a table's commits as the API answers them: the
// catalog's, and the published log's latest version while the catalog
// has ratified none.
type deltaCommits struct {
	s     *Server
	t     catalog.Table
	inner catalogmanaged.Client
}

func (d deltaCommits) Commits(ctx context.Context) (catalogmanaged.Ratified, error) {
	r, err := d.inner.Commits(ctx)
	if err != nil || r.Latest >= 0 {
		return r, err
	}
	r.Latest, err = publishedLatest(ctx, d.t.Location)
	return r, err
}

// Commit ratifies c; the first ratified commit of a table must follow its
// published log (the database takes any version as a table's first).
func (d deltaCommits) Commit(ctx context.Context, c catalogmanaged.Commit) error {
	r, err := d.inner.Commits(ctx)
	if err != nil {
		return err
	}
	if r.Latest < 0 {
		v, err := publishedLatest(ctx, d.t.Location)
		if err != nil {
			return err
		}
		if c.Version != v+1 {
			return fmt.Errorf("catalog server: version %d of table %s does not follow its published version %d: %w", c.Version, d.t.Ident, v, catalogmanaged.ErrConflict)
		}
	}
	return d.inner.Commit(ctx, c)
}

func (d deltaCommits) Published(ctx context.Context, version int64) error {
	return d.inner.Published(ctx, version)
}

// publishedLatest is the newest commit published in the _delta_log of
// the table at location, -1 when there is none.
func publishedLatest(ctx context.Context, location string) (int64, error) {
	st, err := logstore.Open(ctx, location)
	if errors.Is(err, logstore.ErrRootNotFound) {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	defer st.Close()
	latest := int64(-1)
	for obj, err := range st.List(ctx, deltalog.LogDir, "") {
		if errors.Is(err, logstore.ErrNotFound) || errors.Is(err, logstore.ErrRootNotFound) {
			return -1, nil
		}
		if err != nil {
			return -1, err
		}
		if f, ok := deltalog.ParseName(obj.Key); ok && f.Kind == deltalog.Commit {
			latest = max(latest, f.Version)
		}
	}
	return latest, nil
}
