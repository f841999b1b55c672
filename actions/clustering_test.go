package actions

import (
	"errors"
	"reflect"
	"testing"

	"github.com/godelta/delta/deltaerr"
)

func TestParseClustering(t *testing.T) {
	tests := []struct {
		config string
		want   [][]string
	}{
		// Spark (kernel-rs/crc-full in the corpus).
		{`{"clusteringColumns":[["col1"],["user","address","city"]]}`, [][]string{{"col1"}, {"user", "address", "city"}}},
		// PROTOCOL.md's example.
		{`{"clusteringColumns":["col-daadafd7", "col-5abe0e80"]}`, [][]string{{"col-daadafd7"}, {"col-5abe0e80"}}},
		// The delta.liquid preview (delta-rs/table_with_liquid_clustering).
		{`{"clusteringColumns":[{"physicalName":["id"]}],"domainName":"delta.liquid"}`, [][]string{{"id"}}},
		{`{"clusteringColumns":[]}`, nil},
	}
	for _, tt := range tests {
		got, err := ParseClustering(tt.config)
		if err != nil {
			t.Fatalf("ParseClustering(%s): %v", tt.config, err)
		}
		if !reflect.DeepEqual(got.Columns, tt.want) {
			t.Errorf("ParseClustering(%s) = %v, want %v", tt.config, got.Columns, tt.want)
		}
	}
	for _, bad := range []string{`nope`, `{"clusteringColumns":[1]}`, `{"clusteringColumns":[[]]}`} {
		if _, err := ParseClustering(bad); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("ParseClustering(%s) = %v, want ErrCorrupt", bad, err)
		}
	}
	d, err := ClusteringDomain([][]string{{"a"}, {"s", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Domain != DomainClustering || d.Configuration != `{"clusteringColumns":[["a"],["s","b"]]}` {
		t.Errorf("ClusteringDomain = %+v", d)
	}
}
