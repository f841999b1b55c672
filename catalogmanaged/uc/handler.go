package uc

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/internal/ucwire"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
)

// maxRequest bounds a request body: a commit request is small.
const maxRequest = 1 << 20

// A Catalog gives the Handler the catalogmanaged.Client of the table a
// request names. A table it does not manage is deltaerr.ErrTableNotFound;
// a tableURI other than the table's location is
// deltaerr.ErrInvalidArgument.
type Catalog interface {
	Table(ctx context.Context, tableID, tableURI string) (catalogmanaged.Client, error)
}

// A MultiCatalog is a Catalog that also ratifies commits to several of
// its tables at once; a Handler over one serves MultiCommitsPath.
type MultiCatalog interface {
	Catalog
	catalogmanaged.MultiCommitter
}

// CatalogFunc is a Catalog of a function.
type CatalogFunc func(ctx context.Context, tableID, tableURI string) (catalogmanaged.Client, error)

// Table calls f.
func (f CatalogFunc) Table(ctx context.Context, tableID, tableURI string) (catalogmanaged.Client, error) {
	return f(ctx, tableID, tableURI)
}

// Handler serves the Delta commits API at CommitsPath over cat; mount it
// under the API root (http.StripPrefix("/api/2.1/unity-catalog", h)).
// token, when not empty, is the bearer token every request must carry
// (401 otherwise).
func Handler(cat Catalog, token string) http.Handler {
	h := &handler{cat: cat, token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CommitsPath, h.getCommits)
	mux.HandleFunc("POST "+CommitsPath, h.commit)
	if mc, ok := cat.(MultiCatalog); ok {
		mux.HandleFunc("POST "+MultiCommitsPath, func(w http.ResponseWriter, r *http.Request) { h.commitAll(w, r, mc) })
	}
	return mux
}

type handler struct {
	cat   Catalog
	token string
}

func (h *handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.token == "" {
		return true
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+h.token)) == 1 {
		return true
	}
	writeError(w, http.StatusUnauthorized, codeUnauthenticated, "a bearer token is required")
	return false
}

// decode reads a JSON request body into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	status, msg, ok := ucwire.DecodeRequest(r, maxRequest, v)
	if !ok {
		writeError(w, status, codeInvalidArgument, msg)
	}
	return ok
}

func (h *handler) table(w http.ResponseWriter, r *http.Request, id, uri string) catalogmanaged.Client {
	if id == "" || uri == "" {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, "table_id and table_uri are required")
		return nil
	}
	c, err := h.cat.Table(r.Context(), id, uri)
	if err != nil {
		writeFailure(w, r, err)
		return nil
	}
	return c
}

func (h *handler) getCommits(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var req getCommits
	if !decode(w, r, &req) {
		return
	}
	if req.StartVersion < 0 || req.EndVersion != nil && *req.EndVersion < req.StartVersion {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, "start_version must be >= 0 and <= end_version")
		return
	}
	c := h.table(w, r, req.TableID, req.TableURI)
	if c == nil {
		return
	}
	rat, err := c.Commits(r.Context())
	if err != nil {
		writeFailure(w, r, err)
		return
	}
	resp := getCommitsResponse{Commits: []commitInfo{}, LatestTableVersion: max(rat.Latest, 0)}
	for _, cm := range rat.Commits {
		if cm.Key == "" || cm.Version < req.StartVersion || req.EndVersion != nil && cm.Version > *req.EndVersion {
			continue // an inline commit has no file to name
		}
		resp.Commits = append(resp.Commits, commitInfo{Version: cm.Version, Timestamp: cm.Timestamp, FileName: cm.Key[len(deltalog.StagedDir):],
			FileSize: cm.Size, FileModificationTimestamp: cm.Timestamp})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) commit(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var req commitRequest
	if !decode(w, r, &req) {
		return
	}
	if req.CommitInfo == nil && req.LatestBackfilledVersion == nil {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, "commit_info or latest_backfilled_version is required")
		return
	}
	c := h.table(w, r, req.TableID, req.TableURI)
	if c == nil {
		return
	}
	if ci := req.CommitInfo; ci != nil {
		cm, err := fromWire(*ci)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
			return
		}
		if err := c.Commit(r.Context(), cm); err != nil {
			writeFailure(w, r, err)
			return
		}
	}
	if v := req.LatestBackfilledVersion; v != nil {
		if err := c.Published(r.Context(), *v); err != nil {
			writeFailure(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// maxMultiCommits bounds the tables of one multi-table commit.
const maxMultiCommits = 1000

func (h *handler) commitAll(w http.ResponseWriter, r *http.Request, mc MultiCatalog) {
	if !h.authorized(w, r) {
		return
	}
	var req multiCommitRequest
	if !decode(w, r, &req) {
		return
	}
	if len(req.Commits) == 0 || len(req.Commits) > maxMultiCommits {
		writeError(w, http.StatusBadRequest, codeInvalidArgument, fmt.Sprintf("commits must name 1 to %d tables", maxMultiCommits))
		return
	}
	commits := make([]catalogmanaged.TableCommit, len(req.Commits))
	for i, c := range req.Commits {
		if c.CommitInfo == nil {
			writeError(w, http.StatusBadRequest, codeInvalidArgument, "each commit needs commit_info")
			return
		}
		if h.table(w, r, c.TableID, c.TableURI) == nil {
			return
		}
		cm, err := fromWire(*c.CommitInfo)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
			return
		}
		commits[i] = catalogmanaged.TableCommit{Table: c.TableID, Commit: cm}
	}
	if err := mc.CommitAll(r.Context(), commits); err != nil {
		writeFailure(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// writeFailure answers err with the status its kind calls for.
func writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, catalogmanaged.ErrConflict):
		writeError(w, http.StatusConflict, codeConflict, err.Error())
	case errors.Is(err, deltaerr.ErrTableNotFound):
		writeError(w, http.StatusNotFound, codeNotFound, err.Error())
	case errors.Is(err, deltaerr.ErrInvalidArgument):
		writeError(w, http.StatusBadRequest, codeInvalidArgument, err.Error())
	default:
		slog.ErrorContext(r.Context(), "uc: request failed", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, codeInternal, "internal error")
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorResponse{ErrorCode: code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
