package delta

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

// logNames returns the names in the table's _delta_log, sorted.
func logNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Checkpoint and CleanupLog change the log, so they refuse a table whose
// writer version or writer features this build does not support, with
// the error Append gives, and write or delete nothing. (Issue 19, item
// 12.)
func TestMaintenanceRefusesUnsupportedWriters(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, protocol string
	}{
		{"writer version 8", `{"protocol":{"minReaderVersion":1,"minWriterVersion":8}}`},
		{"unknown writer feature", `{"protocol":{"minReaderVersion":1,"minWriterVersion":7,"writerFeatures":["aFeatureFromTheFuture"]}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := cleanupTable(t, nil) // commits 0..11 past retention: cleanup would delete
			commit := fmt.Sprintf(`%s
{"commitInfo":{"timestamp":1,"operation":"UPGRADE PROTOCOL"}}
`, tc.protocol)
			if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 13)), []byte(commit), 0o644); err != nil {
				t.Fatal(err)
			}
			tbl, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Close()
			before := logNames(t, dir)
			_, appendErr := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(1), schema.StringValue("x")}}, WriteOptions{})
			var want *deltaerr.FeatureError
			if !errors.As(appendErr, &want) {
				t.Fatalf("append: %v, want a *FeatureError", appendErr)
			}
			_, cpErr := tbl.Checkpoint(ctx)
			_, cleanErr := tbl.CleanupLog(ctx, false)
			_, dryErr := tbl.CleanupLog(ctx, true)
			for op, err := range map[string]error{"Checkpoint": cpErr, "CleanupLog": cleanErr, "CleanupLog dry run": dryErr} {
				var got *deltaerr.FeatureError
				if !errors.As(err, &got) || !errors.Is(err, deltaerr.ErrUnsupportedFeature) || got.Error() != want.Error() {
					t.Errorf("%s: %v; want the error append gives: %v", op, err, want)
				}
			}
			if after := logNames(t, dir); !slices.Equal(before, after) {
				t.Errorf("the log changed: %v -> %v", before, after)
			}
		})
	}
}
