package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/tableconfig"
	"github.com/godelta/delta/txn"
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

// ClusterBy changes the clustering columns of the table (ALTER TABLE ...
// CLUSTER BY): cols are logical column names, dotted for nested fields,
// each a data column with statistics (write.LayoutColumns); none means
// CLUSTER BY NONE. A table that is not clustered yet becomes clustered: its
// protocol gains the clustering and domainMetadata writer features, which
// a partitioned table cannot (deltaerr.ErrInvalidArgument). Files already
// written stay as they are; OPTIMIZE clusters the files not yet clustered
// by the new columns. The commit (operation CLUSTER BY, with Spark's
// oldClusteringColumns and newClusteringColumns) changes no data.
func (t *Table) ClusterBy(ctx context.Context, cols []string) (CommitResult, error) {
	snap, err := t.writableSnapshot(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	m := snap.Metadata()
	if len(m.PartitionColumns) > 0 {
		return CommitResult{}, fmt.Errorf("cluster by: %s is partitioned (by %v); a table cannot be both partitioned and clustered: %w",
			logstore.RedactURI(t.uri), m.PartitionColumns, deltaerr.ErrInvalidArgument)
	}
	if p := snap.Protocol(); tableconfig.HasWriterFeature(&p, actions.FeatureLiquidPreview) && !tableconfig.HasWriterFeature(&p, actions.FeatureClustering) {
		return CommitResult{}, &deltaerr.FeatureError{Feature: "changing the clustering columns of a table of the liquid preview", Op: "write"}
	}
	old, _, err := optimize.ClusteringColumns(ctx, snap)
	if err != nil {
		return CommitResult{}, err
	}
	d, resolved, err := write.ClusteringDomain(snap.Config(), m, cols)
	if err != nil {
		return CommitResult{}, err
	}
	names := make([]string, len(resolved))
	for i, c := range resolved {
		names[i] = c.Name()
	}
	tx := txn.Begin(snap, txn.Options{
		Operation: "CLUSTER BY",
		OperationParameters: map[string]any{
			"oldClusteringColumns": strings.Join(old, ","),
			"newClusteringColumns": strings.Join(names, ","),
		},
		EngineInfo: EngineInfo,
	})
	if p, changed := write.UpgradeProtocol(snap.Protocol(), actions.FeatureClustering); changed {
		tx.SetProtocol(p)
	}
	tx.SetDomainMetadata(d)
	res, err := tx.Commit(ctx)
	if err != nil {
		return CommitResult{}, err
	}
	t.PostCommit(ctx, &res)
	return res, nil
}
