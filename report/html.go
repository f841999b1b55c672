package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"time"
)

// The HTML page is one document with inline CSS and SVG: no script, no
// font, no image and no link to fetch, so it shows the same offline.

// palette colours operations in the history chart, in order.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// bar is one bar of a chart, in SVG units.
type bar struct {
	X, Y, W, H float64
	Label      string
	Value      string
	Color      string
	Title      string
	// Anchor is a label's text-anchor: start, middle or end.
	Anchor string
}

type chart struct {
	Title  string
	Width  float64
	Height float64
	Bars   []bar
	Axis   []bar // labels under or beside bars
	Legend []bar
	Empty  string
}

// verticalBars lays out a bar chart of values with labels underneath.
func verticalBars(title string, labels []string, values []int64, fmtValue func(int64) string) chart {
	c := chart{Title: title, Width: 640, Height: 240}
	var most int64
	for _, v := range values {
		most = max(most, v)
	}
	if len(values) == 0 || most == 0 {
		c.Empty = "no data"
		c.Height = 40
		return c
	}
	slot := (c.Width - 20) / float64(len(values))
	plot := c.Height - 50
	for i, v := range values {
		h := plot * float64(v) / float64(most)
		if v > 0 && h < 1 {
			h = 1
		}
		x := 10 + float64(i)*slot
		c.Bars = append(c.Bars, bar{X: x + slot*0.1, Y: 20 + plot - h, W: slot * 0.8, H: h, Color: palette[0],
			Value: fmtValue(v), Title: labels[i] + ": " + fmtValue(v)})
		c.Axis = append(c.Axis, bar{X: x + slot/2, Y: c.Height - 15, Label: labels[i], Anchor: "middle"})
		if v > 0 {
			c.Axis = append(c.Axis, bar{X: x + slot/2, Y: 16 + plot - h, Label: fmtValue(v), Anchor: "middle"})
		}
	}
	return c
}

// horizontalBars lays out one bar per row, labelled on the left.
func horizontalBars(title string, labels []string, values []int64, color string, fmtValue func(int64) string) chart {
	c := chart{Title: title, Width: 640, Height: float64(20*len(values) + 20)}
	var most int64
	for _, v := range values {
		most = max(most, v)
	}
	if len(values) == 0 || most == 0 {
		c.Empty = "no data"
		c.Height = 40
		return c
	}
	for i, v := range values {
		w := 360 * float64(v) / float64(most)
		if v > 0 && w < 1 {
			w = 1
		}
		y := 10 + float64(i)*20
		c.Bars = append(c.Bars, bar{X: 200, Y: y, W: w, H: 14, Color: color, Value: fmtValue(v),
			Title: labels[i] + ": " + fmtValue(v)})
		c.Axis = append(c.Axis, bar{X: 195, Y: y + 11, Label: shorten(labels[i], 30), Anchor: "end"},
			bar{X: 205 + w, Y: y + 11, Label: fmtValue(v), Anchor: "start"})
	}
	return c
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// historyChart stacks each day's commits by operation.
func (r *Report) historyChart() chart {
	c := chart{Title: "Commits per day, by operation", Width: 640, Height: 260}
	days := r.CommitsByDay()
	ops := r.OperationNames()
	if len(days) == 0 {
		c.Empty = "no commits"
		c.Height = 40
		return c
	}
	color := map[string]string{}
	for i, op := range ops {
		color[op] = palette[i%len(palette)]
		c.Legend = append(c.Legend, bar{X: 10 + float64(i%4)*155, Y: c.Height - 40 + float64(i/4)*14, Color: color[op],
			Label: fmt.Sprintf("%s (%d)", shorten(op, 18), r.Operations[op])})
	}
	c.Height += float64(len(ops)/4) * 14
	most := 0
	for _, d := range days {
		most = max(most, d.Commits)
	}
	plot := 180.0
	slot := min((c.Width-20)/float64(len(days)), 40)
	for i, d := range days {
		x := 10 + float64(i)*slot
		y := 20 + plot
		for _, op := range ops {
			n := d.Operations[op]
			if n == 0 {
				continue
			}
			h := plot * float64(n) / float64(most)
			y -= h
			c.Bars = append(c.Bars, bar{X: x + slot*0.1, Y: y, W: max(slot*0.8, 1), H: h, Color: color[op],
				Title: fmt.Sprintf("%s: %d %s", d.Day.Format(time.DateOnly), n, op)})
		}
	}
	c.Axis = append(c.Axis, bar{X: 10, Y: 215, Label: days[0].Day.Format(time.DateOnly), Anchor: "start"})
	if len(days) > 1 {
		c.Axis = append(c.Axis, bar{X: 10 + float64(len(days))*slot, Y: 215, Label: days[len(days)-1].Day.Format(time.DateOnly), Anchor: "end"})
	}
	c.Axis = append(c.Axis, bar{X: 5, Y: 12, Label: fmt.Sprintf("highest: %d commits a day", most), Anchor: "start"})
	return c
}

type page struct {
	R      *Report
	Text   string
	Charts []chart
}

// WriteHTML writes the report as one self-contained HTML page with inline
// SVG charts.
func (r *Report) WriteHTML(w io.Writer) error {
	var labels []string
	var files, bytes []int64
	for _, b := range r.Sizes {
		labels = append(labels, b.Label)
		files = append(files, b.Files)
		bytes = append(bytes, b.Bytes)
	}
	count := func(v int64) string { return fmt.Sprint(v) }
	charts := []chart{
		verticalBars("File-size histogram (files)", labels, files, count),
		verticalBars("File-size histogram (bytes)", labels, bytes, formatBytes),
	}
	if len(r.PartitionColumns) > 0 {
		var pl []string
		var pb []int64
		for _, p := range r.Partitions[:min(len(r.Partitions), maxPartitionsShown)] {
			pl = append(pl, p.Values)
			pb = append(pb, p.Bytes)
		}
		charts = append(charts, horizontalBars(fmt.Sprintf("Largest partitions by bytes (%d partitions, skew %.1f)", len(r.Partitions), r.Skew()), pl, pb, palette[1], formatBytes))
	}
	var cl []string
	var cv []int64
	for _, c := range r.Columns {
		cl = append(cl, c.Name)
		cv = append(cv, c.MinMax)
	}
	sc := horizontalBars(fmt.Sprintf("Stats coverage: files with min/max per column (of %d files)", r.Files), cl, cv, palette[4], count)
	if len(r.Columns) > 0 && r.Files > 0 && len(sc.Bars) == 0 {
		sc.Empty = "no column has min/max statistics"
	}
	charts = append(charts, sc, r.historyChart())

	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		return err
	}
	return pageTemplate().Execute(w, page{R: r, Text: text.String(), Charts: charts})
}

// pageTemplate parses the page on first use rather than at init: the
// command links this package, and most runs never write a report.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"bytes": formatBytes,
		"pct":   pct,
		"f":     func(v float64) string { return fmt.Sprintf("%.1f", v) },
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Table health: {{.R.Name}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
.cards{display:flex;flex-wrap:wrap;gap:.8em}.card{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.3em}svg{display:block;margin:.5em 0;font-size:11px}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}.note{color:#666}
</style></head><body>
<h1>Table health: {{.R.Name}}</h1>
<p class="note">Version {{.R.Version}}, report made {{.R.GeneratedAt.UTC.Format "2006-01-02 15:04:05Z"}} from the Delta log (no data file was read).</p>
<div class="cards">
<div class="card"><b>{{.R.Files}}</b>live files</div>
<div class="card"><b>{{bytes .R.Bytes}}</b>total size</div>
<div class="card"><b>{{pct .R.SmallFiles .R.Files}}</b>small files (&lt; {{bytes .R.SmallFileSize}})</div>
<div class="card"><b>{{pct .R.DVFiles .R.Files}}</b>files with deletion vectors</div>
<div class="card"><b>{{pct .R.DeletedRows .R.RowsInDVFiles}}</b>rows deleted in those files</div>
<div class="card"><b>{{pct .R.StatsFiles .R.Files}}</b>files with stats</div>
<div class="card"><b>{{.R.LogTail}}</b>commits after the {{if lt .R.CheckpointVersion 0}}start (no checkpoint){{else}}checkpoint at v{{.R.CheckpointVersion}}{{end}}</div>
</div>
<h2>Maintenance (estimates from the log)</h2>
<p>OPTIMIZE: {{if .R.Optimize.Files}}{{.R.Optimize.Files}} files ({{bytes .R.Optimize.Bytes}}) in {{.R.Optimize.Partitions}} partitions would become about {{.R.Optimize.FilesAfter}} files of {{bytes .R.TargetFileSize}}.{{else}}nothing to compact.{{end}}<br>
VACUUM: {{.R.Vacuum.Tombstones}} removed files in the log ({{bytes .R.Vacuum.Bytes}}); {{.R.Vacuum.Expired}} ({{bytes .R.Vacuum.ExpiredBytes}}) older than the retention of {{.R.Vacuum.Retention}}, deletable now.</p>
{{range .Charts}}<h2>{{.Title}}</h2>
{{if .Empty}}<p class="note">{{.Empty}}</p>{{else}}<svg width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Bars}}<rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" fill="{{.Color}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Axis}}<text x="{{f .X}}" y="{{f .Y}}" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{end}}{{range .Legend}}<rect x="{{f .X}}" y="{{f .Y}}" width="10" height="10" fill="{{.Color}}"></rect><text x="{{f .X}}" y="{{f .Y}}" dx="14" dy="9">{{.Label}}</text>
{{end}}</svg>{{end}}
{{end}}<h2>Full report</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
})
