// Package report builds a table-health report of a Delta table from its log
// alone: how its data files are sized and spread over partitions, how much
// of it deletion vectors hide, which columns have statistics, how it has
// been written over time, how far the log is from its last checkpoint, and
// what OPTIMIZE and VACUUM would gain. Operators look at it to decide what
// maintenance a table needs; `delta report` prints it as text or writes it
// as one self-contained HTML page with inline SVG charts (no script, no
// network at view time).
//
// # What it reads
//
// Build reads the snapshot's file actions and tombstones and the table's
// commit history; it reads no data file and stats no object. Every figure
// is therefore what the log says: file sizes and row counts as the add
// actions record them, deleted rows as the deletion vectors' cardinality.
// The OPTIMIZE and VACUUM gains are estimates: OPTIMIZE's assumes every
// partition's files below the target size are rewritten into files of the
// target size; VACUUM's counts the tombstones still in the log (a file may
// already be gone from storage, and files no log entry names are not
// counted), those past delta.deletedFileRetentionDuration being deletable
// now.
//
// The package does not import Arrow: programs that only want the report
// do not link it.
//
// # Concurrency and errors
//
// A *Report is plain data, safe to read concurrently once built. Build
// returns the snapshot's and the store's errors as they come (their kinds
// in package deltaerr), and expr.ErrInvalidStats wrapped with the file's
// path for stats JSON that cannot be decoded.
package report

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/snapshot"
	"github.com/godelta/delta/write"
)

// Options tune Build. The zero value is usable.
type Options struct {
	// Name is the table's name or URI, shown as the report's title.
	Name string
	// Now is the time the ages are measured at; zero means time.Now().
	Now time.Time
	// HistoryLimit bounds the commits read for the history chart, the
	// newest; 0 means 10000.
	HistoryLimit int
}

// Report is the health of one table version. Byte and file counts are
// from the add actions of the snapshot.
type Report struct {
	Name        string
	Version     int64
	GeneratedAt time.Time

	// Files and Bytes are the live data files and their total size.
	Files, Bytes int64
	// Rows is the sum of numRecords over the files whose stats have it
	// (RowsKnownFiles of them).
	Rows, RowsKnownFiles int64

	// TargetFileSize is delta.targetFileSize, else the writer's default;
	// SmallFileSize is a quarter of it: files below it are "small".
	TargetFileSize, SmallFileSize int64
	SmallFiles, SmallBytes        int64
	// Sizes is the file-size histogram.
	Sizes []Bucket

	// PartitionColumns are the table's; Partitions has one entry per
	// partition (one for an unpartitioned table), largest first.
	PartitionColumns []string
	Partitions       []Partition

	// DVFiles have a deletion vector, hiding DeletedRows of the
	// RowsInDVFiles their stats count.
	DVFiles, DeletedRows, RowsInDVFiles int64

	// StatsFiles have stats with numRecords; Columns gives per leaf
	// column how many files have min/max and null counts.
	StatsFiles int64
	Columns    []ColumnStats

	// Commits are the history, oldest first; Operations the count per
	// operation.
	Commits    []Commit
	Operations map[string]int

	// CheckpointVersion is -1 when the log has no checkpoint;
	// CheckpointTime is zero when unknown. LogTail is the number of
	// commits after it, which every reader replays.
	CheckpointVersion int64
	CheckpointTime    time.Time
	LogTail           int

	Optimize Optimize
	Vacuum   Vacuum
}

// Bucket is one bar of the file-size histogram: files of size in [Lo, Hi)
// (Hi 0: no upper bound).
type Bucket struct {
	Label        string
	Lo, Hi       int64
	Files, Bytes int64
}

// Partition is the files of one partition.
type Partition struct {
	// Values is "col=value/col2=value2"; "" for an unpartitioned table.
	Values       string
	Files, Bytes int64
	// SmallFiles are below the target size: what OPTIMIZE would compact.
	SmallFiles, SmallBytes int64
}

// ColumnStats is the statistics coverage of one leaf column.
type ColumnStats struct {
	Name string
	// MinMax files have a min or max for it, NullCount files a null count.
	MinMax, NullCount int64
}

// Commit is one commit of the history.
type Commit struct {
	Version   int64
	Time      time.Time
	Operation string
}

// Optimize estimates what bin-packing OPTIMIZE would do: in each partition
// with at least two files below the target size, those files rewritten
// into files of the target size.
type Optimize struct {
	Partitions        int
	Files, Bytes      int64
	FilesAfter        int64
	FilesRemovedTotal int64
}

// Vacuum estimates what VACUUM would delete, from the tombstones in the
// log.
type Vacuum struct {
	Retention time.Duration
	// Tombstones are the removes still in the log; Bytes their sizes
	// where recorded (UnknownSize of them have none).
	Tombstones, Bytes, UnknownSize int64
	// Expired are older than the retention: deletable now.
	Expired, ExpiredBytes int64
}

// sizeEdges are the histogram's bucket bounds.
var sizeEdges = []int64{0, 1 << 20, 8 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20, 1 << 30}

// Build makes the report of snap.
func Build(ctx context.Context, snap *snapshot.Snapshot, opts Options) (*Report, error) {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cfg := snap.Config()
	meta := snap.Metadata()
	r := &Report{Name: opts.Name, Version: snap.Version(), GeneratedAt: now,
		PartitionColumns: meta.PartitionColumns, Operations: map[string]int{}, CheckpointVersion: -1}
	r.TargetFileSize = write.DefaultTargetFileSize
	if t, ok := cfg.TargetFileSize(); ok && t > 0 {
		r.TargetFileSize = t
	}
	r.SmallFileSize = r.TargetFileSize / 4
	for i := range sizeEdges {
		b := Bucket{Lo: sizeEdges[i]}
		if i+1 < len(sizeEdges) {
			b.Hi = sizeEdges[i+1]
			b.Label = "< " + formatBytes(b.Hi)
		} else {
			b.Label = "≥ " + formatBytes(b.Lo)
		}
		r.Sizes = append(r.Sizes, b)
	}

	sch := snap.Schema()
	// Partition columns have no stats: their values are in the log.
	leaves := slices.DeleteFunc(leafColumns(sch, ""), func(c string) bool { return slices.Contains(meta.PartitionColumns, c) })
	dec := expr.NewStatsDecoder(sch, cfg.ColumnMappingMode(), nil)
	cols := make([]ColumnStats, len(leaves))
	for i, l := range leaves {
		cols[i].Name = l
	}
	parts := map[string]*Partition{}
	var key strings.Builder
	for add, err := range snap.Files(ctx) {
		if err != nil {
			return nil, err
		}
		r.Files++
		r.Bytes += add.Size
		for i := len(r.Sizes) - 1; i >= 0; i-- {
			if add.Size >= r.Sizes[i].Lo {
				r.Sizes[i].Files++
				r.Sizes[i].Bytes += add.Size
				break
			}
		}
		small := add.Size < r.SmallFileSize
		if small {
			r.SmallFiles++
			r.SmallBytes += add.Size
		}
		key.Reset()
		for i, c := range r.PartitionColumns {
			if i > 0 {
				key.WriteByte('/')
			}
			v, ok := partitionValue(add.PartitionValues, c, sch, cfg.ColumnMappingMode())
			key.WriteString(c)
			key.WriteByte('=')
			if !ok {
				key.WriteString("null")
			} else {
				key.WriteString(v)
			}
		}
		p := parts[key.String()]
		if p == nil {
			p = &Partition{Values: key.String()}
			parts[p.Values] = p
		}
		p.Files++
		p.Bytes += add.Size
		if add.Size < r.TargetFileSize {
			p.SmallFiles++
			p.SmallBytes += add.Size
		}

		var rows int64 = -1
		if add.Stats != "" {
			st, err := dec.Decode(add.Stats)
			if err != nil {
				return nil, fmt.Errorf("stats of %s: %w", add.Path, err)
			}
			if n, ok := st.NumRecords(); ok {
				rows = n
				r.StatsFiles++
				r.Rows += n
				r.RowsKnownFiles++
			}
			for i, l := range leaves {
				_, okMin := st.Min(l)
				_, okMax := st.Max(l)
				if okMin || okMax {
					cols[i].MinMax++
				}
				if _, ok := st.NullCount(l); ok {
					cols[i].NullCount++
				}
			}
		}
		if dv := add.DeletionVector; dv != nil {
			r.DVFiles++
			r.DeletedRows += dv.Cardinality
			if rows >= 0 {
				r.RowsInDVFiles += rows
			}
		}
	}
	r.Columns = cols
	for _, p := range parts {
		r.Partitions = append(r.Partitions, *p)
	}
	sort.Slice(r.Partitions, func(i, j int) bool {
		a, b := r.Partitions[i], r.Partitions[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Values < b.Values
	})
	for _, p := range r.Partitions {
		if p.SmallFiles < 2 {
			continue
		}
		after := (p.SmallBytes + r.TargetFileSize - 1) / r.TargetFileSize
		r.Optimize.Partitions++
		r.Optimize.Files += p.SmallFiles
		r.Optimize.Bytes += p.SmallBytes
		r.Optimize.FilesAfter += after
	}
	r.Optimize.FilesRemovedTotal = r.Optimize.Files - r.Optimize.FilesAfter

	r.Vacuum.Retention = cfg.DeletedFileRetention()
	cutoff := now.Add(-r.Vacuum.Retention).UnixMilli()
	for rm, err := range snap.Tombstones(ctx) {
		if err != nil {
			return nil, err
		}
		r.Vacuum.Tombstones++
		var size int64
		if rm.Size != nil {
			size = *rm.Size
			r.Vacuum.Bytes += size
		} else {
			r.Vacuum.UnknownSize++
		}
		if rm.DeletionTimestamp == nil || *rm.DeletionTimestamp < cutoff {
			r.Vacuum.Expired++
			r.Vacuum.ExpiredBytes += size
		}
	}

	seg := snap.Segment()
	if v, ok := seg.CheckpointVersion(); ok {
		r.CheckpointVersion = v
		if mt := seg.Checkpoint[0].ModTime; mt > 0 {
			r.CheckpointTime = time.UnixMilli(mt).UTC()
		}
	}
	r.LogTail = len(seg.Commits)

	limit := opts.HistoryLimit
	if limit == 0 {
		limit = 10000
	}
	hist, err := snapshot.History(ctx, snap.Store(), limit)
	if err != nil {
		return nil, err
	}
	for i := len(hist) - 1; i >= 0; i-- {
		c := hist[i]
		if c.Version > r.Version {
			continue
		}
		op := "UNKNOWN"
		if c.HasInfo && c.Info.Operation != "" {
			op = c.Info.Operation
		}
		r.Commits = append(r.Commits, Commit{Version: c.Version, Time: c.Timestamp.UTC(), Operation: op})
		r.Operations[op]++
	}
	return r, nil
}

// partitionValue returns the serialized value of partition column c,
// whose key in partitionValues is its physical name under column mapping.
func partitionValue(pv map[string]string, c string, sch *schema.StructType, mode schema.ColumnMappingMode) (string, bool) {
	name := c
	if f, ok := sch.Field(c); ok {
		name = f.PhysicalName(mode)
	}
	v, ok := pv[name]
	if !ok || v == "" {
		return "", false
	}
	return v, true
}

// leafColumns are the dotted paths of the columns stats are kept for:
// struct fields are descended into; arrays and maps are leaves.
func leafColumns(s *schema.StructType, prefix string) []string {
	var out []string
	for _, f := range s.Fields {
		if st, ok := f.Type.(*schema.StructType); ok {
			out = append(out, leafColumns(st, prefix+f.Name+".")...)
			continue
		}
		out = append(out, prefix+f.Name)
	}
	return out
}

// formatBytes writes n in binary units: 512 B, 1.5 KiB, 128 MiB.
func formatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
