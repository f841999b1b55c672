package checksum_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/internal/checksum"
)

// TestApplyRefuses: the commits whose checksum the actions do not tell
// are refused with ErrNotIncremental, and a refused builder stays so.
func TestApplyRefuses(t *testing.T) {
	prev := sample() // one file "a" of 10 bytes
	a := actions.Add{Path: "b", Size: 5, DataChange: true}
	reAdd := actions.Add{Path: "a", Size: 10}
	size := int64(10)
	for _, tc := range []struct {
		name string
		prev *checksum.VersionChecksum
		acts []actions.Action
	}{
		{"remove without size", prev, []actions.Action{{Remove: &actions.Remove{Path: "a", DataChange: true}}}},
		{"backfill", prev, []actions.Action{{CommitInfo: &actions.CommitInfo{Operation: "ROW TRACKING BACKFILL"}}, {Add: &reAdd}}},
		{"manual update", prev, []actions.Action{{CommitInfo: &actions.CommitInfo{Operation: "Manual Update"}}}},
		{"re-add without data change", prev, []actions.Action{{Add: &reAdd}}},
		{"two adds of one file", prev, []actions.Action{{Add: &a}, {Add: &a}}},
		{"two removes of one file", prev, []actions.Action{
			{Remove: &actions.Remove{Path: "a", Size: &size}}, {Remove: &actions.Remove{Path: "a", Size: &size}}}},
		{"no protocol before", &checksum.VersionChecksum{NumMetadata: 1, NumProtocol: 1}, []actions.Action{{Add: &a}}},
		{"a new table without protocol", nil, []actions.Action{{Add: &a}}},
		{"more removed than there is", prev, []actions.Action{{Remove: &actions.Remove{Path: "x", Size: new(int64(11))}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := checksum.NewBuilder(tc.prev)
			if err := b.Apply(tc.acts); !errors.Is(err, checksum.ErrNotIncremental) {
				t.Fatalf("Apply = %v, want ErrNotIncremental", err)
			}
			if err := b.Apply(nil); !errors.Is(err, checksum.ErrNotIncremental) {
				t.Fatalf("Apply after a refusal = %v", err)
			}
			if c, err := b.Checksum(); c != nil || err == nil {
				t.Fatalf("Checksum after a refusal = %v, %v", c, err)
			}
		})
	}
}

// TestApplyCounts: adds and removes move the totals, the histograms and
// the deletion vector counts; the lists follow txn and domainMetadata;
// the caps drop a list whole.
func TestApplyCounts(t *testing.T) {
	p := actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}
	m := actions.Metadata{ID: "id"}
	dv := &actions.DeletionVector{StorageType: "i", PathOrInlineDv: "x", Cardinality: 42}
	a1 := actions.Add{Path: "a", Size: 1 << 20, DataChange: true}
	a1dv := actions.Add{Path: "a", Size: 1 << 20, DataChange: true, DeletionVector: dv}
	c0, err := checksum.Apply(nil, []actions.Action{{Protocol: &p}, {Metadata: &m}, {Add: &a1}, {Txn: &actions.Txn{AppID: "x", Version: 1}},
		{DomainMetadata: &actions.DomainMetadata{Domain: "d", Configuration: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := actions.RemoveOf(&a1, 1, true)
	c1, err := checksum.Apply(c0, []actions.Action{{Remove: &r}, {Add: &a1dv}, {DomainMetadata: &actions.DomainMetadata{Domain: "d", Removed: true}},
		{CommitInfo: &actions.CommitInfo{InCommitTimestamp: new(int64(77)), TxnID: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case c1.NumFiles != 1 || c1.TableSizeBytes != 1<<20:
		t.Errorf("totals %d/%d", c1.NumFiles, c1.TableSizeBytes)
	case *c1.NumDeletedRecords != 42 || *c1.NumDeletionVectors != 1 || c1.DeletedRecordCountsHistogram.DeletedRecordCounts[2] != 1:
		t.Errorf("deletion vectors %d/%d %v", *c1.NumDeletedRecords, *c1.NumDeletionVectors, c1.DeletedRecordCountsHistogram)
	case len(c1.DomainMetadata) != 0 || c1.DomainMetadata == nil || len(c1.SetTransactions) != 1:
		t.Errorf("lists %v %v", c1.DomainMetadata, c1.SetTransactions)
	case *c1.InCommitTimestamp != 77 || c1.TxnID != "t":
		t.Errorf("commitInfo %v %s", c1.InCommitTimestamp, c1.TxnID)
	}
	if c0.NumDeletedRecords == nil || *c0.NumDeletedRecords != 0 {
		t.Errorf("Apply changed its input")
	}
	var many []actions.Action
	for i := range checksum.MaxDomainMetadata + 1 {
		many = append(many, actions.Action{DomainMetadata: &actions.DomainMetadata{Domain: string(rune('a' + i))}})
	}
	c2, err := checksum.Apply(c1, many)
	if err != nil || c2.DomainMetadata != nil {
		t.Fatalf("past the cap: %v, %v", c2.DomainMetadata, err)
	}
	m2 := m
	m2.Configuration = map[string]string{"delta.setTransactionRetentionDuration": "interval 1 day"}
	c3, err := checksum.Apply(c1, []actions.Action{{Metadata: &m2}})
	if err != nil || c3.SetTransactions != nil {
		t.Fatalf("under a txn retention: %v, %v", c3.SetTransactions, err)
	}
}
