package icebergrest

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

func TestTableRoot(t *testing.T) {
	cases := []struct {
		loc, root    string
		fromMetadata bool
		bad          bool
	}{
		{"file:///w/ns/t/metadata/v3.metadata.json", "file:///w/ns/t", true, false},
		{"s3://b/p/t/metadata/00001-abc.metadata.json", "s3://b/p/t", true, false},
		{"file:///w/ns/t", "file:///w/ns/t", false, false},
		{"file:///w/ns/t/", "file:///w/ns/t", false, false},
		{"/w/ns/t", "/w/ns/t", false, false},
		{"s3://b/t?endpoint=http://127.0.0.1:9000&region=x", "s3://b/t?endpoint=http://127.0.0.1:9000&region=x", false, false},
		{"s3://b/t/metadata/v2.metadata.json?endpoint=http://h:1/", "s3://b/t?endpoint=http://h:1/", true, false},
		{"file:///w/ns/t/v3.metadata.json", "", false, true},
		{"metadata/v1.metadata.json", "", false, true},
		{"/metadata/v1.metadata.json", "", false, true},
		{"", "", false, true},
	}
	for _, c := range cases {
		root, fm, err := TableRoot(c.loc)
		if c.bad {
			if !errors.Is(err, deltaerr.ErrInvalidArgument) {
				t.Errorf("%q: got %q, %v; want a bad request", c.loc, root, err)
			}
			continue
		}
		if err != nil || root != c.root || fm != c.fromMetadata {
			t.Errorf("%q: got %q %v %v, want %q %v", c.loc, root, fm, err, c.root, c.fromMetadata)
		}
	}
}
