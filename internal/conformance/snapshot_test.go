package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	delta "github.com/godelta/delta"
)

// checkSnapshot verifies a "snapshot" case: each key of expected is one
// property of the snapshot at the case's version.
func checkSnapshot(ctx context.Context, root string, c Case) error {
	var spec struct {
		Expected map[string]json.RawMessage `json:"expected"`
	}
	if err := json.Unmarshal(c.Raw, &spec); err != nil {
		return err
	}
	snap, err := openAt(ctx, root, c.Version)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range sortedKeys(spec.Expected) {
		if err := checkSnapshotKey(ctx, snap, key, spec.Expected[key]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

func checkSnapshotKey(ctx context.Context, snap *delta.Snapshot, key string, raw json.RawMessage) error {
	switch {
	case key == "version":
		return expectEqual(raw, snap.Version())
	case key == "loads":
		return expectEqual(raw, true)
	case key == "protocol":
		p := snap.Protocol()
		return expectEqual(raw, []int32{p.MinReaderVersion, p.MinWriterVersion})
	case key == "active_files" || key == "active_files_url_encoded" || key == "active_file_names":
		// Paths relative to the root as they are on storage: the log's
		// paths percent-decoded once ("url_encoded" refers to partition
		// values, which stay encoded in directory names).
		paths, err := activePaths(ctx, snap)
		if err != nil {
			return err
		}
		return expectFiles(raw, paths)
	case key == "tombstones":
		return expectTombstones(ctx, raw, snap)
	case key == "sum_numRecords":
		var sum int64
		for f, err := range snap.Files(ctx) {
			if err != nil {
				return err
			}
			var st struct {
				NumRecords int64 `json:"numRecords"`
			}
			if f.Stats == "" {
				return fmt.Errorf("file %s has no stats", f.Path)
			}
			if err := json.Unmarshal([]byte(f.Stats), &st); err != nil {
				return err
			}
			sum += st.NumRecords
		}
		return expectEqual(raw, sum)
	case strings.HasPrefix(key, "distinct_"):
		col := strings.TrimPrefix(key, "distinct_")
		seen := map[string]bool{}
		for f, err := range snap.Files(ctx) {
			if err != nil {
				return err
			}
			v, ok := f.PartitionValues[col]
			if !ok {
				return fmt.Errorf("file %s has no partition value for %q", f.Path, col)
			}
			seen[v] = true
		}
		return expectFiles(raw, sortedKeys(seen))
	case strings.HasSuffix(key, "_modification_time"):
		name := strings.TrimSuffix(key, "_modification_time")
		for f, err := range snap.Files(ctx) {
			if err != nil {
				return err
			}
			if delta.CanonicalPath(f.Path) == name {
				return expectEqual(raw, f.ModificationTime)
			}
		}
		return fmt.Errorf("no live file %q", name)
	case key == "scan_metadata_batches":
		// How an engine batches its scan metadata is its own business; the
		// other keys of the case say what the snapshot must hold.
		return nil
	}
	return fmt.Errorf("unknown expectation key (harness does not know how to check it)")
}

func activePaths(ctx context.Context, snap *delta.Snapshot) ([]string, error) {
	var out []string
	for f, err := range snap.Files(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, delta.CanonicalPath(f.Path))
	}
	return out, nil
}

// expectFiles compares a list of paths (order-insensitive) or a count.
func expectFiles(raw json.RawMessage, got []string) error {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if len(got) != n {
			return fmt.Errorf("got %d files %v, want %d", len(got), got, n)
		}
		return nil
	}
	var want []string
	if err := json.Unmarshal(raw, &want); err != nil {
		return fmt.Errorf("expected value %s is neither a count nor a list of paths", raw)
	}
	got = slices.Clone(got)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("got %q, want %q", got, want)
	}
	return nil
}

func expectTombstones(ctx context.Context, raw json.RawMessage, snap *delta.Snapshot) error {
	type tomb struct {
		Path              string `json:"path"`
		DeletionTimestamp *int64 `json:"deletionTimestamp"`
	}
	var got []tomb
	for r, err := range snap.Tombstones(ctx) {
		if err != nil {
			return err
		}
		got = append(got, tomb{r.Path, r.DeletionTimestamp})
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if len(got) != n {
			return fmt.Errorf("got %d tombstones, want %d", len(got), n)
		}
		return nil
	}
	var want []tomb
	if err := json.Unmarshal(raw, &want); err != nil {
		return err
	}
	key := func(t tomb) string {
		ts := "nil"
		if t.DeletionTimestamp != nil {
			ts = fmt.Sprint(*t.DeletionTimestamp)
		}
		return t.Path + "@" + ts
	}
	var g, w []string
	for _, t := range got {
		g = append(g, key(t))
	}
	for _, t := range want {
		w = append(w, key(t))
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		return fmt.Errorf("got %v, want %v", g, w)
	}
	return nil
}

// checkSetTransactions verifies a "set_transactions" case: expected maps app
// ids to their version; absent lists app ids that must not be found; count
// is the number of unexpired txns, count_unfiltered of all.
func checkSetTransactions(ctx context.Context, root string, c Case) error {
	var spec struct {
		Expected map[string]struct {
			Version int64 `json:"version"`
		} `json:"expected"`
		Absent          []string `json:"absent"`
		Count           *int     `json:"count"`
		CountUnfiltered *int     `json:"count_unfiltered"`
	}
	if err := json.Unmarshal(c.Raw, &spec); err != nil {
		return err
	}
	snap, err := openAt(ctx, root, c.Version)
	if err != nil {
		return err
	}
	var errs []error
	for app, want := range spec.Expected {
		v, ok, err := snap.TxnVersion(ctx, app)
		if err != nil {
			return err
		}
		if !ok || v != want.Version {
			errs = append(errs, fmt.Errorf("app %q: got version %d (found %v), want %d", app, v, ok, want.Version))
		}
	}
	for _, app := range spec.Absent {
		if v, ok, err := snap.TxnVersion(ctx, app); err != nil {
			return err
		} else if ok {
			errs = append(errs, fmt.Errorf("app %q: found version %d, want absent", app, v))
		}
	}
	all, live := 0, 0
	for txn, err := range snap.Txns(ctx) {
		if err != nil {
			return err
		}
		all++
		if _, ok, err := snap.TxnVersion(ctx, txn.AppID); err != nil {
			return err
		} else if ok {
			live++
		}
	}
	if spec.Count != nil && live != *spec.Count {
		errs = append(errs, fmt.Errorf("count: got %d unexpired txns, want %d", live, *spec.Count))
	}
	if spec.CountUnfiltered != nil && all != *spec.CountUnfiltered {
		errs = append(errs, fmt.Errorf("count_unfiltered: got %d txns, want %d", all, *spec.CountUnfiltered))
	}
	return errors.Join(errs...)
}

// expectEqual compares a JSON expectation with a Go value by their JSON.
func expectEqual(raw json.RawMessage, got any) error {
	var want, have any
	if err := json.Unmarshal(raw, &want); err != nil {
		return err
	}
	b, err := json.Marshal(got)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &have); err != nil {
		return err
	}
	wb, _ := json.Marshal(want)
	hb, _ := json.Marshal(have)
	if string(wb) != string(hb) {
		return fmt.Errorf("got %s, want %s", hb, wb)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkPartitionFilter verifies a "partition_filter_files" case: the files
// left after partition pruning with filter, as a count or a list of paths.
func checkPartitionFilter(ctx context.Context, root string, c Case) error {
	var spec struct {
		Filter   string `json:"filter"`
		Expected struct {
			FileCount *int     `json:"file_count"`
			Files     []string `json:"files"`
		} `json:"expected"`
	}
	if err := json.Unmarshal(c.Raw, &spec); err != nil {
		return err
	}
	snap, err := openAt(ctx, root, c.Version)
	if err != nil {
		return err
	}
	pred, err := delta.ParsePredicate(spec.Filter)
	if err != nil {
		return err
	}
	files, err := snap.FilesWhere(ctx, pred)
	if err != nil {
		return err
	}
	var got []string
	for f, err := range files {
		if err != nil {
			return err
		}
		got = append(got, delta.CanonicalPath(f.Path))
	}
	switch {
	case spec.Expected.FileCount != nil:
		if len(got) != *spec.Expected.FileCount {
			return fmt.Errorf("filter %q: got %d files %v, want %d", spec.Filter, len(got), got, *spec.Expected.FileCount)
		}
	case spec.Expected.Files != nil:
		raw, _ := json.Marshal(spec.Expected.Files)
		return expectFiles(raw, got)
	default:
		return fmt.Errorf("case has neither file_count nor files")
	}
	return nil
}
