package icebergrest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/godelta/delta/catalog"
	"github.com/godelta/delta/deltaerr"
)

// Client calls an Iceberg REST catalog (this package's Handler or any
// other) for what the CLI needs. It is safe for concurrent use.
type Client struct {
	base  *url.URL // ends in /v1
	token string
	http  *http.Client
}

// ErrRemote is the error of an answer that maps to no catalog error: its
// message carries the status, type and message the catalog sent.
var ErrRemote = errors.New("catalog: the catalog failed")

// ErrBadRequest is the error of a 400 answer: the catalog refused the
// request as malformed or invalid. It matches deltaerr.ErrInvalidArgument.
var ErrBadRequest = fmt.Errorf("catalog: the catalog refused the request: %w", deltaerr.ErrInvalidArgument)

// NewClient returns a Client of the catalog at uri (http://host:port, the
// root the /v1 routes are under), sending token as a bearer token when it
// is not empty; hc nil is http.DefaultClient.
func NewClient(uri, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("catalog: URI %q: want http://HOST:PORT or https://HOST: %w", uri, deltaerr.ErrInvalidArgument)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return &Client{base: u.JoinPath("v1"), token: token, http: hc}, nil
}

// do sends a request and decodes a 2xx JSON answer into out (nil: none),
// or turns an error answer into the catalog's error kinds.
func (c *Client) do(ctx context.Context, method string, path []string, query url.Values, body, out any) error {
	u := c.base.JoinPath(path...)
	// JoinPath escapes each segment for the path; keep %1F as sent.
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	rsp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	defer rsp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(rsp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("catalog: reading the answer to %s %s: %w", method, u.Path, err)
	}
	if rsp.StatusCode/100 != 2 {
		var e ErrorResponse
		_ = json.Unmarshal(data, &e)
		msg := e.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(string(data))
		}
		kind := ErrRemote
		switch {
		case e.Error.Type == "NoSuchNamespaceException":
			kind = catalog.ErrNoSuchNamespace
		case e.Error.Type == "NoSuchTableException":
			kind = catalog.ErrNoSuchTable
		case e.Error.Type == "NamespaceNotEmptyException":
			kind = catalog.ErrNamespaceNotEmpty
		case rsp.StatusCode == http.StatusConflict:
			kind = catalog.ErrAlreadyExists
		case rsp.StatusCode == http.StatusBadRequest:
			kind = ErrBadRequest
		}
		return fmt.Errorf("%w: %s %s: %d %s: %s", kind, method, u.Path, rsp.StatusCode, e.Error.Type, msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%w: %s %s: the answer is not the JSON expected: %v", ErrRemote, method, u.Path, err)
		}
	}
	return nil
}

// pathNS encodes ns as a path segment.
func pathNS(ns catalog.Namespace) string { return ns.Key() }

// ListNamespaces lists the children of parent (top-level ones for nil),
// all pages.
func (c *Client) ListNamespaces(ctx context.Context, parent catalog.Namespace) ([]catalog.Namespace, error) {
	var out []catalog.Namespace
	q := url.Values{}
	if len(parent) > 0 {
		q.Set("parent", parent.Key())
	}
	for pages := 0; ; pages++ {
		var rsp ListNamespacesResponse
		if err := c.do(ctx, http.MethodGet, []string{"namespaces"}, q, nil, &rsp); err != nil {
			return nil, err
		}
		for _, ns := range rsp.Namespaces {
			out = append(out, ns)
		}
		if rsp.NextPageToken == "" || rsp.NextPageToken == q.Get("pageToken") {
			return out, nil
		}
		q.Set("pageToken", rsp.NextPageToken)
	}
}

// ListTables lists the tables of ns, all pages.
func (c *Client) ListTables(ctx context.Context, ns catalog.Namespace) ([]catalog.TableIdent, error) {
	var out []catalog.TableIdent
	q := url.Values{}
	for {
		var rsp ListTablesResponse
		if err := c.do(ctx, http.MethodGet, []string{"namespaces", pathNS(ns), "tables"}, q, nil, &rsp); err != nil {
			return nil, err
		}
		for _, id := range rsp.Identifiers {
			out = append(out, catalog.TableIdent{Namespace: id.Namespace, Name: id.Name})
		}
		if rsp.NextPageToken == "" || rsp.NextPageToken == q.Get("pageToken") {
			return out, nil
		}
		q.Set("pageToken", rsp.NextPageToken)
	}
}

// CreateNamespace creates ns with props.
func (c *Client) CreateNamespace(ctx context.Context, ns catalog.Namespace, props map[string]string) error {
	if props == nil {
		props = map[string]string{}
	}
	return c.do(ctx, http.MethodPost, []string{"namespaces"}, nil, NamespaceRequest{Namespace: ns, Properties: props}, nil)
}

// RegisterTable registers the Delta table at location (its root, or a
// metadata/vN.metadata.json of it) as id, and returns the catalog's
// answer.
func (c *Client) RegisterTable(ctx context.Context, id catalog.TableIdent, location string) (LoadTableResult, error) {
	var res LoadTableResult
	err := c.do(ctx, http.MethodPost, []string{"namespaces", pathNS(id.Namespace), "register"}, nil,
		RegisterTableRequest{Name: id.Name, MetadataLocation: location}, &res)
	return res, err
}

// LoadTable loads id.
func (c *Client) LoadTable(ctx context.Context, id catalog.TableIdent) (LoadTableResult, error) {
	var res LoadTableResult
	err := c.do(ctx, http.MethodGet, []string{"namespaces", pathNS(id.Namespace), "tables", id.Name}, nil, nil, &res)
	return res, err
}
