package uc

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/godelta/delta/catalogmanaged"
	"github.com/godelta/delta/catalogmanaged/internal/ucwire"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// maxResponse bounds the body of an answer read: a listing of commits is
// small, and a server's answer must not exhaust memory.
const maxResponse = 16 << 20

// maxPages bounds the requests of one Commits call, which pages through a
// server that limits the commits of an answer.
const maxPages = 1000

// Client talks to one Unity Catalog server (or any server of its Delta
// commits API, such as Handler). It is safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client

	mu sync.Mutex
	// uris are the locations of the tables Table handed out, by ID, for
	// CommitAll.
	uris map[string]string
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

// Table returns the catalogmanaged.Client of the table with Unity
// Catalog's id tableID at tableURI, its storage location as the catalog
// registered it.
func (c *Client) Table(tableID, tableURI string) *TableClient {
	c.mu.Lock()
	if c.uris == nil {
		c.uris = map[string]string{}
	}
	c.uris[tableID] = tableURI
	c.mu.Unlock()
	return &TableClient{c: c, id: tableID, uri: tableURI}
}

// TableClient is the catalogmanaged.Client of one table.
type TableClient struct {
	c       *Client
	id, uri string
}

// APIError is an error answer of the server.
type APIError struct {
	Status    int
	ErrorCode string
	Message   string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("unity catalog: %d %s: %s", e.Status, e.ErrorCode, e.Message)
}

// Is makes a 404 deltaerr.ErrTableNotFound, a 409
// catalogmanaged.ErrConflict, and another 4xx but 408 and 429 a refusal
// (logstore.ErrNotWritten: nothing was ratified).
func (e *APIError) Is(target error) bool { return ucwire.StatusIs(e.Status, target) }

// do sends method with body as JSON and decodes a 200 answer into out.
func (c *Client) do(ctx context.Context, method string, body, out any) error {
	return c.doAt(ctx, method, CommitsPath, body, out)
}

// doAt is do at another path of the API.
func (c *Client) doAt(ctx context.Context, method, apiPath string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+apiPath, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("unity catalog: %w: %w", err, deltaerr.ErrInvalidArgument)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("unity catalog: %s %s: %w", method, apiPath, err)
	}
	raw, err := readAnswer(resp)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &deltaerr.CorruptError{Path: apiPath, Reason: "the server's answer is not the API's JSON", Err: err}
	}
	return nil
}

// Commits asks the server for the table's latest ratified version and
// its unpublished commits, page by page.
func (t *TableClient) Commits(ctx context.Context) (catalogmanaged.Ratified, error) {
	r := catalogmanaged.Ratified{Latest: -1}
	seen := map[int64]bool{}
	start := int64(0)
	for range maxPages {
		var resp getCommitsResponse
		if err := t.c.do(ctx, http.MethodGet, getCommits{TableID: t.id, TableURI: t.uri, StartVersion: start}, &resp); err != nil {
			return catalogmanaged.Ratified{}, err
		}
		if resp.LatestTableVersion < 0 {
			return catalogmanaged.Ratified{}, &deltaerr.CorruptError{Path: CommitsPath, Reason: fmt.Sprintf("latest_table_version %d", resp.LatestTableVersion)}
		}
		r.Latest = max(r.Latest, resp.LatestTableVersion)
		next := start
		for _, ci := range resp.Commits {
			c, err := fromWire(ci)
			if err != nil {
				return catalogmanaged.Ratified{}, err
			}
			if c.Version > resp.LatestTableVersion {
				return catalogmanaged.Ratified{}, &deltaerr.CorruptError{Path: CommitsPath, Reason: fmt.Sprintf("commit of version %d past latest_table_version %d", c.Version, resp.LatestTableVersion)}
			}
			if !seen[c.Version] {
				seen[c.Version] = true
				r.Commits = append(r.Commits, c)
			}
			next = max(next, c.Version+1)
		}
		// A page that reached the latest version, or brought nothing new,
		// is the last.
		if next == start || next > r.Latest {
			sortCommits(r.Commits)
			return r, nil
		}
		start = next
	}
	return catalogmanaged.Ratified{}, fmt.Errorf("unity catalog: more than %d pages of commits: %w", maxPages, deltaerr.ErrCorrupt)
}

// fromWire checks a commit of an answer: its file name must be a staged
// commit of its version, so that no read goes outside the log's staging
// directory.
func fromWire(ci commitInfo) (catalogmanaged.Commit, error) {
	key := deltalog.StagedDir + ci.FileName
	v, _, ok := deltalog.ParseStagedName(key)
	if !ok || v != ci.Version || ci.FileSize < 0 {
		return catalogmanaged.Commit{}, &deltaerr.CorruptError{Path: CommitsPath,
			Reason: fmt.Sprintf("commit of version %d names %q, not a staged commit of that version", ci.Version, ci.FileName)}
	}
	return catalogmanaged.Commit{Version: ci.Version, Key: key, Size: ci.FileSize, Timestamp: ci.FileModificationTimestamp}, nil
}

// sortCommits puts commits in version order: a server may answer them in
// any order.
func sortCommits(cs []catalogmanaged.Commit) {
	slices.SortFunc(cs, func(a, b catalogmanaged.Commit) int { return cmp.Compare(a.Version, b.Version) })
}

// Commit asks the server to ratify the staged commit c.
func (t *TableClient) Commit(ctx context.Context, c catalogmanaged.Commit) error {
	if c.Key == "" {
		return fmt.Errorf("unity catalog: inline commits are not part of the API: %w", deltaerr.ErrInvalidArgument)
	}
	if v, _, ok := deltalog.ParseStagedName(c.Key); !ok || v != c.Version {
		return fmt.Errorf("unity catalog: %q is not a staged commit of version %d: %w", c.Key, c.Version, deltaerr.ErrInvalidArgument)
	}
	ci := &commitInfo{Version: c.Version, Timestamp: c.Timestamp, FileName: path.Base(c.Key), FileSize: c.Size, FileModificationTimestamp: c.Timestamp}
	err := t.c.do(ctx, http.MethodPost, commitRequest{TableID: t.id, TableURI: t.uri, CommitInfo: ci}, nil)
	if err != nil && !errors.Is(err, catalogmanaged.ErrConflict) && !logstore.IsCertainFailure(err) {
		return fmt.Errorf("%w (%w)", err, logstore.ErrOutcomeUnknown)
	}
	return err
}

// Published reports the table's commits up to version as published
// (Unity Catalog's backfill).
func (t *TableClient) Published(ctx context.Context, version int64) error {
	return t.c.do(ctx, http.MethodPost, commitRequest{TableID: t.id, TableURI: t.uri, LatestBackfilledVersion: &version}, nil)
}

var _ catalogmanaged.MultiCommitter = (*Client)(nil)

// CommitAll asks the server to ratify commits to several tables at once,
// all or none (catalogmanaged.MultiCommitter), at MultiCommitsPath: an
// extension of this library's catalog server, not part of Unity Catalog's
// API. Each table must have been named to Table first, which gave its
// location. The answers map as Commit's.
func (c *Client) CommitAll(ctx context.Context, commits []catalogmanaged.TableCommit) error {
	req := multiCommitRequest{Commits: make([]commitRequest, len(commits))}
	c.mu.Lock()
	for i, tc := range commits {
		uri, ok := c.uris[tc.Table]
		cm := tc.Commit
		if !ok {
			c.mu.Unlock()
			return fmt.Errorf("unity catalog: table %s was not named to Client.Table: %w (%w)", tc.Table, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
		}
		if v, _, ok := deltalog.ParseStagedName(cm.Key); !ok || v != cm.Version {
			c.mu.Unlock()
			return fmt.Errorf("unity catalog: %q is not a staged commit of version %d: %w (%w)", cm.Key, cm.Version, deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)
		}
		req.Commits[i] = commitRequest{TableID: tc.Table, TableURI: uri, CommitInfo: &commitInfo{Version: cm.Version, Timestamp: cm.Timestamp,
			FileName: path.Base(cm.Key), FileSize: cm.Size, FileModificationTimestamp: cm.Timestamp}}
	}
	c.mu.Unlock()
	err := c.doAt(ctx, http.MethodPost, MultiCommitsPath, req, nil)
	if err != nil && !errors.Is(err, catalogmanaged.ErrConflict) && !logstore.IsCertainFailure(err) {
		return fmt.Errorf("%w (%w)", err, logstore.ErrOutcomeUnknown)
	}
	return err
}

// TableInfo asks the server for the table named fullName (Unity Catalog's
// catalog.schema.table; this library's catalog server takes its
// namespace levels and name joined by dots): a missing table is
// deltaerr.ErrTableNotFound; an answer without an ID or a location is
// deltaerr.ErrCorrupt.
func (c *Client) TableInfo(ctx context.Context, fullName string) (TableInfo, error) {
	var info TableInfo
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+TablesPath+"/"+url.PathEscape(fullName), nil)
	if err != nil {
		return info, fmt.Errorf("unity catalog: %w: %w", err, deltaerr.ErrInvalidArgument)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return info, fmt.Errorf("unity catalog: GET %s: %w", TablesPath, err)
	}
	raw, err := readAnswer(resp)
	var e *APIError
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return info, fmt.Errorf("no table %s: %w", fullName, deltaerr.ErrTableNotFound)
	}
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, &deltaerr.CorruptError{Path: TablesPath, Reason: "the server's answer is not the API's JSON", Err: err}
	}
	if info.TableID == "" || info.StorageLocation == "" {
		return info, &deltaerr.CorruptError{Path: TablesPath, Reason: fmt.Sprintf("table %s: the answer has no table_id or storage_location", fullName)}
	}
	return info, nil
}

// readAnswer reads the body of an answer, bounded, and closes it; an
// answer other than 200 is an *APIError.
func readAnswer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	raw, err := ucwire.ReadAnswer(resp.Body, maxResponse, "unity catalog")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		e := &APIError{Status: resp.StatusCode}
		var er errorResponse
		if json.Unmarshal(raw, &er) == nil {
			e.ErrorCode, e.Message = er.ErrorCode, er.Message
		}
		if e.Message == "" {
			e.Message = http.StatusText(resp.StatusCode)
		}
		return nil, e
	}
	return raw, nil
}
