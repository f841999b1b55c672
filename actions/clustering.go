package actions

import (
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/deltaerr"
)

// Names of liquid clustering in the log. They are part of the format:
// they must never change.
const (
	// DomainClustering is the domain whose configuration lists a
	// clustered table's clustering columns (protocol: Clustered Table).
	DomainClustering = "delta.clustering"
	// DomainLiquidPreview is the domain Databricks' preview of liquid
	// clustering (writer feature "liquid") used, read for compatibility.
	DomainLiquidPreview = "delta.liquid"
	// ClusteringProviderLiquid is the clusteringProvider of files that
	// liquid clustering (Spark's and ours) clustered.
	ClusteringProviderLiquid = "liquid"
)

// ClusteringConfig is the configuration of the delta.clustering domain:
// the clustering columns, each a path of physical names (one name for a
// top-level column), as Delta Spark writes it:
// {"clusteringColumns":[["col1"],["user","address","city"]]}.
type ClusteringConfig struct {
	Columns [][]string
}

// ClusteringDomain returns the domainMetadata action that records the
// clustering columns cols (physical paths). No columns is a valid table
// (CLUSTER BY NONE): the feature stays, nothing is clustered.
func ClusteringDomain(cols [][]string) (DomainMetadata, error) {
	if cols == nil {
		cols = [][]string{}
	}
	b, err := json.Marshal(map[string]any{"clusteringColumns": cols})
	if err != nil {
		return DomainMetadata{}, err
	}
	return DomainMetadata{Domain: DomainClustering, Configuration: string(b)}, nil
}

// ParseClustering reads the configuration of a clustering domain: the
// form Spark writes (paths), the protocol's example (one string per
// column, a top-level physical name), and the preview's delta.liquid form
// ({"clusteringColumns":[{"physicalName":[...]}]}). Anything else is a
// *deltaerr.CorruptError.
func ParseClustering(config string) (ClusteringConfig, error) {
	var raw struct {
		Columns []json.RawMessage `json:"clusteringColumns"`
	}
	bad := func(why string) error {
		return &deltaerr.CorruptError{Path: "domainMetadata " + DomainClustering, Reason: why}
	}
	if err := json.Unmarshal([]byte(config), &raw); err != nil {
		return ClusteringConfig{}, bad(fmt.Sprintf("configuration is not a JSON object: %v", err))
	}
	var out ClusteringConfig
	for _, c := range raw.Columns {
		var path []string
		var name string
		var preview struct {
			PhysicalName []string `json:"physicalName"`
		}
		switch {
		case json.Unmarshal(c, &path) == nil:
		case json.Unmarshal(c, &name) == nil:
			path = []string{name}
		case json.Unmarshal(c, &preview) == nil && len(preview.PhysicalName) > 0:
			path = preview.PhysicalName
		default:
			return ClusteringConfig{}, bad(fmt.Sprintf("clustering column %s is not a name or a path of names", c))
		}
		if len(path) == 0 {
			return ClusteringConfig{}, bad("empty clustering column path")
		}
		out.Columns = append(out.Columns, path)
	}
	return out, nil
}
