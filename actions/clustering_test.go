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

func TestWithWriterFeatures(t *testing.T) {
	tests := []struct {
		in   Protocol
		want Protocol
	}{
		{Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnly", "clustering", "domainMetadata", "invariants"}}},
		{Protocol{MinReaderVersion: 2, MinWriterVersion: 5},
			Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"columnMapping"},
				WriterFeatures: []string{"appendOnly", "changeDataFeed", "checkConstraints", "clustering", "columnMapping", "domainMetadata", "generatedColumns", "invariants"}}},
		{Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors", "domainMetadata"}},
			Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"clustering", "deletionVectors", "domainMetadata"}}},
	}
	for _, tt := range tests {
		got := tt.in.WithWriterFeatures(FeatureClustering, FeatureDomainMetadata)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%+v.WithWriterFeatures = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
