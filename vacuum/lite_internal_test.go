package vacuum

import (
	"context"
	"testing"

	"github.com/godelta/delta/logstore/memory"
)

// _last_vacuum_info as Spark writes and reads it: a JSON object on the
// first line, whose field may be absent (Spark's full VACUUM writes {});
// anything else counts as no record.
func TestLastVacuumInfo(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		content string // "" for no file
		want    int64
	}{
		{"", -1},
		{"{}\n", -1},
		{`{"latestCommitVersionOutsideOfRetentionWindow":7}` + "\n", 7},
		{`{"latestCommitVersionOutsideOfRetentionWindow":7}`, 7},
		{`{"latestCommitVersionOutsideOfRetentionWindow":null}`, -1},
		{`{"latestCommitVersionOutsideOfRetentionWindow":-3}`, -1},
		{`{"latestCommitVersionOutsideOfRetentionWindow":"7"}`, -1},
		{`{"latestCommitVersionOutsideOfRetentionWindow":7.5}`, -1},
		{"{}\n" + `{"latestCommitVersionOutsideOfRetentionWindow":7}`, -1}, // Spark reads the first line
		{"not json", -1},
	} {
		s := memory.New()
		if tc.content != "" {
			if err := s.Put(ctx, LastVacuumInfoKey, []byte(tc.content)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := readLastVacuum(ctx, s)
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.content, got, err, tc.want)
		}
	}

	// What is written reads back, byte for byte as Spark writes it, and a
	// newer version already recorded stays.
	s := memory.New()
	for _, tc := range []struct{ record, want int64 }{{5, 5}, {9, 9}, {4, 9}} {
		if err := recordLastVacuum(ctx, s, tc.record); err != nil {
			t.Fatal(err)
		}
		b, err := s.Get(ctx, LastVacuumInfoKey)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := readLastVacuum(ctx, s); got != tc.want {
			t.Errorf("after recording %d: %d (%q), want %d", tc.record, got, b, tc.want)
		}
	}
	if b, _ := s.Get(ctx, LastVacuumInfoKey); string(b) != "{\"latestCommitVersionOutsideOfRetentionWindow\":9}\n" {
		t.Errorf("written %q", b)
	}
}
