package deltalog_test

import (
	"testing"

	"github.com/godelta/delta/deltalog"
)

func TestStagedNames(t *testing.T) {
	const id = "016ae953-37a9-438e-8683-9a9a4a79a395"
	key := deltalog.StagedCommitKey(7, id)
	if key != "_delta_log/_staged_commits/00000000000000000007."+id+".json" {
		t.Fatalf("StagedCommitKey = %s", key)
	}
	tests := []struct {
		key     string
		version int64
		uuid    string
		ok      bool
	}{
		{key, 7, id, true},
		{"_delta_log/_staged_commits/00000000000000000010.7a980438-cb67-4b89-82d2-86f73239b6d6.json", 10, "7a980438-cb67-4b89-82d2-86f73239b6d6", true},
		{"_delta_log/00000000000000000007.json", 0, "", false},                       // a published commit
		{"_delta_log/_staged_commits/00000000000000000007.json", 0, "", false},       // no uuid
		{"_delta_log/_staged_commits/0000000000000000007.x.json", 0, "", false},      // 19 digits
		{"_delta_log/_staged_commits/00000000000000000007.a.b.json", 0, "", false},   // a dot in the uuid
		{"_delta_log/_staged_commits/00000000000000000007.x.crc", 0, "", false},      // not json
		{"_delta_log/_staged_commits/sub/00000000000000000007.x.json", 0, "", false}, // nested
	}
	for _, tc := range tests {
		v, u, ok := deltalog.ParseStagedName(tc.key)
		if v != tc.version || u != tc.uuid || ok != tc.ok {
			t.Errorf("ParseStagedName(%s) = %d %q %v, want %d %q %v", tc.key, v, u, ok, tc.version, tc.uuid, tc.ok)
		}
	}
	// A staged commit is not a log file of the listing.
	if _, ok := deltalog.ParseName(key); ok {
		t.Errorf("ParseName(%s) parses a staged commit as a log file", key)
	}
}
