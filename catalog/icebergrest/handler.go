// Package icebergrest serves the catalog (a catalog.Store of Delta
// tables) through the Apache Iceberg REST catalog API, so that Iceberg
// engines (iceberg-go, PyIceberg, Spark, Trino, DuckDB, ...) find the
// tables that keep UniForm Iceberg metadata and read them, and calls it
// (Client, for the CLI).
//
// # Endpoints
//
// Handler serves, under /v1 with no prefix, the routes of the Iceberg
// REST catalog OpenAPI spec (open-api/rest-catalog-open-api.yaml of
// apache/iceberg) that a catalog of existing tables needs:
//
//	GET    /v1/config                              defaults, overrides, endpoints
//	GET    /v1/namespaces[?parent=&pageToken=&pageSize=]
//	POST   /v1/namespaces                          create {namespace, properties}
//	GET    /v1/namespaces/{ns}                     load {namespace, properties}
//	HEAD   /v1/namespaces/{ns}                     204 or 404
//	DELETE /v1/namespaces/{ns}                     drop if empty: 204, 404, 409
//	GET    /v1/namespaces/{ns}/tables[?pageToken=&pageSize=]
//	GET    /v1/namespaces/{ns}/tables/{table}      LoadTableResult
//	HEAD   /v1/namespaces/{ns}/tables/{table}      204 or 404
//	POST   /v1/namespaces/{ns}/register            {name, metadata-location}
//
// Namespace levels in a path are separated by %1F (the unit separator),
// as the spec says, and /v1/config lists exactly these endpoints, so a
// client does not try the others (creating tables, Iceberg commits,
// views): those answer 406 UnsupportedOperationException. Unknown routes
// answer 404, a known route with another method 405.
//
// # Tables
//
// A table is a registered Delta table (catalog.Table). Loading it reads
// its newest UniForm metadata (metadata/vN.metadata.json beside
// _delta_log/, package iceberg) at each request: metadata-location is that
// file's URI and metadata its content, unchanged, so a load after a commit
// serves the snapshot of that commit. A registered table without Iceberg
// metadata (UniForm off) is listed but loads as 404 NoSuchTableException
// saying why.
//
// Register takes the metadata-location of an Iceberg client: a
// <root>/metadata/vN.metadata.json of a Delta table; the table root is
// registered, so later loads follow its newest metadata rather than the
// file named. As an extension it also takes the table root itself (what
// `delta catalog register` sends), for a Delta table that keeps no Iceberg
// metadata yet; the response then lacks metadata and metadata-location.
// Either way the root must hold _delta_log/.
//
// # Errors
//
// Errors use the spec's error model, {"error": {"message", "type",
// "code"}}: 400 BadRequestException (malformed JSON, invalid names or page
// tokens), 404 NoSuchNamespaceException / NoSuchTableException /
// NotFoundException, 405 and 406 UnsupportedOperationException, 409
// AlreadyExistsException / NamespaceNotEmptyException, 500
// ServiceFailureException (the message then names no internals).
// Authentication is the server's (package catalog/server).
package icebergrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/iceberg"
	"github.com/godelta/delta/logstore"
)

// MaxBody is the largest request body read, in bytes.
const MaxBody = 1 << 20

// MaxPageSize caps a listing's pageSize.
const MaxPageSize = 1000

// Endpoints are the endpoints /v1/config advertises, in the spec's
// "METHOD /v1/{prefix}/path" form.
var Endpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"POST /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"DELETE /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"POST /v1/{prefix}/namespaces/{namespace}/register",
}

// Options tune a Handler. The zero value is usable.
type Options struct {
	// Logger receives server failures (500s); nil is slog.Default().
	Logger *slog.Logger
	// Defaults are the /v1/config defaults (properties a client may
	// override); nil is none.
	Defaults map[string]string
	// CheckLocation, when set, is asked before a registration opens the
	// location it names; an error refuses the registration (a
	// catalog.ErrLocationNotAllowed one with 403). Nil allows any.
	CheckLocation func(location string) error
}

// Handler serves the Iceberg REST catalog API over a catalog.Store. It is
// safe for concurrent use; Close releases the table stores it opened.
type Handler struct {
	store catalog.Store
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux

	mu     sync.Mutex
	tables map[string]logstore.Store // by location, opened on first load
	closed bool
}

// NewHandler returns a Handler over store; the caller keeps owning store.
func NewHandler(store catalog.Store, opts Options) *Handler {
	h := &Handler{store: store, opts: opts, log: opts.Logger, tables: map[string]logstore.Store{}}
	if h.log == nil {
		h.log = slog.Default()
	}
	m := http.NewServeMux()
	m.HandleFunc("/v1/config", h.method(map[string]http.HandlerFunc{"GET": h.config}))
	m.HandleFunc("/v1/namespaces", h.method(map[string]http.HandlerFunc{"GET": h.listNamespaces, "POST": h.createNamespace}))
	m.HandleFunc("/v1/namespaces/{ns}", h.method(map[string]http.HandlerFunc{"GET": h.loadNamespace, "HEAD": h.namespaceExists, "DELETE": h.dropNamespace, "POST": nil}))
	m.HandleFunc("/v1/namespaces/{ns}/properties", h.method(map[string]http.HandlerFunc{"POST": nil}))
	m.HandleFunc("/v1/namespaces/{ns}/tables", h.method(map[string]http.HandlerFunc{"GET": h.listTables, "POST": nil}))
	m.HandleFunc("/v1/namespaces/{ns}/tables/{table}", h.method(map[string]http.HandlerFunc{"GET": h.loadTable, "HEAD": h.tableExists, "POST": nil, "DELETE": nil}))
	m.HandleFunc("/v1/namespaces/{ns}/register", h.method(map[string]http.HandlerFunc{"POST": h.register}))
	m.HandleFunc("/v1/tables/rename", h.method(map[string]http.HandlerFunc{"POST": nil}))
	m.HandleFunc("/v1/transactions/commit", h.method(map[string]http.HandlerFunc{"POST": nil}))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "NotFoundException", "no such route: "+r.URL.Path)
	})
	h.mux = m
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Close closes the table stores the Handler opened. Requests after Close
// fail.
func (h *Handler) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for _, s := range h.tables {
		errs = append(errs, s.Close())
	}
	h.tables, h.closed = nil, true
	return errors.Join(errs...)
}

// method dispatches on the request method; a nil handler is a route of the
// spec this server does not implement (406), a missing one a method the
// route does not have (405).
func (h *Handler) method(hs map[string]http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, ok := hs[r.Method]
		switch {
		case !ok:
			var allow []string
			for m, f := range hs {
				if f != nil {
					allow = append(allow, m)
				}
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "UnsupportedOperationException", r.Method+" "+r.URL.Path+" is not allowed")
		case f == nil:
			writeError(w, http.StatusNotAcceptable, "UnsupportedOperationException", r.Method+" "+r.URL.Path+" is not supported by this catalog: it serves Delta tables, written through Delta")
		default:
			f(w, r)
		}
	}
}

// ErrorModel is the spec's ErrorModel, inside {"error": ...}.
type ErrorModel struct {
	Message string   `json:"message"`
	Type    string   `json:"type"`
	Code    int      `json:"code"`
	Stack   []string `json:"stack,omitempty"`
}

// ErrorResponse is the body of every error answer.
type ErrorResponse struct {
	Error ErrorModel `json:"error"`
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, ErrorResponse{Error: ErrorModel{Message: msg, Type: typ, Code: code}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers err with its status and type. Errors of no known kind are
// logged and answered 500 without detail.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code, typ := http.StatusInternalServerError, "ServiceFailureException"
	switch {
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		code, typ = http.StatusNotFound, "NoSuchNamespaceException"
	case errors.Is(err, catalog.ErrNoSuchTable):
		code, typ = http.StatusNotFound, "NoSuchTableException"
	case errors.Is(err, catalog.ErrAlreadyExists):
		code, typ = http.StatusConflict, "AlreadyExistsException"
	case errors.Is(err, catalog.ErrNamespaceNotEmpty):
		code, typ = http.StatusConflict, "NamespaceNotEmptyException"
	case errors.Is(err, catalog.ErrLocationNotAllowed):
		code, typ = http.StatusForbidden, "ForbiddenException"
	case errors.Is(err, deltaerr.ErrInvalidArgument):
		code, typ = http.StatusBadRequest, "BadRequestException"
	}
	msg := err.Error()
	if code == http.StatusInternalServerError {
		h.log.Error("catalog: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		msg = "the catalog failed to serve the request (see its log)"
	}
	writeError(w, code, typ, msg)
}

// errBadRequest marks malformed requests (400).
func errBadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{deltaerr.ErrInvalidArgument}, args...)...)
}

// ConfigResponse is the body of GET /v1/config.
type ConfigResponse struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	Endpoints []string          `json:"endpoints,omitempty"`
}

func (h *Handler) config(w http.ResponseWriter, r *http.Request) {
	d := h.opts.Defaults
	if d == nil {
		d = map[string]string{}
	}
	writeJSON(w, http.StatusOK, ConfigResponse{Defaults: d, Overrides: map[string]string{}, Endpoints: Endpoints})
}

// pathNamespace decodes the {ns} path segment: levels joined by 0x1F.
func pathNamespace(r *http.Request) (catalog.Namespace, error) {
	ns := catalog.Namespace(strings.Split(r.PathValue("ns"), catalog.Separator))
	if err := ns.Check(); err != nil {
		return nil, err
	}
	return ns, nil
}

// page reads pageToken and pageSize.
func page(r *http.Request) (catalog.Page, error) {
	p := catalog.Page{Token: r.URL.Query().Get("pageToken")}
	if s := r.URL.Query().Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, errBadRequest("pageSize %q: want a positive integer", s)
		}
		p.Size = min(n, MaxPageSize)
	}
	return p, nil
}

// ListNamespacesResponse is the body of GET /v1/namespaces.
type ListNamespacesResponse struct {
	Namespaces    [][]string `json:"namespaces"`
	NextPageToken string     `json:"next-page-token,omitempty"`
}

func (h *Handler) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var parent catalog.Namespace
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, catalog.Separator)
		if err := parent.Check(); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	pg, err := page(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	nss, next, err := h.store.ListNamespaces(r.Context(), parent, pg)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := ListNamespacesResponse{Namespaces: [][]string{}, NextPageToken: next}
	for _, ns := range nss {
		out.Namespaces = append(out.Namespaces, ns)
	}
	writeJSON(w, http.StatusOK, out)
}

// NamespaceRequest is the body of POST /v1/namespaces and of its answer
// (and of GET /v1/namespaces/{ns}).
type NamespaceRequest struct {
	Namespace  []string          `json:"namespace"`
	Properties map[string]string `json:"properties"`
}

// decode reads a JSON body of at most MaxBody bytes into v.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxBody+1))
	if err := dec.Decode(v); err != nil {
		return errBadRequest("request body: %v", err)
	}
	if dec.InputOffset() > MaxBody {
		return errBadRequest("request body larger than %d bytes", MaxBody)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errBadRequest("request body: data after the JSON value")
	}
	return nil
}

func (h *Handler) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req NamespaceRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Properties == nil {
		req.Properties = map[string]string{}
	}
	if err := h.store.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, req)
}

func (h *Handler) loadNamespace(w http.ResponseWriter, r *http.Request) {
	ns, err := pathNamespace(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	info, err := h.store.Namespace(r.Context(), ns)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NamespaceRequest{Namespace: info.Name, Properties: info.Properties})
}

func (h *Handler) namespaceExists(w http.ResponseWriter, r *http.Request) {
	ns, err := pathNamespace(r)
	if err == nil {
		_, err = h.store.Namespace(r.Context(), ns)
	}
	h.head(w, r, err)
}

// head answers a HEAD: 204, or the error's status without a body.
func (h *Handler) head(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h.fail(w, r, err) // net/http drops the body of a HEAD answer
}

func (h *Handler) dropNamespace(w http.ResponseWriter, r *http.Request) {
	ns, err := pathNamespace(r)
	if err == nil {
		err = h.store.DropNamespace(r.Context(), ns)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// TableIdentifier is the spec's TableIdentifier.
type TableIdentifier struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// ListTablesResponse is the body of GET /v1/namespaces/{ns}/tables.
type ListTablesResponse struct {
	Identifiers   []TableIdentifier `json:"identifiers"`
	NextPageToken string            `json:"next-page-token,omitempty"`
}

func (h *Handler) listTables(w http.ResponseWriter, r *http.Request) {
	ns, err := pathNamespace(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	pg, err := page(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ids, next, err := h.store.ListTables(r.Context(), ns, pg)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := ListTablesResponse{Identifiers: []TableIdentifier{}, NextPageToken: next}
	for _, id := range ids {
		out.Identifiers = append(out.Identifiers, TableIdentifier{Namespace: id.Namespace, Name: id.Name})
	}
	writeJSON(w, http.StatusOK, out)
}

func pathTable(r *http.Request) (catalog.TableIdent, error) {
	ns, err := pathNamespace(r)
	if err != nil {
		return catalog.TableIdent{}, err
	}
	id := catalog.TableIdent{Namespace: ns, Name: r.PathValue("table")}
	return id, id.Check()
}

// LoadTableResult is the body of a table load (and of a registration).
// Metadata is the metadata file's JSON, unchanged.
type LoadTableResult struct {
	MetadataLocation string            `json:"metadata-location,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Config           map[string]string `json:"config"`
}

func (h *Handler) tableExists(w http.ResponseWriter, r *http.Request) {
	id, err := pathTable(r)
	if err == nil {
		_, err = h.store.Table(r.Context(), id)
	}
	h.head(w, r, err)
}

func (h *Handler) loadTable(w http.ResponseWriter, r *http.Request) {
	id, err := pathTable(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.store.Table(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.load(r.Context(), t, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// tableStore returns the store of the table at location, opened once.
func (h *Handler) tableStore(ctx context.Context, location string) (logstore.Store, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("catalog: handler closed")
	}
	if s, ok := h.tables[location]; ok {
		return s, nil
	}
	s, err := logstore.Open(ctx, location)
	if err != nil {
		return nil, err
	}
	h.tables[location] = s
	return s, nil
}

// load reads the newest Iceberg metadata of t. Without metadata it is
// ErrNoSuchTable when need, else a result without metadata.
func (h *Handler) load(ctx context.Context, t catalog.Table, need bool) (LoadTableResult, error) {
	res := LoadTableResult{Config: map[string]string{}}
	st, err := h.tableStore(ctx, t.Location)
	if err != nil {
		return res, err
	}
	md, err := iceberg.ReadMetadata(ctx, st)
	switch {
	case errors.Is(err, iceberg.ErrNoMetadata) && need:
		return res, fmt.Errorf("%w: %s: the Delta table at %s has no Iceberg metadata (UniForm Iceberg is off; `delta iceberg --enable` turns it on)", catalog.ErrNoSuchTable, t.Ident, logstore.RedactURI(t.Location))
	case errors.Is(err, iceberg.ErrNoMetadata):
		return res, nil
	case err != nil:
		return res, fmt.Errorf("table %s: %w", t.Ident, err)
	}
	res.MetadataLocation, res.Metadata = md.Location, md.JSON
	return res, nil
}

// RegisterTableRequest is the body of POST /v1/namespaces/{ns}/register.
type RegisterTableRequest struct {
	Name             string `json:"name"`
	MetadataLocation string `json:"metadata-location"`
	Overwrite        bool   `json:"overwrite,omitempty"`
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	ns, err := pathNamespace(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var req RegisterTableRequest
	if err := decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Overwrite {
		h.fail(w, r, errBadRequest("overwrite is not supported: drop the registration first"))
		return
	}
	id := catalog.TableIdent{Namespace: ns, Name: req.Name}
	if err := id.Check(); err != nil {
		h.fail(w, r, err)
		return
	}
	root, fromMetadata, err := TableRoot(req.MetadataLocation)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if check := h.opts.CheckLocation; check != nil {
		if err := check(root); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if err := h.checkDelta(r.Context(), root); err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.store.RegisterTable(r.Context(), catalog.Table{Ident: id, Location: root})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.load(r.Context(), t, fromMetadata)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// TableRoot returns the Delta table root a registration names: the
// directory two levels above a .../metadata/vN.metadata.json (true), or
// the location itself, without a trailing slash (false).
//
// A query (an object store's endpoint=, region=, ...) is kept on the root.
func TableRoot(loc string) (string, bool, error) {
	if loc == "" {
		return "", false, errBadRequest("metadata-location is empty")
	}
	path, query, hasQuery := strings.Cut(loc, "?")
	withQuery := func(p string) string {
		if hasQuery {
			return p + "?" + query
		}
		return p
	}
	if dir, file, ok := cutLast(path); ok && strings.HasSuffix(file, ".metadata.json") {
		if root, mdir, ok := cutLast(dir); ok && mdir == strings.TrimSuffix(iceberg.MetadataDir, "/") && root != "" {
			return withQuery(root), true, nil
		}
		return "", false, errBadRequest("metadata-location %s: not in the metadata/ directory of a table", logstore.RedactURI(loc))
	}
	return withQuery(strings.TrimRight(path, "/")), false, nil
}

func cutLast(p string) (string, string, bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+1:], true
}

// checkDelta checks that root holds a Delta table (a non-empty
// _delta_log/).
func (h *Handler) checkDelta(ctx context.Context, root string) error {
	st, err := logstore.Open(ctx, root)
	if err != nil {
		return errBadRequest("location %s: %v", logstore.RedactURI(root), err)
	}
	defer st.Close()
	for _, err := range st.List(ctx, catalog.LogDir, "") {
		if errors.Is(err, logstore.ErrNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("location %s: %w", logstore.RedactURI(root), err)
		}
		return nil
	}
	return errBadRequest("location %s: no Delta table there (no %s)", logstore.RedactURI(root), catalog.LogDir)
}
