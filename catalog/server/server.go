// Package server is the catalog server `delta catalog serve` runs: it
// opens the catalog's state (an embedded SQLite database, package
// catalog/sqlite, or through Config.OpenDB a PostgreSQL database several
// servers share, package catalog/postgres), registers the Delta tables of a warehouse
// (catalog.RegisterWarehouse), and serves the Iceberg REST catalog API
// (package catalog/icebergrest) at the root path, behind an optional
// bearer token. Unity Catalog's commits API (package catalogmanaged/uc)
// and its Delta-Tables API (package catalogmanaged/ucrest, deltaapi.go)
// are mounted beside it under UCRoot, on the same port and behind the
// same token.
//
// The warehouse and the tables may be on any store whose backend the
// program links (logstore.Open; cmd/delta links them all). A warehouse
// URI's query (an S3 endpoint=, region=, ...) is kept on the locations of
// the tables found in it, never shown to clients.
//
// # Authentication
//
// With a Token, every request must carry "Authorization: Bearer TOKEN";
// any other answers 401 NotAuthorizedException (with WWW-Authenticate:
// Bearer), compared in constant time. Without one the server is open:
// listen on loopback, or put it behind a proxy that authenticates.
//
// # Lifetime
//
// Open returns a Server that holds the database; Close releases it.
// Serve answers on a listener until its context ends, then stops
// accepting and lets requests in flight finish (ShutdownGrace at most).
package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/catalog/icebergrest"
	"github.com/godelta/delta/catalog/sqlite"
	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/uc"
	"github.com/godelta/delta/catalogmanaged/ucrest"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/location"
	"github.com/godelta/delta/logstore"
)

// DefaultDBName is the database's file name in a local warehouse when
// Config.DB is empty. Names beginning with '_' are never a namespace.
const DefaultDBName = "_delta_catalog.db"

// ShutdownGrace is how long Serve lets requests in flight finish once its
// context ends.
const ShutdownGrace = 2 * time.Second

// Config configures a Server.
type Config struct {
	// Warehouse is the URI of the warehouse whose tables are registered
	// at start: <Warehouse>/<namespace>/<table>/_delta_log/.
	Warehouse string
	// DB is the path of the SQLite database file; "" puts it in the
	// warehouse (DefaultDBName), which must then be a local directory.
	// ":memory:" keeps the state in memory only. A postgres:// or
	// postgresql:// URL names a PostgreSQL database, which several
	// servers (replicas) may share; it needs OpenDB.
	DB string
	// OpenDB, when not nil, opens DB instead of package catalog/sqlite:
	// postgres.Open for a PostgreSQL URL. This package links no
	// PostgreSQL driver itself, so that a program serving SQLite does not
	// carry one.
	OpenDB func(ctx context.Context, db string) (*catalog.SQLStore, error)
	// Token, when not empty, is the bearer token every request must
	// carry.
	Token string
	// AllowLocations are the URIs, besides the warehouse, inside which
	// clients may register tables (Iceberg's register, the Delta-Tables
	// API's EXTERNAL create). A location elsewhere is refused before the
	// server opens it (catalog.ErrLocationNotAllowed, 403): the server
	// reads a registered table with its own credentials and serves its
	// data's locations, so a client must not point it at any place it
	// can reach. Compared by location.Within: a ".." does not climb out,
	// and an object store's query (endpoint=, region=) must be the same.
	AllowLocations []string
	// Logger receives the server's log; nil is slog.Default().
	Logger *slog.Logger
}

// Server is an open catalog: its database and its HTTP handler. It is
// safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   *catalog.SQLStore
	handler *icebergrest.Handler
	// commits serves Unity Catalog's Delta commits API under UCRoot.
	commits http.Handler
	// deltaAPI serves its Delta-Tables API (deltaapi.go); warehouseBase
	// is the warehouse URI staged tables are placed under.
	deltaAPI      http.Handler
	warehouseBase string
	// Registered is what the warehouse scan at Open found.
	Registered catalog.WarehouseResult
	// DBPath is the database file opened (a PostgreSQL URL without its
	// credentials).
	DBPath string
}

// ErrConfig: a Config that cannot be served. It matches
// deltaerr.ErrInvalidArgument.
var ErrConfig = fmt.Errorf("catalog server: %w", deltaerr.ErrInvalidArgument)

// Open opens the database and registers the warehouse's tables. The
// caller must Close the Server.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Warehouse == "" {
		return nil, fmt.Errorf("%w: no warehouse", ErrConfig)
	}
	wh, err := logstore.Open(ctx, cfg.Warehouse)
	if err != nil {
		return nil, err
	}
	defer wh.Close()
	db := cfg.DB
	if db == "" {
		dir, ok := localDir(wh.URI())
		if !ok {
			return nil, fmt.Errorf("%w: the warehouse %s is not a local directory: say where the database goes (--db)", ErrConfig, logstore.RedactURI(cfg.Warehouse))
		}
		db = filepath.Join(dir, DefaultDBName)
	}
	var store *catalog.SQLStore
	switch {
	case cfg.OpenDB != nil:
		store, err = cfg.OpenDB(ctx, db)
	case IsPostgres(db):
		err = fmt.Errorf("%w: %s: this program links no PostgreSQL driver (package catalog/postgres; delta is built with it by -tags catalog_postgres)", ErrConfig, logstore.RedactURI(db))
	default:
		store, err = sqlite.Open(ctx, db)
	}
	if err != nil {
		return nil, err
	}
	if IsPostgres(db) {
		db = logstore.RedactURI(db)
	}
	res, err := catalog.RegisterWarehouse(ctx, store, cfg.Warehouse, wh, log)
	if err != nil {
		store.Close()
		return nil, err
	}
	log.Info("catalog: warehouse registered", "warehouse", logstore.RedactURI(wh.URI()), "db", db,
		"namespaces_created", res.Namespaces, "tables_registered", res.Tables, "tables_known", res.Known, "skipped", res.Skipped)
	srv := &Server{cfg: cfg, log: log, store: store, Registered: res, DBPath: db}
	srv.warehouseBase = cfg.Warehouse
	if !strings.Contains(cfg.Warehouse, "://") {
		srv.warehouseBase = strings.TrimRight(wh.URI(), "/")
	}
	srv.handler = icebergrest.NewHandler(store, icebergrest.Options{Logger: log, CheckLocation: srv.checkLocation})
	srv.commits = http.StripPrefix(UCRoot, uc.Handler(managedCatalog{srv}, ""))
	srv.mountDeltaAPI()
	return srv, nil
}

// checkLocation allows a table at loc when it is inside the warehouse or
// one of Config.AllowLocations (see there), and refuses it otherwise with
// catalog.ErrLocationNotAllowed (and ucrest.ErrForbidden, for the
// Delta-Tables API).
func (s *Server) checkLocation(loc string) error {
	for _, root := range append([]string{s.warehouseBase}, s.cfg.AllowLocations...) {
		if location.Within(root, loc) {
			return nil
		}
	}
	return &locationError{loc: logstore.RedactURI(loc)}
}

// locationError refuses a location (checkLocation): it is
// catalog.ErrLocationNotAllowed and, for the Delta-Tables API,
// ucrest.ErrForbidden.
type locationError struct{ loc string }

func (e *locationError) Error() string {
	return "catalog server: " + e.loc + " is outside the warehouse and every allowed location (--allow-location)"
}

func (e *locationError) Unwrap() []error {
	return []error{catalog.ErrLocationNotAllowed, ucrest.ErrForbidden}
}

// UCRoot is where the server answers Unity Catalog's Delta commits API
// (package catalogmanaged/uc): it ratifies the commits of the
// catalog-managed tables it has registered, named by their ID, in its
// database, so that this library's catalogmanaged/uc client, and Unity
// Catalog clients such as delta-kernel-rs's, commit through it.
const UCRoot = "/api/2.1/unity-catalog"

// managedTable is the commits client of the registered table with ID id,
// whose location must be uri.
func (s *Server) managedTable(ctx context.Context, id, uri string) (catalogmanaged.Client, error) {
	t, err := s.store.TableByID(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("%w (%w)", err, deltaerr.ErrTableNotFound)
	}
	if err != nil {
		return nil, err
	}
	if strings.TrimSuffix(t.Location, "/") != strings.TrimSuffix(uri, "/") {
		return nil, fmt.Errorf("catalog server: table %s is at %s, not %s: %w", id, t.Location, uri, deltaerr.ErrInvalidArgument)
	}
	return s.store.ManagedClient(id), nil
}

// managedCatalog is the server's catalog of managed tables for the
// commits API: one table's client, and the ratification of commits to
// several tables in one database transaction (uc.MultiCommitsPath).
type managedCatalog struct{ s *Server }

func (c managedCatalog) Table(ctx context.Context, id, uri string) (catalogmanaged.Client, error) {
	return c.s.managedTable(ctx, id, uri)
}

func (c managedCatalog) CommitAll(ctx context.Context, commits []catalogmanaged.TableCommit) error {
	return c.s.store.CommitAll(ctx, commits)
}

// tableInfo answers Unity Catalog's GET /tables/{full_name} for a table
// of the catalog, named by its namespace levels and name joined by dots:
// its ID and location, so that a client (the CLI's catalog:// tables)
// opens it and, when it is catalog-managed, commits through the commits
// API.
func (s *Server) tableInfo(w http.ResponseWriter, r *http.Request, fullName string) {
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	type ucError struct {
		ErrorCode string `json:"error_code"`
		Message   string `json:"message"`
	}
	ns, name, ok := cutLastDot(fullName)
	var id catalog.TableIdent
	if ok {
		nsParsed, err := catalog.ParseNamespace(ns)
		id, ok = catalog.TableIdent{Namespace: nsParsed, Name: name}, err == nil
	}
	if !ok || id.Check() != nil {
		answer(http.StatusBadRequest, ucError{"INVALID_ARGUMENT", fmt.Sprintf("%q is not NAMESPACE.TABLE", fullName)})
		return
	}
	t, err := s.store.Table(r.Context(), id)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) || errors.Is(err, catalog.ErrNoSuchNamespace):
		answer(http.StatusNotFound, ucError{"TABLE_NOT_FOUND", err.Error()})
		return
	case err != nil:
		s.log.ErrorContext(r.Context(), "catalog: table info", "table", fullName, "err", err)
		answer(http.StatusInternalServerError, ucError{"INTERNAL", "internal error"})
		return
	}
	answer(http.StatusOK, uc.TableInfo{Name: t.Ident.Name, SchemaName: t.Ident.Namespace.String(), FullName: t.Ident.String(),
		TableID: t.ID, StorageLocation: t.Location, TableType: "EXTERNAL", DataSourceFormat: "DELTA"})
}

// cutLastDot splits a.b.c into a.b and c.
func cutLastDot(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || i == len(s)-1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// IsPostgres tells a PostgreSQL URL (postgres:// or postgresql://) from
// a file path.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// localDir returns the directory of a file:// URI.
func localDir(uri string) (string, bool) {
	if logstore.SchemeOf(uri) != "file" {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Path == "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

// Store returns the catalog's state.
func (s *Server) Store() catalog.Store { return s.store }

// ServeHTTP authenticates the request and serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Token != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="delta catalog"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"a bearer token is required (Authorization: Bearer TOKEN)","type":"NotAuthorizedException","code":401}}`+"\n")
		return
	}
	if name, ok := strings.CutPrefix(r.URL.Path, UCRoot+uc.TablesPath+"/"); ok && r.Method == http.MethodGet {
		s.tableInfo(w, r, name)
		return
	}
	if s.serveDeltaAPI(w, r) {
		return
	}
	if strings.HasPrefix(r.URL.Path, UCRoot+"/") {
		s.commits.ServeHTTP(w, r)
		return
	}
	s.handler.ServeHTTP(w, r)
}

func (s *Server) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.Token)) == 1
}

// Serve answers on ln until ctx ends, then shuts down (see the package
// doc). It closes ln. The error is nil after a shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Close closes the table stores and the database.
func (s *Server) Close() error {
	return errors.Join(s.handler.Close(), s.store.Close())
}
