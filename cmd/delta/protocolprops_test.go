package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIProtocolVersionProperties: alter set delta.minReaderVersion or
// delta.minWriterVersion below the table's refuses the downgrade; a
// higher one upgrades the protocol; neither is stored as a property.
func TestCLIProtocolVersionProperties(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "t")
	mustRun(t, "create", root, "--schema", "id BIGINT", "--property", "delta.enableDeletionVectors=true")
	failsWith(t, []string{"alter", root, "set", "delta.minReaderVersion=1"}, "delta.minReaderVersion", "downgrade", "3/7")
	failsWith(t, []string{"alter", root, "set", "delta.minWriterVersion=2"}, "delta.minWriterVersion", "downgrade")
	v, p, props := tableDoc(t, root)
	if v != 0 || p["minReaderVersion"] != 3.0 || p["minWriterVersion"] != 7.0 {
		t.Errorf("version %d, protocol %v after the refused downgrades", v, p)
	}
	if len(props) != 1 || props["delta.enableDeletionVectors"] != "true" {
		t.Errorf("properties %v", props)
	}

	legacy := filepath.Join(dir, "legacy")
	mustRun(t, "create", legacy, "--schema", "id BIGINT")
	mustRun(t, "alter", legacy, "set", "delta.minWriterVersion=4")
	v, p, props = tableDoc(t, legacy)
	if v != 1 || p["minWriterVersion"] != 4.0 || p["minReaderVersion"] != 1.0 {
		t.Errorf("version %d, protocol %v after the upgrade", v, p)
	}
	for k := range props {
		if strings.HasPrefix(k, "delta.min") {
			t.Errorf("%s stored as a property: %v", k, props)
		}
	}
}
