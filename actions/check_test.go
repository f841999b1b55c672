package actions

import (
	"errors"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

// TestDecodeRefusesForbiddenActions: each commit breaks one rule the
// protocol states for an action or a commit file, and decoding must refuse
// it with a *deltaerr.CorruptError naming the file and the line (issue 19,
// item 19). The legal cases next to them must still decode.
func TestDecodeRefusesForbiddenActions(t *testing.T) {
	const (
		proto = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
		meta  = `{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{}}}`
		add   = `{"add":{"path":"a.parquet","partitionValues":{},"size":10,"modificationTime":1,"dataChange":true}}`
	)
	tests := []struct {
		name     string
		lines    []string
		wantLine int    // 0: must decode
		wantWhy  string // in the error
	}{
		{"add without path", []string{add, `{"add":{"partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`}, 2, "add has no path"},
		{"add with empty path", []string{`{"add":{"path":"","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`}, 1, "add has no path"},
		{"add with negative size", []string{proto, `{"add":{"path":"b","partitionValues":{},"size":-1,"modificationTime":1,"dataChange":true}}`}, 2, "negative size -1"},
		{"remove without path", []string{`{"remove":{"deletionTimestamp":1,"dataChange":true}}`}, 1, "remove has no path"},
		{"remove with negative size", []string{`{"remove":{"path":"a","dataChange":true,"extendedFileMetadata":true,"partitionValues":{},"size":-7}}`}, 1, "negative size -7"},
		{"cdc with empty path", []string{`{"cdc":{"path":"","partitionValues":{},"size":1,"dataChange":false}}`}, 1, "cdc has no path"},
		{"cdc with negative size", []string{`{"cdc":{"path":"c","partitionValues":{},"size":-2,"dataChange":false}}`}, 1, "negative size -2"},
		{"sidecar without path", []string{`{"sidecar":{"sizeInBytes":1,"modificationTime":1}}`}, 1, "sidecar has no path"},
		{"two metaData", []string{proto, meta, add, meta}, 4, "metaData action more than one"},
		{"two protocol", []string{proto, "", proto}, 3, "protocol action more than one"},
		{"one of each", []string{proto, meta, add}, 0, ""},
		{"remove of any file, no size", []string{`{"remove":{"path":"never-added.parquet","deletionTimestamp":1,"dataChange":true}}`}, 0, ""},
		{"empty file of size 0", []string{`{"add":{"path":"e","partitionValues":{},"size":0,"modificationTime":1,"dataChange":true}}`}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(strings.Join(tt.lines, "\n") + "\n")
			acts, err := DecodeCommit("_delta_log/00000000000000000003.json", data)
			if tt.wantLine == 0 {
				if err != nil {
					t.Fatalf("legal commit refused: %v", err)
				}
				if err := CheckCommit(acts); err != nil {
					t.Fatalf("CheckCommit refused what decoding accepted: %v", err)
				}
				return
			}
			var ce *deltaerr.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, deltaerr.ErrCorrupt) {
				t.Fatalf("err = %v, want a *deltaerr.CorruptError", err)
			}
			if ce.Path != "_delta_log/00000000000000000003.json" {
				t.Errorf("error names %q, want the commit file", ce.Path)
			}
			if want := "line " + string(rune('0'+tt.wantLine)); ce.Reason != want {
				t.Errorf("reason %q, want %q", ce.Reason, want)
			}
			if !strings.Contains(err.Error(), tt.wantWhy) {
				t.Errorf("err = %v, want it to say %q", err, tt.wantWhy)
			}
		})
	}
}

// TestCheckCommit: the writer's form of the same rules, on actions built in
// code (txn runs it on every commit it encodes).
func TestCheckCommit(t *testing.T) {
	neg := int64(-1)
	tests := []struct {
		name string
		acts []Action
		want string // "" for legal
	}{
		{"empty add path", []Action{{Add: &Add{Size: 1}}}, "action 0: add has no path"},
		{"negative add size", []Action{{CommitInfo: &CommitInfo{}}, {Add: &Add{Path: "a", Size: -5}}}, "action 1: add a has a negative size -5"},
		{"negative remove size", []Action{{Remove: &Remove{Path: "a", Size: &neg}}}, "negative size -1"},
		{"two metaData", []Action{{Metadata: &Metadata{}}, {Metadata: &Metadata{}}}, "action 1: metaData action more than one in one commit"},
		{"two protocol", []Action{{Protocol: &Protocol{}}, {Add: &Add{Path: "a"}}, {Protocol: &Protocol{}}}, "action 2: protocol action"},
		{"legal", []Action{{Protocol: &Protocol{}}, {Metadata: &Metadata{}}, {Add: &Add{Path: "a"}}, {Remove: &Remove{Path: "b"}}}, ""},
	}
	for _, tt := range tests {
		err := CheckCommit(tt.acts)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
