package delta_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/optimize"
	"github.com/godelta/delta/schema"
)

// The commitInfo keys Delta Spark writes, per operation, from
// spark/src/main/scala/org/apache/spark/sql/delta/DeltaOperations.scala
// (delta-io/delta master): each Operation's `parameters` (the keys of
// operationParameters; the values are JSON-encoded with JsonUtils.toJson
// and written raw by JsonMapSerializer, so a Scala String that already
// holds JSON text is a JSON string, a Boolean a JSON boolean, a Long a
// JSON number, None null), and its `operationMetrics` set in
// object DeltaOperationMetrics, which Operation.transformMetrics uses to
// filter the command's SQLMetrics (every value a decimal string).
//
// A parameter's kind here is what its JSON value must be: s string,
// b boolean, n number, S string or null, N number or null.
var (
	// DeltaOperationMetrics.WRITE
	sparkWriteMetrics = []string{"numFiles", "numOutputBytes", "numOutputRows"}
	// WRITE ++ OVERWRITE_REMOVES (insertOverwrite.removeMetrics.enabled,
	// default true): Write.operationMetrics for SaveMode.Overwrite.
	sparkOverwriteMetrics = []string{"numFiles", "numOutputBytes", "numOutputRows", "numRemovedFiles", "numRemovedBytes"}
	// DeltaOperationMetrics.WRITE_REPLACE_WHERE
	// (replaceWhere.dataColumns.metrics.enabled, default true).
	sparkReplaceWhereMetrics = []string{"numFiles", "numOutputBytes", "numOutputRows", "numRemovedFiles",
		"numAddedChangeFiles", "numDeletedRows", "numCopiedRows", "numRemovedBytes"}
	// DeltaOperationMetrics.DELETE
	sparkDeleteMetrics = []string{"numAddedFiles", "numRemovedFiles", "numDeletionVectorsAdded",
		"numDeletionVectorsRemoved", "numDeletionVectorsUpdated", "numAddedChangeFiles", "numDeletedRows",
		"numCopiedRows", "executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numRemovedBytes", "numAddedBytes"}
	// DeltaOperationMetrics.UPDATE
	sparkUpdateMetrics = []string{"numAddedFiles", "numRemovedFiles", "numAddedChangeFiles",
		"numDeletionVectorsAdded", "numDeletionVectorsRemoved", "numDeletionVectorsUpdated", "numUpdatedRows",
		"numCopiedRows", "executionTimeMs", "scanTimeMs", "rewriteTimeMs", "numRemovedBytes", "numAddedBytes"}
	// DeltaOperationMetrics.MERGE
	sparkMergeMetrics = []string{"numSourceRows", "numTargetRowsInserted", "numTargetRowsUpdated",
		"numTargetRowsMatchedUpdated", "numTargetRowsNotMatchedBySourceUpdated", "numTargetRowsDeleted",
		"numTargetRowsMatchedDeleted", "numTargetRowsNotMatchedBySourceDeleted", "numTargetRowsCopied",
		"numTargetBytesAdded", "numTargetBytesRemoved", "numOutputRows", "numTargetFilesAdded",
		"numTargetFilesRemoved", "numTargetChangeFilesAdded", "executionTimeMs", "materializeSourceTimeMs",
		"scanTimeMs", "rewriteTimeMs", "numTargetDeletionVectorsAdded", "numTargetDeletionVectorsRemoved",
		"numTargetDeletionVectorsUpdated"}
	// DeltaOperationMetrics.OPTIMIZE
	sparkOptimizeMetrics = []string{"numAddedFiles", "numRemovedFiles", "numAddedBytes", "numRemovedBytes",
		"minFileSize", "p25FileSize", "p50FileSize", "p75FileSize", "maxFileSize", "numDeletionVectorsRemoved"}
	// DeltaOperationMetrics.RESTORE
	sparkRestoreMetrics = []string{"tableSizeAfterRestore", "numOfFilesAfterRestore", "numRemovedFiles",
		"numRestoredFiles", "removedFilesSize", "restoredFilesSize"}
	// DeltaOperationMetrics.CLONE
	sparkCloneMetrics = []string{"sourceTableSize", "sourceNumOfFiles", "numRemovedFiles", "numCopiedFiles",
		"removedFilesSize", "copiedFilesSize"}
	// DeltaOperationMetrics.CONVERT
	sparkConvertMetrics = []string{"numConvertedFiles"}
	// DeltaOperationMetrics.STREAMING_UPDATE
	sparkStreamingMetrics = []string{"numAddedFiles", "numRemovedFiles", "numOutputRows", "numOutputBytes"}
	// DeltaOperationMetrics.VACUUM_START and VACUUM_END
	sparkVacuumStartMetrics = []string{"numFilesToDelete", "sizeOfDataToDelete"}
	sparkVacuumEndMetrics   = []string{"numDeletedFiles", "numVacuumedDirectories"}

	// CreateTable.parameters (clusterBy is always there: the clustering
	// columns or "[]"; description is Option(metadata.description)).
	sparkCreateParams = map[string]string{"isManaged": "s", "description": "S", "partitionBy": "s",
		"clusterBy": "s", "properties": "s"}
	// Write.parameters: partitionBy is Some(partitionColumns) from
	// WriteIntoDelta; predicate is options.replaceWhere as given (a string,
	// not a JSON list); canMergeSchema only when mergeSchema is set.
	sparkWriteParams        = map[string]string{"mode": "s", "partitionBy": "s"}
	sparkReplaceWhereParams = map[string]string{"mode": "s", "partitionBy": "s", "predicate": "s"}
	sparkMergeSchemaParams  = map[string]string{"mode": "s", "partitionBy": "s", "canMergeSchema": "b"}
	// OperationWithPredicates.parameters: Delete, Update.
	sparkPredicateParams = map[string]string{"predicate": "s"}
	// Merge.parameters (the deprecated update/delete/insertPredicate are
	// None in Merge.apply).
	sparkMergeParams = map[string]string{"predicate": "s", "matchedPredicates": "s",
		"notMatchedPredicates": "s", "notMatchedBySourcePredicates": "s"}
	// Optimize.parameters; isFull only with clustering columns.
	sparkOptimizeParams        = map[string]string{"predicate": "s", "zOrderBy": "s", "clusterBy": "s", "auto": "b"}
	sparkOptimizeClusterParams = map[string]string{"predicate": "s", "zOrderBy": "s", "clusterBy": "s", "auto": "b", "isFull": "b"}
	// VacuumStart.parameters (specifiedRetentionMillis when given),
	// VacuumEnd.parameters.
	sparkVacuumStartParams = map[string]string{"retentionCheckEnabled": "b", "defaultRetentionMillis": "n",
		"specifiedRetentionMillis": "n"}
	sparkVacuumEndParams = map[string]string{"status": "s"}
	// Restore.parameters: both Options, one of them None.
	sparkRestoreParams = map[string]string{"version": "N", "timestamp": "S"}
	// Clone.parameters.
	sparkCloneParams = map[string]string{"source": "s", "sourceVersion": "n"}
	// Convert.parameters (catalogTable only for a catalog table).
	sparkConvertParams = map[string]string{"numFiles": "n", "partitionedBy": "s", "collectStats": "b",
		"sourceFormat": "s"}
	// SetTableProperties, UnsetTableProperties, AddColumns, DropColumns,
	// RenameColumn, AddConstraint, DropConstraint, ClusterBy,
	// StreamingUpdate parameters.
	sparkSetPropsParams      = map[string]string{"properties": "s"}
	sparkUnsetPropsParams    = map[string]string{"properties": "s", "ifExists": "b"}
	sparkColumnsParams       = map[string]string{"columns": "s"}
	sparkRenameParams        = map[string]string{"oldColumnPath": "s", "newColumnPath": "s"}
	sparkAddConstraintParams = map[string]string{"name": "s", "expr": "s"}
	sparkDropConstraintParam = map[string]string{"name": "s", "expr": "s", "existed": "s"}
	sparkClusterByParams     = map[string]string{"oldClusteringColumns": "s", "newClusteringColumns": "s"}
	// ChangeColumn.parameters (position only when one is given),
	// UpgradeProtocol.parameters.
	sparkChangeColumnParams    = map[string]string{"column": "s"}
	sparkUpgradeProtocolParams = map[string]string{"newProtocol": "s"}
	sparkStreamingParams       = map[string]string{"outputMode": "s", "queryId": "s", "epochId": "s"}
)

// TestCommitInfoKeysAsSpark runs each operation through the library and
// checks that its commitInfo carries the operationParameters and
// operationMetrics keys Delta Spark writes for it, no more and no fewer,
// with values of Spark's JSON kinds (metrics: decimal strings).
func TestCommitInfoKeysAsSpark(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sch, err := schema.ParseDDL("id BIGINT, v STRING, b BOOLEAN")
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int64) []schema.Value {
		return []schema.Value{schema.LongValue(id), schema.StringValue("v"), schema.BooleanValue(id%2 == 0)}
	}
	rows := func(from, to int64) [][]schema.Value {
		var out [][]schema.Value
		for i := from; i < to; i++ {
			out = append(out, row(i))
		}
		return out
	}
	must := func(res delta.CommitResult, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return res.Version
	}
	mustDML := func(res delta.DMLResult, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !res.Committed {
			t.Fatal("nothing committed")
		}
		return res.Commit.Version
	}
	mustOpt := func(res delta.OptimizeResult, err error) int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !res.Committed {
			t.Fatal("optimize committed nothing")
		}
		return res.Commit.Version
	}
	// files appends rows in n commits of one file each, so that OPTIMIZE
	// has small files to compact.
	files := func(tbl *delta.Table, n int) {
		t.Helper()
		snap, err := tbl.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		width := len(snap.Schema().Fields)
		for i := range n {
			rs := rows(int64(10*i), int64(10*i+10))
			for j := range rs {
				rs[j] = append(rs[j], make([]schema.Value, width-len(rs[j]))...)
			}
			must(tbl.AppendRows(ctx, rs, delta.WriteOptions{}))
		}
	}

	type step struct {
		name    string
		run     func() (tbl *delta.Table, version int64)
		op      string
		params  map[string]string
		metrics []string
		// check, when set, checks values of operationParameters.
		check func(params map[string]json.RawMessage) string
	}
	tbl, err := delta.Create(ctx, filepath.Join(dir, "t"), delta.TableSpec{Schema: sch, Description: ""})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	at := func(v int64) (*delta.Table, int64) { return tbl, v }

	clustered, err := delta.Create(ctx, filepath.Join(dir, "clustered"), delta.TableSpec{Schema: sch, ClusterBy: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer clustered.Close()

	steps := []step{
		{"create", func() (*delta.Table, int64) { return at(0) }, "CREATE TABLE", sparkCreateParams, nil,
			func(p map[string]json.RawMessage) string {
				// Option(metadata.description): None without one.
				if string(p["description"]) != "null" || string(p["clusterBy"]) != `"[]"` {
					return "description " + string(p["description"]) + ", clusterBy " + string(p["clusterBy"]) + `: want null and "[]"`
				}
				return ""
			}},
		{"create clustered", func() (*delta.Table, int64) { return clustered, 0 }, "CREATE TABLE", sparkCreateParams, nil, nil},
		{"append", func() (*delta.Table, int64) {
			return at(must(tbl.AppendRows(ctx, rows(0, 10), delta.WriteOptions{})))
		}, "WRITE", sparkWriteParams, sparkWriteMetrics, nil},
		{"overwrite", func() (*delta.Table, int64) {
			return at(must(tbl.OverwriteRows(ctx, rows(0, 20), delta.OverwriteOptions{})))
		}, "WRITE", sparkWriteParams, sparkOverwriteMetrics, nil},
		{"replaceWhere", func() (*delta.Table, int64) {
			pred, err := delta.ParsePredicate("id < 5")
			if err != nil {
				t.Fatal(err)
			}
			return at(must(tbl.OverwriteRows(ctx, rows(0, 3), delta.OverwriteOptions{ReplaceWhere: pred})))
		}, "WRITE", sparkReplaceWhereParams, sparkReplaceWhereMetrics,
			func(p map[string]json.RawMessage) string {
				// Write.predicate is the replaceWhere text, not a list.
				var pred string
				if json.Unmarshal(p["predicate"], &pred) != nil || strings.HasPrefix(pred, "[") || !strings.Contains(pred, "< 5") {
					return "predicate " + string(p["predicate"]) + ", want the replaceWhere text"
				}
				return ""
			}},
		{"delete", func() (*delta.Table, int64) {
			return at(mustDML(tbl.Delete(ctx, "id = 1", delta.DMLOptions{})))
		}, "DELETE", sparkPredicateParams, sparkDeleteMetrics, nil},
		{"update", func() (*delta.Table, int64) {
			return at(mustDML(tbl.UpdateRows(ctx, "v = 'u'", "id = 2", delta.DMLOptions{})))
		}, "UPDATE", sparkPredicateParams, sparkUpdateMetrics, nil},
		{"merge", func() (*delta.Table, int64) {
			src := delta.MergeRows(sch, [][]schema.Value{row(2), row(1000)})
			res, err := tbl.Merge(src, "t.id = s.id").WhenMatchedUpdateAll("").WhenNotMatchedInsertAll("").Execute(ctx)
			if err != nil || !res.Committed {
				t.Fatalf("merge: %v", err)
			}
			return at(res.Commit.Version)
		}, "MERGE", sparkMergeParams, sparkMergeMetrics, nil},
		{"append mergeSchema", func() (*delta.Table, int64) {
			wide, _ := schema.ParseDDL("id BIGINT, v STRING, b BOOLEAN, extra INT")
			src := delta.Rows([][]schema.Value{{schema.LongValue(100), schema.StringValue("w"), schema.BooleanValue(true), schema.IntegerValue(1)}})
			return at(must(tbl.Append(ctx, src, delta.WriteOptions{MergeSchema: wide})))
		}, "WRITE", sparkMergeSchemaParams, sparkWriteMetrics, nil},
		{"optimize", func() (*delta.Table, int64) {
			files(tbl, 3)
			return at(mustOpt(tbl.Optimize(ctx, delta.OptimizeOptions{})))
		}, "OPTIMIZE", sparkOptimizeParams, sparkOptimizeMetrics, nil},
		{"optimize zorder", func() (*delta.Table, int64) {
			return at(mustOpt(tbl.Optimize(ctx, delta.OptimizeOptions{ZOrderBy: []string{"id"}})))
		}, "OPTIMIZE", sparkOptimizeParams, sparkOptimizeMetrics, nil},
		{"optimize hilbert", func() (*delta.Table, int64) {
			return at(mustOpt(tbl.Optimize(ctx, delta.OptimizeOptions{HilbertBy: []string{"id", "v"}})))
		}, "OPTIMIZE", sparkOptimizeParams, sparkOptimizeMetrics, nil},
		{"optimize clustering", func() (*delta.Table, int64) {
			files(clustered, 2)
			return clustered, mustOpt(clustered.Optimize(ctx, delta.OptimizeOptions{}))
		}, "OPTIMIZE", sparkOptimizeClusterParams, sparkOptimizeMetrics, nil},
		{"auto compaction", func() (*delta.Table, int64) {
			auto, err := delta.Create(ctx, filepath.Join(dir, "auto"), delta.TableSpec{Schema: sch,
				Properties: map[string]string{"delta.autoOptimize.autoCompact": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { auto.Close() })
			var v int64
			for i := range int64(optimize.AutoCompactMinNumFiles) {
				res, err := auto.AppendRows(ctx, rows(i, i+1), delta.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				v = res.PostCommit.AutoCompacted
			}
			if v == 0 {
				t.Fatal("auto compaction committed nothing")
			}
			return auto, v
		}, "OPTIMIZE", sparkOptimizeParams, sparkOptimizeMetrics,
			func(p map[string]json.RawMessage) string {
				if string(p["auto"]) != "true" || string(p["predicate"]) != `"[]"` {
					return "auto " + string(p["auto"]) + ", predicate " + string(p["predicate"]) + `: want true and "[]" (an unpartitioned table)`
				}
				return ""
			}},
		{"cluster by", func() (*delta.Table, int64) {
			return clustered, must(clustered.ClusterBy(ctx, []string{"v"}))
		}, "CLUSTER BY", sparkClusterByParams, nil, nil},
		{"restore", func() (*delta.Table, int64) {
			res, err := tbl.RestoreVersion(ctx, 2, delta.TxnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return at(res.Version)
		}, "RESTORE", sparkRestoreParams, sparkRestoreMetrics, nil},
		{"vacuum start", func() (*delta.Table, int64) {
			res, err := tbl.Vacuum(ctx, delta.VacuumOptions{Retention: 0, RetentionSet: true, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			return at(res.StartVersion)
		}, "VACUUM START", sparkVacuumStartParams, sparkVacuumStartMetrics, nil},
		{"vacuum end", func() (*delta.Table, int64) {
			v, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return at(v.Version())
		}, "VACUUM END", sparkVacuumEndParams, sparkVacuumEndMetrics, nil},
		{"set properties", func() (*delta.Table, int64) {
			return at(must(tbl.SetProperties(ctx, map[string]string{"delta.logRetentionDuration": "interval 31 days"}, delta.AlterOptions{})))
		}, "SET TBLPROPERTIES", sparkSetPropsParams, nil, nil},
		{"unset properties", func() (*delta.Table, int64) {
			return at(must(tbl.UnsetProperties(ctx, []string{"delta.logRetentionDuration"}, true, delta.AlterOptions{})))
		}, "UNSET TBLPROPERTIES", sparkUnsetPropsParams, nil, nil},
		{"add columns", func() (*delta.Table, int64) {
			return at(must(tbl.AddColumn(ctx, nil, schema.StructField{Name: "n", Type: schema.Integer, Nullable: true}, delta.AlterOptions{})))
		}, "ADD COLUMNS", sparkColumnsParams, nil, nil},
		{"change column", func() (*delta.Table, int64) {
			must(tbl.EnableFeature(ctx, "typeWidening", delta.AlterOptions{}))
			return at(must(tbl.WidenColumn(ctx, []string{"n"}, schema.Long, delta.AlterOptions{})))
		}, "CHANGE COLUMN", sparkChangeColumnParams, nil, nil},
		{"upgrade protocol", func() (*delta.Table, int64) {
			return at(must(tbl.EnableFeature(ctx, "domainMetadata", delta.AlterOptions{})))
		}, "UPGRADE PROTOCOL", sparkUpgradeProtocolParams, nil, nil},
		{"delete with deletion vectors", func() (*delta.Table, int64) {
			dvs, err := delta.Create(ctx, filepath.Join(dir, "dv"), delta.TableSpec{Schema: sch,
				Properties: map[string]string{"delta.enableDeletionVectors": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { dvs.Close() })
			must(dvs.AppendRows(ctx, rows(0, 10), delta.WriteOptions{}))
			return dvs, mustDML(dvs.Delete(ctx, "id = 3", delta.DMLOptions{}))
		}, "DELETE", sparkPredicateParams, sparkDeleteMetrics, nil},
		{"add constraint", func() (*delta.Table, int64) {
			return at(must(tbl.AddConstraint(ctx, "pos", "id >= 0", delta.AlterOptions{})))
		}, "ADD CONSTRAINT", sparkAddConstraintParams, nil, nil},
		{"drop constraint", func() (*delta.Table, int64) {
			return at(must(tbl.DropConstraint(ctx, "pos", false, delta.AlterOptions{})))
		}, "DROP CONSTRAINT", sparkDropConstraintParam, nil, nil},
		{"streaming update", func() (*delta.Table, int64) {
			sink, err := tbl.Sink("app", delta.SinkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			r := append(row(500), make([]schema.Value, len(snap.Schema().Fields)-3)...)
			res, err := sink.Write(ctx, 0, delta.Rows([][]schema.Value{r}))
			if err != nil {
				t.Fatal(err)
			}
			return at(res.Commit.Version)
		}, "STREAMING UPDATE", sparkStreamingParams, sparkStreamingMetrics, nil},
		{"iceberg enable", func() (*delta.Table, int64) {
			ice, err := delta.Create(ctx, filepath.Join(dir, "ice"), delta.TableSpec{Schema: sch})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ice.Close() })
			return ice, must(ice.EnableIceberg(ctx, delta.TxnOptions{}))
		}, "SET TBLPROPERTIES", sparkSetPropsParams, nil,
			func(p map[string]json.RawMessage) string {
				var text string
				var props map[string]string
				if json.Unmarshal(p["properties"], &text) != nil || json.Unmarshal([]byte(text), &props) != nil ||
					props["delta.universalFormat.enabledFormats"] != "iceberg" || props["delta.enableIcebergCompatV2"] != "true" {
					return "properties " + string(p["properties"]) + ", want the properties set, as a JSON object in a string"
				}
				return ""
			}},
		{"rename column", func() (*delta.Table, int64) {
			ice, err := delta.Open(ctx, filepath.Join(dir, "ice"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ice.Close() })
			return ice, must(ice.RenameColumn(ctx, []string{"v"}, "w", delta.AlterOptions{}))
		}, "RENAME COLUMN", sparkRenameParams, nil, nil},
		{"drop columns", func() (*delta.Table, int64) {
			ice, err := delta.Open(ctx, filepath.Join(dir, "ice"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ice.Close() })
			return ice, must(ice.DropColumns(ctx, [][]string{{"w"}}, delta.AlterOptions{}))
		}, "DROP COLUMNS", sparkColumnsParams, nil, nil},
		{"clone", func() (*delta.Table, int64) {
			snap, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c, res, err := tbl.CloneTo(ctx, snap, filepath.Join(dir, "clone"), delta.TxnOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c, res.Commit.Version
		}, "CLONE", sparkCloneParams, sparkCloneMetrics, nil},
		{"convert", func() (*delta.Table, int64) {
			pq := filepath.Join(dir, "parquet")
			if err := os.MkdirAll(pq, 0o755); err != nil {
				t.Fatal(err)
			}
			type prow struct {
				ID int64 `parquet:"id"`
			}
			if err := parquet.WriteFile(filepath.Join(pq, "a.parquet"), []prow{{1}, {2}}); err != nil {
				t.Fatal(err)
			}
			c, res, err := delta.Convert(ctx, pq, delta.ConvertOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			return c, res.Version
		}, "CONVERT", sparkConvertParams, sparkConvertMetrics, nil},
	}
	number := regexp.MustCompile(`^-?[0-9]+$`)
	for _, s := range steps {
		table, v := s.run()
		raw := commitInfoJSON(t, table, v)
		t.Logf("%s: %s", s.name, raw)
		var ci struct {
			Operation           string                     `json:"operation"`
			OperationParameters map[string]json.RawMessage `json:"operationParameters"`
			OperationMetrics    map[string]json.RawMessage `json:"operationMetrics"`
		}
		if err := json.Unmarshal(raw, &ci); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if ci.Operation != s.op {
			t.Errorf("%s: operation %q, want %q", s.name, ci.Operation, s.op)
			continue
		}
		wantParams := keysOf(s.params)
		if got := keysOf(ci.OperationParameters); !slices.Equal(got, wantParams) {
			t.Errorf("%s: operationParameters keys\n got %v\nwant %v (Spark)", s.name, got, wantParams)
		}
		for k, kind := range s.params {
			val, ok := ci.OperationParameters[k]
			if !ok {
				continue
			}
			if got := jsonKind(val); !strings.Contains(map[string]string{"s": "s", "b": "b", "n": "n", "S": "sz", "N": "nz"}[kind], got) {
				t.Errorf("%s: operationParameters.%s = %s: a JSON %s, Spark writes %s", s.name, k, val, got, kind)
			}
		}
		wantMetrics := slices.Sorted(slices.Values(s.metrics))
		if wantMetrics == nil {
			wantMetrics = []string{}
		}
		if s.check != nil {
			if msg := s.check(ci.OperationParameters); msg != "" {
				t.Errorf("%s: %s", s.name, msg)
			}
		}
		if got := keysOf(ci.OperationMetrics); !slices.Equal(got, wantMetrics) {
			t.Errorf("%s: operationMetrics keys\n got %v\nwant %v (Spark)", s.name, got, wantMetrics)
		}
		for k, val := range ci.OperationMetrics {
			var str string
			if err := json.Unmarshal(val, &str); err != nil || !number.MatchString(str) {
				t.Errorf("%s: operationMetrics.%s = %s, want a decimal string", s.name, k, val)
			}
		}
	}
}

// jsonKind is the kind of a JSON value: s, b, n, z (null) or o (other).
func jsonKind(v json.RawMessage) string {
	switch t := strings.TrimSpace(string(v)); {
	case t == "null":
		return "z"
	case t == "true" || t == "false":
		return "b"
	case strings.HasPrefix(t, `"`):
		return "s"
	case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
		return "o"
	default:
		return "n"
	}
}

// keysOf returns the sorted keys of m (empty, not nil, when none).
func keysOf[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// commitInfoJSON returns the commitInfo object of version v of tbl's log,
// as written.
func commitInfoJSON(t *testing.T, tbl *delta.Table, v int64) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := tbl.Store().Get(ctx, deltalog.CommitKey(v))
	if err != nil {
		t.Fatalf("version %d: %v", v, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		var a struct {
			CommitInfo json.RawMessage `json:"commitInfo"`
		}
		if json.Unmarshal([]byte(line), &a) == nil && a.CommitInfo != nil {
			return a.CommitInfo
		}
	}
	t.Fatalf("version %d has no commitInfo", v)
	return nil
}
