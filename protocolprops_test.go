package delta

import (
	"context"
	"strings"
	"testing"

	"github.com/godelta/delta/txn"
)

// TestProtocolVersionProperties: delta.minReaderVersion and
// delta.minWriterVersion ask for protocol versions, as in Spark: a higher
// one upgrades the protocol, the same one changes nothing, a lower one is
// refused (the protocol is never lowered by a property), and none is
// stored as a table property, whichever way a commit is made.
func TestProtocolVersionProperties(t *testing.T) {
	ctx := context.Background()
	dv := map[string]string{"delta.enableDeletionVectors": "true"}
	for _, props := range []map[string]string{
		{"delta.minReaderVersion": "1"},
		{"delta.minWriterVersion": "2"},
		{"delta.minReaderVersion": "1", "delta.minWriterVersion": "7"},
	} {
		tbl := mustNamesTable(t, "id BIGINT", dv) // 3/7
		_, err := tbl.SetProperties(ctx, props, AlterOptions{})
		refused(t, "downgrade by "+fmtProps(props), err, "downgrade")
		if v := version(t, tbl); v != 0 {
			t.Errorf("%v: version %d after the refused downgrade", props, v)
		}
	}
	tbl := mustNamesTable(t, "id BIGINT", nil) // 1/2
	if _, err := tbl.SetProperties(ctx, map[string]string{"delta.minWriterVersion": "2"}, AlterOptions{}); err != nil {
		t.Errorf("the same version: %v", err)
	}
	if _, err := tbl.SetProperties(ctx, map[string]string{"delta.minWriterVersion": "1"}, AlterOptions{}); err == nil {
		t.Error("writer 1 on a writer 2 table accepted")
	}
	if _, err := tbl.SetProperties(ctx, map[string]string{"delta.minWriterVersion": "4"}, AlterOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.Protocol(); p.MinReaderVersion != 1 || p.MinWriterVersion != 4 {
		t.Errorf("protocol %d/%d, want 1/4", p.MinReaderVersion, p.MinWriterVersion)
	}
	for k := range snap.Metadata().Configuration {
		if strings.HasPrefix(k, "delta.min") {
			t.Errorf("%s stored as a table property", k)
		}
	}
	// A commit made through package txn directly cannot store them.
	m := snap.Metadata()
	m.Configuration = map[string]string{"delta.minReaderVersion": "1"}
	tx := txn.Begin(snap, txn.Options{Operation: "SET TBLPROPERTIES"})
	tx.SetMetadata(m)
	_, err = tx.Commit(ctx)
	refused(t, "a metaData holding delta.minReaderVersion", err, "delta.minReaderVersion")
	m.Configuration = map[string]string{"delta.feature.deletionVectors": "supported"}
	tx = txn.Begin(snap, txn.Options{Operation: "SET TBLPROPERTIES"})
	tx.SetMetadata(m)
	_, err = tx.Commit(ctx)
	refused(t, "a metaData holding delta.feature.deletionVectors", err, "delta.feature.deletionVectors")
}

func fmtProps(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}
