package deltalog

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

// listing builds a sorted listing from short names: "3" is commit 3,
// "3.cp" a classic checkpoint, "3.cp.1.2" part 1 of 2, "3.uuid" a V2 one.
func listing(t *testing.T, names ...string) []LogFile {
	t.Helper()
	var files []LogFile
	for _, n := range names {
		var key string
		var v int64
		parts := strings.Split(n, ".")
		for _, c := range parts[0] {
			v = v*10 + int64(c-'0')
		}
		switch {
		case len(parts) == 1:
			key = CommitKey(v)
		case parts[1] == "cp" && len(parts) == 2:
			key = ClassicCheckpointKey(v)
		case parts[1] == "cp":
			key = MultiPartCheckpointKey(v, int(parts[2][0]-'0'), int(parts[3][0]-'0'))
		case parts[1] == "uuid":
			key = UUIDCheckpointKey(v, "80a083e8-7026-4e79-81be-64bd76c43a11", "json")
		case parts[1] == "crc":
			key = CRCKey(v)
		default: // "3.7": the compaction file of commits 3..7
			var end int64
			for _, c := range parts[1] {
				end = end*10 + int64(c-'0')
			}
			key = CompactedKey(v, end)
		}
		f, ok := ParseName(key)
		if !ok {
			t.Fatalf("bad test name %q", n)
		}
		files = append(files, f)
	}
	sortFiles(files)
	return files
}

func TestNewSegment(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		version int64
		skip    map[int64]bool
		wantV   int64
		wantCP  int64 // -1: none
		wantErr error
	}{
		{"commits only", []string{"0", "1", "2"}, Latest, nil, 2, -1, nil},
		{"time travel", []string{"0", "1", "2"}, 1, nil, 1, -1, nil},
		{"checkpoint then commits", []string{"0", "1", "2", "2.cp", "3", "4"}, Latest, nil, 4, 2, nil},
		{"checkpoint after target not used", []string{"0", "1", "2", "2.cp", "3"}, 1, nil, 1, -1, nil},
		{"checkpoint at target", []string{"0", "1", "2", "2.cp", "3"}, 2, nil, 2, 2, nil},
		{"newest checkpoint wins", []string{"0", "1", "1.cp", "2", "3", "3.cp", "4"}, Latest, nil, 4, 3, nil},
		{"skip falls back", []string{"0", "1", "1.cp", "2", "3", "3.cp", "4"}, Latest, map[int64]bool{3: true}, 4, 1, nil},
		{"skip all falls back to commits", []string{"0", "1", "1.cp", "2"}, Latest, map[int64]bool{1: true}, 2, -1, nil},
		{"cleaned log", []string{"5.cp", "5", "6", "7"}, Latest, nil, 7, 5, nil},
		{"checkpoint only", []string{"5.cp"}, Latest, nil, 5, 5, nil},
		{"multi-part complete", []string{"0", "1", "1.cp.1.2", "1.cp.2.2", "2"}, Latest, nil, 2, 1, nil},
		{"multi-part incomplete ignored", []string{"0", "1", "1.cp.1.2", "2"}, Latest, nil, 2, -1, nil},
		{"v2 uuid", []string{"0", "1", "1.uuid", "2"}, Latest, nil, 2, 1, nil},
		{"crc ignored", []string{"0", "0.crc", "1", "1.crc"}, Latest, nil, 1, -1, nil},
		{"gap after checkpoint", []string{"0", "1", "1.cp", "3"}, Latest, nil, 0, 0, deltaerr.ErrMissingLogFile},
		{"gap without checkpoint", []string{"0", "1", "3"}, Latest, nil, 0, 0, deltaerr.ErrMissingLogFile},
		{"no commit 0 and no checkpoint: the start is missing", []string{"1", "2"}, Latest, nil, 0, 0, deltaerr.ErrMissingLogFile},
		{"no commit 0, the only checkpoint skipped", []string{"5.cp", "5", "6"}, Latest, map[int64]bool{5: true}, 0, 0, deltaerr.ErrVersionNotFound},
		{"before cleaned log", []string{"5.cp", "5", "6"}, 3, nil, 0, 0, deltaerr.ErrVersionNotFound},
		{"after latest", []string{"0", "1"}, 5, nil, 0, 0, deltaerr.ErrVersionNotFound},
		{"empty", nil, Latest, nil, 0, 0, deltaerr.ErrTableNotFound},
		{"only crc", []string{"0.crc"}, Latest, nil, 0, 0, deltaerr.ErrTableNotFound},
		{"negative", []string{"0"}, -2, nil, 0, 0, deltaerr.ErrInvalidArgument},
		{"max int64 is a version, not the latest", []string{"0", "1"}, math.MaxInt64, nil, 0, 0, deltaerr.ErrVersionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seg, err := NewSegment(listing(t, tt.files...), tt.version, tt.skip)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if seg.Version != tt.wantV {
				t.Errorf("Version = %d, want %d", seg.Version, tt.wantV)
			}
			cp, ok := seg.CheckpointVersion()
			if !ok {
				cp = -1
			}
			if cp != tt.wantCP {
				t.Errorf("checkpoint = %d, want %d", cp, tt.wantCP)
			}
			next := cp + 1
			for _, c := range seg.Commits {
				if c.Version != next || c.Kind != Commit {
					t.Errorf("commit %v out of order, want version %d", c, next)
				}
				next++
			}
			if next-1 != seg.Version {
				t.Errorf("commits end at %d, want %d", next-1, seg.Version)
			}
		})
	}
}

func TestEarliest(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		want    int64
		wantErr error
	}{
		{"commit 0", []string{"0", "1", "1.cp", "2"}, 0, nil},
		{"cleaned log", []string{"5.cp", "5", "6", "10.cp", "10"}, 5, nil},
		{"cleanup cut short", []string{"3", "4", "5.cp", "5", "6"}, 5, nil},
		{"empty", nil, 0, deltaerr.ErrTableNotFound},
		{"commits without a start", []string{"3", "4"}, 0, deltaerr.ErrMissingLogFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Earliest(listing(t, tt.files...))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestSegmentPlan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string
		version int64
		want    string // the plan: commits by version, compactions as x-y
	}{
		{"none", []string{"0", "1", "2"}, Latest, "0 1 2"},
		{"one", []string{"0", "0.2", "1", "2", "3"}, Latest, "0-2 3"},
		{"ends at the version: the last commit is read", []string{"0", "0.2", "1", "2"}, Latest, "0 1 2"},
		{"the furthest of several from one start", []string{"0", "0.1", "0.3", "1", "2", "3", "4"}, Latest, "0-3 4"},
		{"back to back", []string{"0", "0.1", "1", "2", "2.3", "3", "4"}, Latest, "0-1 2-3 4"},
		{"before the checkpoint: unused", []string{"0", "0.2", "1", "2", "3", "3.cp", "4", "4.5", "5", "6"}, Latest, "4-5 6"},
		{"straddles the checkpoint: unused", []string{"0", "1", "1.cp", "1.3", "2", "3", "4"}, Latest, "2 3 4"},
		{"past the version asked: unused", []string{"0", "1", "1.3", "2", "3", "4"}, 2, "0 1 2"},
		{"time travel inside", []string{"0", "1", "1.2", "2", "3", "4"}, 3, "0 1-2 3"},
		{"one commit: unused", []string{"0", "1", "1.1", "2"}, Latest, "0 1 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg, err := NewSegment(listing(t, tc.files...), tc.version, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range seg.Plan() {
				if f.Kind == Compacted {
					got = append(got, fmt.Sprintf("%d-%d", f.Version, f.EndVersion))
				} else {
					got = append(got, fmt.Sprint(f.Version))
				}
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("plan %q, want %q", s, tc.want)
			}
		})
	}
}
