package buildinfo

import (
	"regexp"
	"testing"
)

// The created_by string parses as parquet-mr's VersionParser reads it:
// an application, "version", a semantic version, and "(build <id>)".
func TestCreatedBy(t *testing.T) {
	re := regexp.MustCompile(`^godelta version (\d+\.\d+\.\d+\S*) \(build (\S+)\)$`)
	m := re.FindStringSubmatch(CreatedBy())
	if m == nil {
		t.Fatalf("CreatedBy() = %q, not \"godelta version X.Y.Z (build ID)\"", CreatedBy())
	}
	if m[1] != Version() {
		t.Errorf("CreatedBy() names version %q, Version() is %q", m[1], Version())
	}
}
