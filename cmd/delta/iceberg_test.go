package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestIcebergCommand(t *testing.T) {
	dir := t.TempDir()
	uni, plain := filepath.Join(dir, "uni"), filepath.Join(dir, "plain")
	mustRun(t, "create", uni, "--schema", "id BIGINT NOT NULL, name STRING", "--property", "delta.universalFormat.enabledFormats=iceberg")
	mustRun(t, "create", plain, "--schema", "id BIGINT NOT NULL, name STRING")
	csv := writeFile(t, filepath.Join(dir, "a.csv"), "id,name\n1,a\n2,\n")
	mustRun(t, "append", uni, csv)

	var doc map[string]any
	r := mustRun(t, "iceberg", uni, "--json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v: %q", err, r.stdout)
	}
	if doc["enabled"] != true || doc["deltaVersion"] != float64(1) || doc["convertedVersion"] != float64(1) ||
		doc["records"] != float64(2) || doc["behind"] != float64(0) || !strings.HasSuffix(doc["metadataLocation"].(string), "metadata/v2.metadata.json") {
		t.Fatalf("iceberg --json: %v", doc)
	}
	if r := mustRun(t, "iceberg", uni); !strings.Contains(r.stdout, "converted version: 1 (0 behind)") {
		t.Fatalf("iceberg: %q", r.stdout)
	}

	// A table without UniForm: shown as such; --sync fails; --enable turns
	// it on and converts.
	r = mustRun(t, "iceberg", plain, "--json")
	doc = nil
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["enabled"] != false || doc["metadataVersion"] != float64(0) {
		t.Fatalf("plain table: %v, %v", doc, err)
	}
	if r := runDelta("iceberg", plain, "--sync"); r.code != exitFailure {
		t.Fatalf("--sync on a table without Iceberg: exit %d, %q", r.code, r.stderr)
	}
	r = mustRun(t, "iceberg", plain, "--enable", "--json")
	doc = nil
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["enabled"] != true || doc["convertedVersion"] != float64(1) {
		t.Fatalf("--enable: %v, %v", doc, err)
	}
	if r := runDelta("iceberg"); r.code != exitUsage {
		t.Fatalf("no TABLE: exit %d", r.code)
	}
}
