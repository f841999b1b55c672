package write

import (
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/tableconfig"
)

func TestNewTableClustering(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.Long}, {Name: "b", Type: schema.Boolean}, {Name: "p", Type: schema.String}}}
	for _, spec := range []TableSpec{
		{Schema: sch, ClusterBy: []string{"a"}},
		{Schema: sch, Properties: map[string]string{"delta.feature.clustering": "supported"}},
	} {
		p, m, err := NewTable(spec)
		if err != nil {
			t.Fatal(err)
		}
		if p.MinWriterVersion != 7 || !slices.Contains(p.WriterFeatures, actions.FeatureClustering) || !slices.Contains(p.WriterFeatures, actions.FeatureDomainMetadata) {
			t.Errorf("%+v: protocol %+v", spec, p)
		}
		if len(m.Configuration) != 0 {
			t.Errorf("feature properties stored: %v", m.Configuration)
		}
	}
	if _, _, err := NewTable(TableSpec{Schema: sch, PartitionColumns: []string{"p"}, ClusterBy: []string{"a"}}); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("partitioned and clustered: %v", err)
	}
	cfg, _ := tableconfig.New(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"clustering", "domainMetadata"}}, actions.Metadata{})
	for _, c := range []struct {
		names []string
		want  error
	}{
		{[]string{"b"}, ErrNoStats},         // boolean: no min/max
		{[]string{"p"}, ErrPartitionColumn}, // with p a partition column
		{[]string{"a", "A"}, nil},           // twice
		{[]string{"zz"}, nil},               // no such column
	} {
		_, err := LayoutColumns(sch, []string{"p"}, cfg, c.names)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("LayoutColumns(%v) = %v, want %v", c.names, err, c.want)
		}
	}
	cols, err := LayoutColumns(sch, nil, cfg, []string{"A"})
	if err != nil || len(cols) != 1 || cols[0].Name() != "a" || !slices.Equal(cols[0].Physical, []string{"a"}) {
		t.Errorf("LayoutColumns(A) = %+v, %v", cols, err)
	}
}
