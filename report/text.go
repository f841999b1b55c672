package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// maxPartitionsShown bounds the partitions listed, the largest.
const maxPartitionsShown = 20

func pct(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// Skew is the largest partition's bytes over the median partition's: 1
// for evenly spread data; 0 for a table without files.
func (r *Report) Skew() float64 {
	if len(r.Partitions) == 0 {
		return 0
	}
	sizes := make([]int64, len(r.Partitions))
	for i, p := range r.Partitions {
		sizes[i] = p.Bytes
	}
	slices.Sort(sizes)
	med := sizes[len(sizes)/2]
	if med == 0 {
		return 0
	}
	return float64(sizes[len(sizes)-1]) / float64(med)
}

// CommitsByDay groups the commits per UTC day, oldest first, and counts
// each day's commits per operation.
func (r *Report) CommitsByDay() []Day {
	var days []Day
	for _, c := range r.Commits {
		d := c.Time.UTC().Truncate(24 * time.Hour)
		if len(days) == 0 || !days[len(days)-1].Day.Equal(d) {
			days = append(days, Day{Day: d, Operations: map[string]int{}})
		}
		days[len(days)-1].Operations[c.Operation]++
		days[len(days)-1].Commits++
	}
	return days
}

// Day is the commits of one UTC day.
type Day struct {
	Day        time.Time
	Commits    int
	Operations map[string]int
}

// OperationNames are the operations of the history, most frequent first.
func (r *Report) OperationNames() []string {
	names := make([]string, 0, len(r.Operations))
	for n := range r.Operations {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := r.Operations[b] - r.Operations[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	// section ends the alignment of the one before: each aligns its own.
	section := func(title string) {
		tw.Flush()
		fmt.Fprintf(tw, "\n%s\n", title)
	}
	p("Table health report: %s (version %d, %s)\n\n", r.Name, r.Version, r.GeneratedAt.UTC().Format(time.RFC3339))

	p("Files\n")
	p("  live files\t%d\n", r.Files)
	p("  total size\t%s\n", formatBytes(r.Bytes))
	if r.RowsKnownFiles > 0 {
		p("  rows (from stats)\t%d in %d files\n", r.Rows, r.RowsKnownFiles)
	}
	if r.Files > 0 {
		p("  average file size\t%s\n", formatBytes(r.Bytes/r.Files))
	}
	p("  target file size\t%s\n", formatBytes(r.TargetFileSize))
	p("  small files (< %s)\t%d (%s of files, %s of bytes)\n", formatBytes(r.SmallFileSize), r.SmallFiles, pct(r.SmallFiles, r.Files), pct(r.SmallBytes, r.Bytes))
	section("File sizes")
	var most int64 = 1
	for _, b := range r.Sizes {
		most = max(most, b.Files)
	}
	for _, b := range r.Sizes {
		bar := strings.Repeat("#", int((b.Files*40+most-1)/most))
		p("  %s\t%d\t%s\t%s\n", b.Label, b.Files, formatBytes(b.Bytes), bar)
	}

	section("Partitions")
	if len(r.PartitionColumns) == 0 {
		p("  unpartitioned\n")
	} else {
		p("  columns\t%s\n", strings.Join(r.PartitionColumns, ", "))
		p("  partitions\t%d\n", len(r.Partitions))
		p("  skew (largest / median bytes)\t%.1f\n", r.Skew())
		section("Largest partitions")
		p("  partition\tfiles\tbytes\n")
		for _, pt := range r.Partitions[:min(len(r.Partitions), maxPartitionsShown)] {
			p("  %s\t%d\t%s\n", pt.Values, pt.Files, formatBytes(pt.Bytes))
		}
		if n := len(r.Partitions) - maxPartitionsShown; n > 0 {
			p("  … %d more\n", n)
		}
	}

	section("Deletion vectors")
	p("  files with a DV\t%d (%s of files)\n", r.DVFiles, pct(r.DVFiles, r.Files))
	p("  deleted rows\t%d (%s of the rows of those files)\n", r.DeletedRows, pct(r.DeletedRows, r.RowsInDVFiles))

	section("Statistics")
	p("  files with stats\t%d (%s)\n", r.StatsFiles, pct(r.StatsFiles, r.Files))
	p("  column\tmin/max\tnull count\n")
	for _, c := range r.Columns {
		p("  %s\t%s\t%s\n", c.Name, pct(c.MinMax, r.Files), pct(c.NullCount, r.Files))
	}

	section("History")
	p("  commits read\t%d\n", len(r.Commits))
	for _, op := range r.OperationNames() {
		p("  %s\t%d\n", op, r.Operations[op])
	}
	if len(r.Commits) > 0 {
		p("  first\t%s (version %d)\n", r.Commits[0].Time.Format(time.RFC3339), r.Commits[0].Version)
		last := r.Commits[len(r.Commits)-1]
		p("  last\t%s (version %d)\n", last.Time.Format(time.RFC3339), last.Version)
	}

	section("Log")
	if r.CheckpointVersion < 0 {
		p("  checkpoint\tnone\n")
	} else {
		age := "unknown age"
		if !r.CheckpointTime.IsZero() {
			age = r.GeneratedAt.Sub(r.CheckpointTime).Round(time.Second).String() + " old"
		}
		p("  checkpoint\tversion %d (%s)\n", r.CheckpointVersion, age)
	}
	p("  log tail\t%d commits to replay after it\n", r.LogTail)

	section("Maintenance (estimates from the log)")
	o := r.Optimize
	if o.Files == 0 {
		p("  OPTIMIZE\tnothing to compact (no partition has two files below %s)\n", formatBytes(r.TargetFileSize))
	} else {
		p("  OPTIMIZE\t%d files (%s) in %d partitions would become about %d: %d fewer files\n",
			o.Files, formatBytes(o.Bytes), o.Partitions, o.FilesAfter, o.FilesRemovedTotal)
	}
	v := r.Vacuum
	p("  VACUUM\t%d tombstones in the log (%s); %d (%s) older than the retention of %s, deletable now\n",
		v.Tombstones, formatBytes(v.Bytes), v.Expired, formatBytes(v.ExpiredBytes), v.Retention)
	if v.UnknownSize > 0 {
		p("  \t%d tombstones record no size\n", v.UnknownSize)
	}
	return tw.Flush()
}
