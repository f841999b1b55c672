package ucrest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/internal/ucwire"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// Client talks to one server of the Delta-Tables API (Unity Catalog, or
// this library's catalog server). It is safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the server at baseURL, the API root such
// as http://localhost:8080/api/2.1/unity-catalog. token, when not empty,
// is sent as a bearer token. httpClient nil means http.DefaultClient.
func NewClient(baseURL, token string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), token: token, http: httpClient}
}

// APIError is an error answer of the server.
type APIError struct {
	Status int
	// Type is the DeltaErrorType the server named, if any.
	Type    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("unity catalog delta api: %d %s: %s", e.Status, e.Type, e.Message)
}

// Is makes a 404 deltaerr.ErrTableNotFound, a 409
// catalogmanaged.ErrConflict, and another 4xx but 408 and 429 a refusal,
// logstore.ErrNotWritten: the server did nothing. A 429 may come after
// the server did nothing too (too many unpublished commits), but is also
// what a proxy answers, so it stays an unknown outcome.
func (e *APIError) Is(target error) bool { return ucwire.StatusIs(e.Status, target) }

// do sends method to apiPath (with query) and body, when not nil, as JSON,
// and decodes a 2xx answer into out, when not nil.
func (c *Client) do(ctx context.Context, method, apiPath string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("ucrest: %w: %w", err, deltaerr.ErrInvalidArgument)
		}
		rd = bytes.NewReader(data)
	}
	u := c.base + apiPath
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("ucrest: %w: %w", err, deltaerr.ErrInvalidArgument)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("ucrest: %s %s: %w", method, apiPath, err)
	}
	defer resp.Body.Close()
	raw, err := ucwire.ReadAnswer(resp.Body, MaxResponse, apiPath)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &APIError{Status: resp.StatusCode}
		var er errorResponse
		if json.Unmarshal(raw, &er) == nil {
			e.Type, e.Message = er.Error.Type, er.Error.Message
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &deltaerr.CorruptError{Path: apiPath, Reason: "the server's answer is not the API's JSON", Err: err}
	}
	return nil
}

// Config asks which endpoints the server offers for catalog, and which
// protocol version it speaks (GET /delta/v1/config). It asks for
// ProtocolVersion.
func (c *Client) Config(ctx context.Context, catalog string) (CatalogConfig, error) {
	var cfg CatalogConfig
	err := c.do(ctx, http.MethodGet, V1Path+"/config", url.Values{"catalog": {catalog}, "protocol-versions": {ProtocolVersion}}, nil, &cfg)
	if err == nil && cfg.ProtocolVersion == "" {
		err = &deltaerr.CorruptError{Path: V1Path + "/config", Reason: "the answer has no protocol-version"}
	}
	return cfg, err
}

// LoadTable loads the table name: its metadata, its unpublished commits
// and its latest ratified version, as the server sent them (unchecked;
// TableClient.Commits checks them).
func (c *Client) LoadTable(ctx context.Context, name TableName) (*LoadTableResponse, error) {
	var resp LoadTableResponse
	if err := c.do(ctx, http.MethodGet, name.path(), nil, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// UpdateTable sends an update_table request and returns the table as the
// server answers it after the update.
func (c *Client) UpdateTable(ctx context.Context, name TableName, req UpdateTableRequest) (*LoadTableResponse, error) {
	var resp LoadTableResponse
	if err := c.do(ctx, http.MethodPost, name.path(), nil, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Credentials asks for storage credentials of the table name for op. A
// server without credentials to vend for the table's storage (a local
// path) answers one credential with an empty Config, as Unity Catalog
// does.
func (c *Client) Credentials(ctx context.Context, name TableName, op Operation) ([]StorageCredential, error) {
	var resp credentialsResponse
	p := name.path() + "/credentials"
	if err := c.do(ctx, http.MethodGet, p, url.Values{"operation": {string(op)}}, nil, &resp); err != nil {
		return nil, err
	}
	if resp.StorageCredentials == nil {
		return nil, &deltaerr.CorruptError{Path: p, Reason: "the answer has no storage-credentials"}
	}
	return resp.StorageCredentials, nil
}

// CreateStagingTable asks the server for the ID and location of a table
// to be created as catalog.schema.name, and what its version 0 must hold.
// The caller then writes version 0 there (StagingClient) and calls
// CreateTable.
func (c *Client) CreateStagingTable(ctx context.Context, catalog, schema, name string) (*StagingTableResponse, error) {
	var resp StagingTableResponse
	p := schemaPath(catalog, schema) + "/staging-tables"
	if err := c.do(ctx, http.MethodPost, p, nil, createStagingTableRequest{Name: name}, &resp); err != nil {
		return nil, err
	}
	if resp.TableID == "" || resp.Location == "" {
		return nil, &deltaerr.CorruptError{Path: p, Reason: "the answer has no table-id or location"}
	}
	return &resp, nil
}

// CreateTable creates (for a staged table: finalizes) the table
// req.Name in catalog.schema, whose version 0 is at req.Location, and
// returns it as load_table would.
func (c *Client) CreateTable(ctx context.Context, catalog, schema string, req CreateTableRequest) (*LoadTableResponse, error) {
	var resp LoadTableResponse
	if err := c.do(ctx, http.MethodPost, schemaPath(catalog, schema)+"/tables", nil, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Table returns the catalogmanaged.Client of the table name. uuid, when
// not empty, is the table's ID (its metadata's table-uuid, or a staged
// table's table-id): loads of another table under that name are
// deltaerr.ErrTableReplaced, and commits carry assert-table-uuid.
func (c *Client) Table(name TableName, uuid string) *TableClient {
	return &TableClient{c: c, name: name, uuid: uuid}
}

// TableClient is the catalogmanaged.Client of one table; see the package
// doc. It is safe for concurrent use.
type TableClient struct {
	c    *Client
	name TableName
	uuid string
}

var _ catalogmanaged.Client = (*TableClient)(nil)

// Commits loads the table and returns its latest ratified version and
// unpublished commits, checked: each commit must name a staged commit of
// its version and be at most the latest version. A table without
// latest-table-version (one whose commits the catalog does not keep)
// has none: Latest -1.
func (t *TableClient) Commits(ctx context.Context) (catalogmanaged.Ratified, error) {
	resp, err := t.c.LoadTable(ctx, t.name)
	if err != nil {
		return catalogmanaged.Ratified{}, err
	}
	return t.ratified(resp)
}

// ratified checks a table's answer and returns what it says of the log.
func (t *TableClient) ratified(resp *LoadTableResponse) (catalogmanaged.Ratified, error) {
	p := t.name.path()
	if t.uuid != "" && resp.Metadata.TableUUID != t.uuid {
		return catalogmanaged.Ratified{}, fmt.Errorf("ucrest: table %s is now the table %q, not %q: %w", t.name, resp.Metadata.TableUUID, t.uuid, deltaerr.ErrTableReplaced)
	}
	r := catalogmanaged.Ratified{Latest: -1}
	if resp.LatestTableVersion != nil {
		if *resp.LatestTableVersion < 0 {
			return r, &deltaerr.CorruptError{Path: p, Reason: fmt.Sprintf("latest-table-version %d", *resp.LatestTableVersion)}
		}
		r.Latest = *resp.LatestTableVersion
	}
	names := map[int64]string{}
	for _, ci := range resp.Commits {
		c, err := fromWire(p, ci)
		if err != nil {
			return catalogmanaged.Ratified{}, err
		}
		if c.Version > r.Latest {
			return catalogmanaged.Ratified{}, &deltaerr.CorruptError{Path: p, Reason: fmt.Sprintf("commit of version %d past latest-table-version %d", c.Version, r.Latest)}
		}
		if have, ok := names[c.Version]; ok {
			if have != ci.FileName {
				return catalogmanaged.Ratified{}, &deltaerr.CorruptError{Path: p, Reason: fmt.Sprintf("two commits of version %d", c.Version)}
			}
			continue
		}
		names[c.Version] = ci.FileName
		r.Commits = append(r.Commits, c)
	}
	// Unity Catalog answers newest first; the Store wants version order.
	slices.SortFunc(r.Commits, func(a, b catalogmanaged.Commit) int { return cmp.Compare(a.Version, b.Version) })
	return r, nil
}

// fromWire checks a commit of an answer at apiPath: its file name must be
// a staged commit of its version, so that no read goes outside the log's
// staging directory.
func fromWire(apiPath string, ci Commit) (catalogmanaged.Commit, error) {
	key := deltalog.StagedDir + ci.FileName
	v, _, ok := deltalog.ParseStagedName(key)
	if !ok || v != ci.Version || ci.FileSize < 0 {
		return catalogmanaged.Commit{}, &deltaerr.CorruptError{Path: apiPath,
			Reason: fmt.Sprintf("commit of version %d names %q, not a staged commit of that version", ci.Version, ci.FileName)}
	}
	return catalogmanaged.Commit{Version: ci.Version, Key: key, Size: ci.FileSize, Timestamp: ci.FileModificationTimestamp}, nil
}

// toWire is the wire form of a staged commit.
func toWire(c catalogmanaged.Commit) (Commit, error) {
	if c.Key == "" {
		return Commit{}, fmt.Errorf("ucrest: inline commits are not part of the API: %w (%w)", deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
	}
	if v, _, ok := deltalog.ParseStagedName(c.Key); !ok || v != c.Version {
		return Commit{}, fmt.Errorf("ucrest: %q is not a staged commit of version %d: %w (%w)", c.Key, c.Version, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
	}
	return Commit{Version: c.Version, Timestamp: c.Timestamp, FileName: path.Base(c.Key), FileSize: c.Size, FileModificationTimestamp: c.Timestamp}, nil
}

// requirements are what every update of the table asserts.
func (t *TableClient) requirements() []Requirement {
	if t.uuid == "" {
		return []Requirement{}
	}
	return []Requirement{{Type: AssertTableUUID, UUID: t.uuid}}
}

// Commit asks the server to ratify the staged commit c (update_table
// with add-commit): 409 is catalogmanaged.ErrConflict, a refusal
// logstore.ErrNotWritten, anything else an unknown outcome.
func (t *TableClient) Commit(ctx context.Context, c catalogmanaged.Commit) error {
	wire, err := toWire(c)
	if err != nil {
		return err
	}
	_, err = t.c.UpdateTable(ctx, t.name, UpdateTableRequest{Requirements: t.requirements(), Updates: []Update{{Action: AddCommit, Commit: &wire}}})
	if err != nil && !errors.Is(err, catalogmanaged.ErrConflict) && !logstore.IsCertainFailure(err) {
		return fmt.Errorf("%w (%w)", err, logstore.ErrOutcomeUnknown)
	}
	return err
}

// Published reports the table's commits up to version as published
// (update_table with set-latest-backfilled-version).
func (t *TableClient) Published(ctx context.Context, version int64) error {
	_, err := t.c.UpdateTable(ctx, t.name, UpdateTableRequest{Requirements: t.requirements(),
		Updates: []Update{{Action: SetLatestBackfilledVersion, LatestPublishedVersion: &version}}})
	return err
}

// StagingClient returns the catalogmanaged.Client by which version 0 of
// a staged table is written: the API ratifies no version 0 (its creator
// writes it published, then calls CreateTable), so this client knows no
// version, takes version 0 without asking the server, and refuses any
// other (logstore.ErrNotWritten). catalogmanaged.New(storage,
// StagingClient()) then writes the staged version 0 and publishes it as
// _delta_log/00000000000000000000.json; once that is done, CreateTable
// finalizes the table and Table gives the client of its later commits.
// The staging location is the table's alone (the server allocated it),
// so no other writer races for its version 0.
func (c *Client) StagingClient() catalogmanaged.Client { return stagingClient{} }

type stagingClient struct{}

func (stagingClient) Commits(context.Context) (catalogmanaged.Ratified, error) {
	return catalogmanaged.Ratified{Latest: -1}, nil
}

func (stagingClient) Commit(_ context.Context, c catalogmanaged.Commit) error {
	if c.Version != 0 {
		return fmt.Errorf("ucrest: a staged table takes only version 0, not %d: %w (%w)", c.Version, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
	}
	return nil
}

func (stagingClient) Published(context.Context, int64) error { return nil }
