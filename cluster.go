package delta

import (
	"encoding/json"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/write"
)

// clustering returns, for a table created with CLUSTER BY cols, Spark's
// clusterBy operation parameter (a JSON list of the column names, "[]"
// without clustering) and the delta.clustering domain the creating commit
// must carry (nil without clustering).
func clustering(p actions.Protocol, m actions.Metadata, cols []string) (string, *actions.DomainMetadata, error) {
	if len(cols) == 0 {
		return "[]", nil, nil
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		return "", nil, err
	}
	d, resolved, err := write.ClusteringDomain(cfg, m, cols)
	if err != nil {
		return "", nil, err
	}
	names := make([]string, len(resolved))
	for i, c := range resolved {
		names[i] = c.Name()
	}
	b, _ := json.Marshal(names)
	return string(b), &d, nil
}
