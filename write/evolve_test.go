package write

import (
	"reflect"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

func TestUpgradeProtocol(t *testing.T) {
	legacy := func(r, w int32) actions.Protocol { return actions.Protocol{MinReaderVersion: r, MinWriterVersion: w} }
	tf := func(r int32, rf, wf []string) actions.Protocol {
		return actions.Protocol{MinReaderVersion: r, MinWriterVersion: 7, ReaderFeatures: rf, WriterFeatures: wf}
	}
	for _, c := range []struct {
		name    string
		from    actions.Protocol
		feats   []string
		want    actions.Protocol
		changed bool
	}{
		{"nothing new", legacy(1, 2), nil, legacy(1, 2), false},
		{"already implied", legacy(1, 4), []string{"checkConstraints", "appendOnly"}, legacy(1, 4), false},
		{"legacy ladder", legacy(1, 2), []string{"changeDataFeed"}, legacy(1, 4), true},
		{"column mapping", legacy(1, 3), []string{"columnMapping"}, legacy(2, 5), true},
		{"never lower", legacy(2, 6), []string{"checkConstraints"}, legacy(2, 6), false},
		{"writer-only feature", legacy(1, 2), []string{"rowTracking"},
			tf(1, nil, []string{"appendOnly", "domainMetadata", "invariants", "rowTracking"}), true},
		{"legacy features listed", legacy(2, 5), []string{"deletionVectors"},
			tf(3, []string{"columnMapping", "deletionVectors"},
				[]string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "deletionVectors", "generatedColumns", "invariants"}), true},
		{"table features: added", tf(1, nil, []string{"appendOnly", "invariants"}), []string{"inCommitTimestamp"},
			tf(1, nil, []string{"appendOnly", "inCommitTimestamp", "invariants"}), true},
		{"table features: reader raised", tf(1, nil, []string{"domainMetadata"}), []string{"typeWidening"},
			tf(3, []string{"typeWidening"}, []string{"domainMetadata", "typeWidening"}), true},
		{"table features: present", tf(3, []string{"deletionVectors"}, []string{"deletionVectors"}), []string{"deletionVectors"},
			tf(3, []string{"deletionVectors"}, []string{"deletionVectors"}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, changed := UpgradeProtocol(c.from, c.feats...)
			if changed != c.changed || got.MinReaderVersion != c.want.MinReaderVersion || got.MinWriterVersion != c.want.MinWriterVersion ||
				!slices.Equal(got.ReaderFeatures, c.want.ReaderFeatures) || !slices.Equal(got.WriterFeatures, c.want.WriterFeatures) {
				t.Fatalf("got %+v changed=%v, want %+v changed=%v", got, changed, c.want, c.changed)
			}
			if err := tableconfig.ReadSupported(&got); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRequireVersions(t *testing.T) {
	p, err := requireVersions(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, 2, 5)
	if err != nil || p.MinReaderVersion != 2 || p.MinWriterVersion != 5 || len(p.WriterFeatures) != 0 {
		t.Fatalf("2/5: %+v %v", p, err)
	}
	p, err = requireVersions(actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, 1, 7)
	if err != nil || p.MinReaderVersion != 2 || p.MinWriterVersion != 7 ||
		!slices.Equal(p.WriterFeatures, []string{"appendOnly", "changeDataFeed", "checkConstraints", "columnMapping", "generatedColumns", "invariants"}) {
		t.Fatalf("2/5 to writer 7: %+v %v", p, err)
	}
	p, err = requireVersions(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, 3, 7)
	if err != nil || p.MinReaderVersion != 3 || p.MinWriterVersion != 7 || p.ReaderFeatures != nil {
		t.Fatalf("3/7: %+v %v", p, err)
	}
	if _, err := requireVersions(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, 3, 5); err == nil {
		t.Fatal("reader 3 with writer 5 accepted")
	}
}

func TestNewTableVersionProperties(t *testing.T) {
	sch, _ := schema.ParseDDL("id INT")
	p, m, err := NewTable(TableSpec{Schema: sch, Properties: map[string]string{"delta.minReaderVersion": "2", "delta.minWriterVersion": "5"}})
	if err != nil || p.MinReaderVersion != 2 || p.MinWriterVersion != 5 {
		t.Fatalf("protocol %+v, %v", p, err)
	}
	if len(m.Configuration) != 0 {
		t.Fatalf("configuration %v: version properties stored", m.Configuration)
	}
	if _, _, err := NewTable(TableSpec{Schema: sch, Properties: map[string]string{"delta.minWriterVersion": "x"}}); err == nil {
		t.Fatal("writer version x accepted")
	}
}

// Spark upgrades a table for CLUSTER BY to writer 7 with clustering and
// domainMetadata listed beside every feature the old protocol implied.
func TestUpgradeProtocolClustering(t *testing.T) {
	tests := []struct {
		in   actions.Protocol
		want actions.Protocol
	}{
		{actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "clustering", "domainMetadata", "invariants"}}},
		{actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
				WriterFeatures: []string{"appendOnly", "changeDataFeed", "checkConstraints", "clustering", "columnMapping", "domainMetadata", "generatedColumns", "invariants"}}},
		{actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "domainMetadata"}},
			actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"clustering", "deletionVectors", "domainMetadata"}}},
	}
	for _, tt := range tests {
		got, _ := UpgradeProtocol(tt.in, actions.FeatureClustering)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v: UpgradeProtocol(clustering) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
