package actions

import (
	"errors"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

func TestDecodeCommit(t *testing.T) {
	data := `{"commitInfo":{"timestamp":1,"operation":"WRITE","custom":{"x":1}}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2,"futureField":true}}

{"add":{"path":"a%20b","partitionValues":{"p":null,"q":"1"},"size":3,"modificationTime":4,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":4,"sizeInBytes":40,"cardinality":6}}}
{"someFutureAction":{"k":1}}
{"remove":{"path":"a","dataChange":false}}
`
	acts, err := DecodeCommit("c.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) != 4 {
		t.Fatalf("got %d actions, want 4 (blank line and unknown action skipped)", len(acts))
	}
	if ci := acts[0].CommitInfo; ci == nil || ci.Operation != "WRITE" || !strings.Contains(string(ci.Raw), "custom") {
		t.Errorf("commitInfo = %+v", ci)
	}
	add := acts[2].Add
	if add == nil || add.PartitionValues["p"] != "" || add.PartitionValues["q"] != "1" {
		t.Fatalf("add = %+v", add)
	}
	if got := add.DeletionVector.UniqueID(); got != "uab^-aqEH.-t@S}K{vb[*k^@4" {
		t.Errorf("UniqueID = %q", got)
	}
	for _, bad := range []string{`{"add":`, `not json`, `{"add":{"size":"big"}}`} {
		_, err := DecodeCommit("bad.json", []byte(bad+"\n"))
		var ce *deltaerr.CorruptError
		if !errors.Is(err, deltaerr.ErrCorrupt) || !errors.As(err, &ce) || ce.Path != "bad.json" {
			t.Errorf("%q: err = %v, want a CorruptError naming the file", bad, err)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	in := []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}},
		{Txn: &Txn{AppID: "app", Version: 7}},
		{DomainMetadata: &DomainMetadata{Domain: "d", Configuration: "{}"}},
	}
	b, err := EncodeCommit(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}
{"txn":{"appId":"app","version":7}}
{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}
`
	if string(b) != want {
		t.Errorf("encoded:\n%s\nwant:\n%s", b, want)
	}
	if _, err := EncodeCommit([]Action{{}}); !errors.Is(err, deltaerr.ErrInvalidArgument) {
		t.Errorf("empty action: %v", err)
	}
}
