package checksum

import (
	"fmt"
	"maps"
	"slices"

	"github.com/godelta/delta/actions"
)

// Compare returns the differences between got (say, a .crc file) and
// want (say, the checksum computed from a replay of the same version), one
// readable line each; none when they agree. The totals, numMetadata and
// numProtocol are always compared; protocol, metaData, in-commit
// timestamp, set transactions, domain metadata, the histograms, the
// deletion vector counts and allFiles only when both record them, since
// each is optional or was added to the format later (Spark's
// ValidateChecksum does the same). txnId is not compared: it names a
// transaction, not the table's state. Feature lists, set transactions,
// domains and files are compared as sets.
func Compare(got, want *VersionChecksum) []string {
	if got == nil || want == nil {
		if got != want {
			return []string{"one checksum is missing"}
		}
		return nil
	}
	var diffs []string
	diff := func(field string, g, w any) {
		diffs = append(diffs, fmt.Sprintf("%s: got %v, want %v", field, g, w))
	}
	for _, f := range []struct {
		name string
		g, w int64
	}{
		{"tableSizeBytes", got.TableSizeBytes, want.TableSizeBytes},
		{"numFiles", got.NumFiles, want.NumFiles},
		{"numMetadata", got.NumMetadata, want.NumMetadata},
		{"numProtocol", got.NumProtocol, want.NumProtocol},
	} {
		if f.g != f.w {
			diff(f.name, f.g, f.w)
		}
	}
	if got.Protocol != nil && want.Protocol != nil && !sameProtocol(got.Protocol, want.Protocol) {
		diff("protocol", fmt.Sprintf("%+v", *got.Protocol), fmt.Sprintf("%+v", *want.Protocol))
	}
	if got.Metadata != nil && want.Metadata != nil {
		for _, d := range metadataDiffs(got.Metadata, want.Metadata) {
			diffs = append(diffs, "metadata."+d)
		}
	}
	if g, w := got.InCommitTimestamp, want.InCommitTimestamp; g != nil && w != nil && *g != *w {
		diff("inCommitTimestampOpt", *g, *w)
	}
	if g, w := got.NumDeletedRecords, want.NumDeletedRecords; g != nil && w != nil && *g != *w {
		diff("numDeletedRecordsOpt", *g, *w)
	}
	if g, w := got.NumDeletionVectors, want.NumDeletionVectors; g != nil && w != nil && *g != *w {
		diff("numDeletionVectorsOpt", *g, *w)
	}
	if g, w := got.FileSizeHistogram, want.FileSizeHistogram; g != nil && w != nil {
		switch {
		case !slices.Equal(g.SortedBinBoundaries, w.SortedBinBoundaries):
			diff("fileSizeHistogram.sortedBinBoundaries", g.SortedBinBoundaries, w.SortedBinBoundaries)
		case !slices.Equal(g.FileCounts, w.FileCounts):
			diff("fileSizeHistogram.fileCounts", g.FileCounts, w.FileCounts)
		case !slices.Equal(g.TotalBytes, w.TotalBytes):
			diff("fileSizeHistogram.totalBytes", g.TotalBytes, w.TotalBytes)
		}
	}
	if g, w := got.DeletedRecordCountsHistogram, want.DeletedRecordCountsHistogram; g != nil && w != nil && !slices.Equal(g.DeletedRecordCounts, w.DeletedRecordCounts) {
		diff("deletedRecordCountsHistogramOpt", g.DeletedRecordCounts, w.DeletedRecordCounts)
	}
	if got.SetTransactions != nil && want.SetTransactions != nil {
		key := func(t actions.Txn) string { return t.AppID }
		val := func(t actions.Txn) string {
			s := fmt.Sprintf("version %d", t.Version)
			if t.LastUpdated != nil {
				s += fmt.Sprintf(", lastUpdated %d", *t.LastUpdated)
			}
			return s
		}
		diffs = append(diffs, setDiffs("setTransactions", got.SetTransactions, want.SetTransactions, key, val)...)
	}
	if got.DomainMetadata != nil && want.DomainMetadata != nil {
		key := func(d actions.DomainMetadata) string { return d.Domain }
		val := func(d actions.DomainMetadata) string { return fmt.Sprintf("%q", d.Configuration) }
		diffs = append(diffs, setDiffs("domainMetadata", got.DomainMetadata, want.DomainMetadata, key, val)...)
	}
	if got.AllFiles != nil && want.AllFiles != nil {
		key := func(a actions.Add) string {
			if a.DeletionVector != nil {
				return a.Path + " (deletion vector " + a.DeletionVector.UniqueID() + ")"
			}
			return a.Path
		}
		val := func(a actions.Add) string { return fmt.Sprintf("size %d", a.Size) }
		diffs = append(diffs, setDiffs("allFiles", got.AllFiles, want.AllFiles, key, val)...)
	}
	return diffs
}

// setDiffs compares two lists as sets keyed by key: what only one has,
// and what both have with different values.
func setDiffs[T any](field string, got, want []T, key, val func(T) string) []string {
	g, w := map[string]string{}, map[string]string{}
	for _, x := range got {
		g[key(x)] = val(x)
	}
	for _, x := range want {
		w[key(x)] = val(x)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(g)) {
		wv, ok := w[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: %s (%s) is extra", field, k, g[k]))
		case wv != g[k]:
			out = append(out, fmt.Sprintf("%s: %s: got %s, want %s", field, k, g[k], wv))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w)) {
		if _, ok := g[k]; !ok {
			out = append(out, fmt.Sprintf("%s: %s (%s) is missing", field, k, w[k]))
		}
	}
	return out
}

func sameProtocol(a, b *actions.Protocol) bool {
	set := func(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }
	return a.MinReaderVersion == b.MinReaderVersion && a.MinWriterVersion == b.MinWriterVersion &&
		slices.Equal(set(a.ReaderFeatures), set(b.ReaderFeatures)) && slices.Equal(set(a.WriterFeatures), set(b.WriterFeatures))
}

// metadataDiffs compares two metaData actions field by field; nil and
// empty maps and lists are the same.
func metadataDiffs(g, w *actions.Metadata) []string {
	var out []string
	add := func(field string, gv, wv any) { out = append(out, fmt.Sprintf("%s: got %v, want %v", field, gv, wv)) }
	if g.ID != w.ID {
		add("id", g.ID, w.ID)
	}
	if g.Name != w.Name {
		add("name", g.Name, w.Name)
	}
	if g.Description != w.Description {
		add("description", g.Description, w.Description)
	}
	if g.Format.Provider != w.Format.Provider || !maps.Equal(g.Format.Options, w.Format.Options) {
		add("format", g.Format, w.Format)
	}
	if g.SchemaString != w.SchemaString {
		add("schemaString", g.SchemaString, w.SchemaString)
	}
	if !slices.Equal(g.PartitionColumns, w.PartitionColumns) {
		add("partitionColumns", g.PartitionColumns, w.PartitionColumns)
	}
	if (g.CreatedTime == nil) != (w.CreatedTime == nil) || g.CreatedTime != nil && *g.CreatedTime != *w.CreatedTime {
		add("createdTime", ptrString(g.CreatedTime), ptrString(w.CreatedTime))
	}
	if !maps.Equal(g.Configuration, w.Configuration) {
		add("configuration", g.Configuration, w.Configuration)
	}
	return out
}

func ptrString(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
