package testutil

import "github.com/godelta/delta/logstore"

// uriStore is a store that says it lives at another URI.
type uriStore struct {
	logstore.Store
	uri string
}

func (u *uriStore) URI() string            { return u.uri }
func (u *uriStore) Unwrap() logstore.Store { return u.Store }

// AtURI returns store as if it lived at uri: its URI method says so, and
// a table on it resolves absolute paths against uri (see package
// location). Tests use it to put an in-memory table at s3://bucket/t.
func AtURI(store logstore.Store, uri string) logstore.Store {
	return &uriStore{Store: store, uri: uri}
}
