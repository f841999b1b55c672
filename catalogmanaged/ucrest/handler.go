package ucrest

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/internal/ucwire"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
)

// Kinds of errors a Catalog returns, beside deltaerr.ErrTableNotFound (404
// NoSuchTableException), deltaerr.ErrInvalidArgument (400) and
// catalogmanaged.ErrConflict (409 CommitVersionConflictException).
var (
	// ErrNoSuchCatalog: the catalog of a name does not exist (404).
	ErrNoSuchCatalog = errors.New("ucrest: no such catalog")
	// ErrNoSuchSchema: the schema of a name does not exist (404).
	ErrNoSuchSchema = errors.New("ucrest: no such schema")
	// ErrTableExists: a table of that name exists already (409
	// AlreadyExistsException).
	ErrTableExists = errors.New("ucrest: table already exists")
	// ErrForbidden: the catalog refuses the request as not allowed (403),
	// such as an EXTERNAL table at a location it does not allow.
	ErrForbidden = errors.New("ucrest: forbidden")
)

// Table is what a Catalog knows of one of its tables.
type Table struct {
	// ID is the table's UUID (table-uuid), Location its root's URI as
	// clients are shown it.
	ID, Location string
	// Type is Managed or External.
	Type             string
	Created, Updated time.Time
	// Commits is the catalog's client of the table's commits: the
	// Handler answers load_table from its Commits and ratifies through
	// its Commit and Published. nil for a table whose commits the
	// catalog does not keep: it loads without commits or a latest
	// version, and takes no commit.
	Commits catalogmanaged.Client
}

// A Catalog is what a Handler serves. Its methods are safe for
// concurrent use.
type Catalog interface {
	// CheckCatalog returns ErrNoSuchCatalog unless catalog exists.
	CheckCatalog(ctx context.Context, catalog string) error
	// Table returns the table name.
	Table(ctx context.Context, name TableName) (Table, error)
	// StageTable allocates an ID and a location for the table name, to
	// be created: ErrTableExists when the name is taken.
	StageTable(ctx context.Context, name TableName) (Table, error)
	// CreateTable creates the table name from req, whose version 0 is
	// written at req.Location (for a managed table, the location its
	// staging gave).
	CreateTable(ctx context.Context, name TableName, req CreateTableRequest) (Table, error)
}

// Handler serves the Delta-Tables API at V1Path over cat; mount it under
// the API root (http.StripPrefix("/api/2.1/unity-catalog", h)). token,
// when not empty, is the bearer token every request must carry (401
// otherwise).
//
// What it answers beyond the catalog: a table's metadata carries no
// schema (columns is an empty struct: the Delta log is the schema's
// authority, as Unity Catalog itself answers when it holds none), an
// etag of the table's ID and latest version, and the table's commits and
// latest version as Table.Commits reports them. Credentials are one
// entry for the table's location with an empty config and no expiry,
// which is what Unity Catalog answers for a local path: this server
// vends none, and clients use their own. update_table applies
// add-commit, then set-latest-backfilled-version; other actions are 501
// NotImplementedException, with nothing applied.
func Handler(cat Catalog, token string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	h := &handler{cat: cat, token: token, log: log}
	mux := http.NewServeMux()
	t := V1Path + "/catalogs/{catalog}/schemas/{schema}/tables/{table}"
	mux.HandleFunc("GET "+V1Path+"/config", h.config)
	mux.HandleFunc("POST "+V1Path+"/catalogs/{catalog}/schemas/{schema}/staging-tables", h.stage)
	mux.HandleFunc("POST "+V1Path+"/catalogs/{catalog}/schemas/{schema}/tables", h.create)
	mux.HandleFunc("GET "+t, h.load)
	mux.HandleFunc("POST "+t, h.update)
	mux.HandleFunc("GET "+t+"/credentials", h.credentials)
	return h.auth(mux)
}

type handler struct {
	cat   Catalog
	token string
	log   *slog.Logger
}

func (h *handler) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+h.token)) != 1 {
			writeError(w, http.StatusUnauthorized, typeNotAuthorized, "a bearer token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func name(r *http.Request) TableName {
	return TableName{Catalog: r.PathValue("catalog"), Schema: r.PathValue("schema"), Table: r.PathValue("table")}
}

func (h *handler) config(w http.ResponseWriter, r *http.Request) {
	catalog := r.URL.Query().Get("catalog")
	if catalog == "" {
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "the catalog parameter is required")
		return
	}
	if !supportsVersion(r.URL.Query().Get("protocol-versions")) {
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "this server speaks protocol version "+ProtocolVersion+" only")
		return
	}
	if err := h.cat.CheckCatalog(r.Context(), catalog); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, CatalogConfig{Endpoints: endpoints, ProtocolVersion: ProtocolVersion})
}

// loadResponse answers the table t.
func (h *handler) loadResponse(ctx context.Context, t Table) (*LoadTableResponse, error) {
	rat := catalogmanaged.Ratified{Latest: -1}
	if t.Commits != nil {
		var err error
		if rat, err = t.Commits.Commits(ctx); err != nil {
			return nil, err
		}
	}
	resp := &LoadTableResponse{Commits: []Commit{}, Metadata: TableMetadata{
		TableType: t.Type, TableUUID: t.ID, Location: t.Location,
		CreatedTime: t.Created.UnixMilli(), UpdatedTime: t.Updated.UnixMilli(),
		Columns: json.RawMessage(`{"type":"struct","fields":[]}`), Properties: map[string]string{},
	}}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", t.ID, rat.Latest))
	resp.Metadata.Etag = hex.EncodeToString(sum[:16])
	if rat.Latest >= 0 {
		resp.LatestTableVersion = &rat.Latest
	}
	for _, c := range slices.Backward(rat.Commits) {
		if c.Key == "" || c.Version > rat.Latest {
			continue // an inline commit has no file to name
		}
		resp.Commits = append(resp.Commits, Commit{Version: c.Version, Timestamp: c.Timestamp, FileName: c.Key[len(deltalog.StagedDir):],
			FileSize: c.Size, FileModificationTimestamp: c.Timestamp})
	}
	return resp, nil
}

func (h *handler) load(w http.ResponseWriter, r *http.Request) {
	t, err := h.cat.Table(r.Context(), name(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.loadResponse(r.Context(), t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) update(w http.ResponseWriter, r *http.Request) {
	var req UpdateTableRequest
	if !decode(w, r, &req) {
		return
	}
	var add *Commit
	var backfilled *int64
	for _, u := range req.Updates {
		switch {
		case u.Action == AddCommit && u.Commit != nil && add == nil:
			add = u.Commit
		case u.Action == SetLatestBackfilledVersion && u.LatestPublishedVersion != nil && backfilled == nil:
			backfilled = u.LatestPublishedVersion
		case u.Action == AddCommit || u.Action == SetLatestBackfilledVersion:
			writeError(w, http.StatusBadRequest, typeBadRequest, fmt.Sprintf("%s: given twice or without its value", u.Action))
			return
		default:
			writeError(w, http.StatusNotImplemented, typeNotImplemented, fmt.Sprintf("update action %q is not supported by this server", u.Action))
			return
		}
	}
	t, err := h.cat.Table(r.Context(), name(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if t.Commits == nil && (add != nil || backfilled != nil) {
		writeError(w, http.StatusBadRequest, typeInvalidParameter, fmt.Sprintf("the catalog keeps no commits of table %s", name(r)))
		return
	}
	for _, q := range req.Requirements {
		switch q.Type {
		case AssertTableUUID:
			if q.UUID != t.ID {
				writeError(w, http.StatusConflict, typeRequirementConflict, fmt.Sprintf("table %s is %s, not %s", name(r), t.ID, q.UUID))
				return
			}
		case AssertEtag:
			cur, err := h.loadResponse(r.Context(), t)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			if q.Etag != cur.Metadata.Etag {
				writeError(w, http.StatusConflict, typeRequirementConflict, "the table's etag changed")
				return
			}
		default:
			writeError(w, http.StatusBadRequest, typeBadRequest, fmt.Sprintf("requirement type %q is unknown", q.Type))
			return
		}
	}
	if add != nil {
		c, err := fromWire(r.URL.Path, *add)
		if err != nil {
			writeError(w, http.StatusBadRequest, typeInvalidParameter, err.Error())
			return
		}
		if err := t.Commits.Commit(r.Context(), c); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if backfilled != nil {
		// Publication cannot pass the latest ratified version: the
		// catalog would forget commits nobody published. The latest only
		// grows, so checking first is safe.
		rat, err := t.Commits.Commits(r.Context())
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if *backfilled < 0 || *backfilled > rat.Latest {
			writeError(w, http.StatusBadRequest, typeInvalidParameter, fmt.Sprintf("latest-published-version %d is not within 0..%d, the latest ratified version", *backfilled, rat.Latest))
			return
		}
		if err := t.Commits.Published(r.Context(), *backfilled); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	resp, err := h.loadResponse(r.Context(), t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) credentials(w http.ResponseWriter, r *http.Request) {
	op := Operation(r.URL.Query().Get("operation"))
	if op != Read && op != ReadWrite {
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "operation must be READ or READ_WRITE")
		return
	}
	t, err := h.cat.Table(r.Context(), name(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, credentialsResponse{StorageCredentials: []StorageCredential{{Prefix: t.Location, Operation: op, Config: map[string]string{}}}})
}

func (h *handler) stage(w http.ResponseWriter, r *http.Request) {
	var req createStagingTableRequest
	if !decode(w, r, &req) {
		return
	}
	if req.Name == "" {
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "name is required")
		return
	}
	n := TableName{Catalog: r.PathValue("catalog"), Schema: r.PathValue("schema"), Table: req.Name}
	t, err := h.cat.StageTable(r.Context(), n)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	id := t.ID
	writeJSON(w, http.StatusOK, StagingTableResponse{
		TableID: t.ID, TableType: Managed, Location: t.Location,
		StorageCredentials: []StorageCredential{{Prefix: t.Location, Operation: ReadWrite, Config: map[string]string{}}},
		RequiredProtocol: Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"catalogManaged"}, WriterFeatures: []string{"catalogManaged", "inCommitTimestamp"}},
		RequiredProperties: map[string]*string{TableIDProperty: &id, "delta.enableInCommitTimestamps": new("true")},
	})
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	var req CreateTableRequest
	if !decode(w, r, &req) {
		return
	}
	switch {
	case req.Name == "" || req.Location == "":
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "name and location are required")
		return
	case req.TableType != Managed && req.TableType != External:
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "table-type must be MANAGED or EXTERNAL")
		return
	case len(req.Columns) == 0 || req.Protocol.MinReaderVersion < 1 || req.Protocol.MinWriterVersion < 1:
		writeError(w, http.StatusBadRequest, typeInvalidParameter, "columns and protocol are required")
		return
	}
	n := TableName{Catalog: r.PathValue("catalog"), Schema: r.PathValue("schema"), Table: req.Name}
	t, err := h.cat.CreateTable(r.Context(), n, req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	resp, err := h.loadResponse(r.Context(), t)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// decode reads a JSON request body into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	status, msg, ok := ucwire.DecodeRequest(r, maxRequest, v)
	if !ok {
		writeError(w, status, typeBadRequest, msg)
	}
	return ok
}

// fail answers err with the status its kind calls for.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNoSuchCatalog):
		writeError(w, http.StatusNotFound, typeNoSuchCatalog, err.Error())
	case errors.Is(err, ErrNoSuchSchema):
		writeError(w, http.StatusNotFound, typeNoSuchSchema, err.Error())
	case errors.Is(err, deltaerr.ErrTableNotFound):
		writeError(w, http.StatusNotFound, typeNoSuchTable, err.Error())
	case errors.Is(err, ErrTableExists):
		writeError(w, http.StatusConflict, typeAlreadyExists, err.Error())
	case errors.Is(err, catalogmanaged.ErrConflict):
		writeError(w, http.StatusConflict, typeCommitConflict, err.Error())
	case errors.Is(err, ErrForbidden):
		writeError(w, http.StatusForbidden, typeForbidden, err.Error())
	case errors.Is(err, deltaerr.ErrInvalidArgument):
		writeError(w, http.StatusBadRequest, typeInvalidParameter, err.Error())
	default:
		h.log.ErrorContext(r.Context(), "ucrest: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, typeInternal, "internal error")
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, errorResponse{Error: errorModel{Message: msg, Type: typ, Code: status}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
