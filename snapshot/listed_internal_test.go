package snapshot

import (
	"errors"
	"fmt"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/logstore"
)

// A listed checkpoint file that is gone is a listing race (listed again);
// a sidecar it names that is gone, or a corrupt checkpoint, is damage
// (skipped for an older checkpoint).
func TestSkippable(t *testing.T) {
	cp := deltalog.UUIDCheckpointKey(10, "80a083e8-7026-4e79-81be-64bd76c43a11", "parquet")
	sidecar := deltalog.SidecarDir + "3a0d65cd-4056-49b8-937b-95f9e3ee90e5.parquet"
	notFound := func(key string) error {
		return fmt.Errorf("reading: %w", &logstore.OpError{Op: "get range", Key: key, Kind: logstore.ErrNotFound, Err: errors.New("404")})
	}
	tests := []struct {
		name     string
		err      error
		wantSkip bool
		wantKind error
	}{
		{"listed checkpoint gone", notFound(cp), false, deltaerr.ErrMissingLogFile},
		{"sidecar gone", notFound(sidecar), true, logstore.ErrNotFound},
		{"gone, no key named", fmt.Errorf("x: %w", logstore.ErrNotFound), false, deltaerr.ErrMissingLogFile},
		{"corrupt", deltaerr.Corruptf(cp, "bad footer"), true, deltaerr.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fmt.Errorf("load: %w", &checkpointError{version: 10, err: tt.err, vanished: listedMissing(tt.err, []string{cp})})
			cpErr, err := skippable(in)
			if (cpErr != nil) != tt.wantSkip || !errors.Is(err, tt.wantKind) {
				t.Fatalf("skip %v, err %v; want skip %v, %v", cpErr != nil, err, tt.wantSkip, tt.wantKind)
			}
		})
	}
	if cpErr, err := skippable(nil); cpErr != nil || err != nil {
		t.Fatalf("nil: %v %v", cpErr, err)
	}
}
