// Package exampleenv holds what the streaming examples share: opening the
// queue table, from a path or an s3:// URI on a loopback test server only.
package exampleenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/godelta/delta"
	_ "github.com/godelta/delta/logstore/s3" // s3:// tables
	"github.com/godelta/delta/schema"
)

// Schema is the queue table's schema: a producer's batch number, the row's
// number in it, when it was produced, and a payload.
const Schema = "batch BIGINT NOT NULL, seq BIGINT NOT NULL, produced_at TIMESTAMP NOT NULL, payload STRING"

// ErrNotLoopback refuses an S3 endpoint that is not on this machine: the
// examples are meant for the local test server (scripts/test-servers.sh).
var ErrNotLoopback = errors.New("the examples only talk to an S3 test server on 127.0.0.1 (pass ?endpoint=http://127.0.0.1:PORT)")

// CheckURI refuses an s3:// table whose endpoint is not a loopback address,
// so that an example never reaches a real cloud account, and turns off the
// SDK's EC2 metadata lookup.
func CheckURI(uri string) error {
	if !strings.HasPrefix(uri, "s3://") && !strings.HasPrefix(uri, "s3a://") {
		return nil
	}
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	u, err := url.Parse(uri)
	if err != nil {
		return err
	}
	ep := u.Query().Get("endpoint")
	if ep == "" {
		ep = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if ep == "" {
		ep = os.Getenv("AWS_ENDPOINT_URL")
	}
	e, err := url.Parse(ep)
	if err != nil || e.Hostname() == "" {
		return fmt.Errorf("%s: %w", uri, ErrNotLoopback)
	}
	ip := net.ParseIP(e.Hostname())
	if (ip == nil || !ip.IsLoopback()) && e.Hostname() != "localhost" {
		return fmt.Errorf("%s: endpoint %s: %w", uri, e.Host, ErrNotLoopback)
	}
	return nil
}

// Open opens the queue table at uri, creating it when it does not exist
// and create is set.
func Open(ctx context.Context, uri string, create bool) (*delta.Table, error) {
	if err := CheckURI(uri); err != nil {
		return nil, err
	}
	t, err := delta.Open(ctx, uri)
	if errors.Is(err, delta.ErrTableNotFound) && create {
		sch, err := schema.ParseDDL(Schema)
		if err != nil {
			return nil, err
		}
		t, err = delta.Create(ctx, uri, delta.TableSpec{Schema: sch, Name: "queue"})
		if errors.Is(err, delta.ErrTableExists) { // another process created it first
			return delta.Open(ctx, uri)
		}
		return t, err
	}
	return t, err
}
