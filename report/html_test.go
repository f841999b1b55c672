package report_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	delta "github.com/godelta/delta"
	"github.com/godelta/delta/bench/synth"
	"github.com/godelta/delta/logstore/local"
	"github.com/godelta/delta/report"
	"github.com/godelta/delta/testutil"
)

// chromium returns the headless browser the HTML tests open pages in. It
// skips the test when there is none, and fails it under CI (.ci/run
// installs Debian's chromium package).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found on PATH: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("chromium not found on PATH: install Debian's chromium package to run the HTML report test")
	return ""
}

// browse opens file in headless Chromium: once to dump the DOM it
// rendered, once for a screenshot. It returns the DOM, the screenshot and
// the console messages the page logged (Chromium prints them to stderr
// as INFO:CONSOLE lines).
func browse(t *testing.T, bin, file string) (dom string, shot image.Image, console []string) {
	t.Helper()
	run := func(extra ...string) ([]byte, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
			"--enable-logging=stderr", "--v=0", "--window-size=1000,2400"}, extra...)
		args = append(args, "file://"+file)
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, errOut.String())
		}
		return out.Bytes(), errOut.String()
	}
	out, stderr := run("--dump-dom")
	for line := range strings.Lines(stderr) {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, strings.TrimSpace(line))
		}
	}
	png := filepath.Join(t.TempDir(), "shot.png")
	run("--screenshot=" + png)
	f, err := os.Open(png)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := pngDecode(f)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("REPORT_SCREENSHOTS"); dir != "" {
		b, _ := os.ReadFile(png)
		_ = os.WriteFile(filepath.Join(dir, filepath.Base(filepath.Dir(file))+".png"), b, 0o644)
	}
	return string(out), img, console
}

var pngDecode = png.Decode

var (
	svgRE  = regexp.MustCompile(`(?s)<svg[^>]*>(.*?)</svg>`)
	rectRE = regexp.MustCompile(`<rect [^>]*width="([0-9.]+)" height="([0-9.]+)"`)
)

// countColor counts the pixels of img of colour hex (#rrggbb).
func countColor(img image.Image, hex string) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	want := color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(bl>>8) == want.B {
				n++
			}
		}
	}
	return n
}

// checkPage checks a rendered report: at least minCharts SVG charts, each
// with a bar of non-zero area, bars visible in the screenshot in the
// charts' colours, and no console message (the page has no script, and
// its Content-Security-Policy turns any fetch into a console error).
func checkPage(t *testing.T, bin, file string, minCharts int, colors ...string) {
	t.Helper()
	dom, shot, console := browse(t, bin, file)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	svgs := svgRE.FindAllStringSubmatch(dom, -1)
	if len(svgs) < minCharts {
		t.Fatalf("%d SVG charts rendered, want at least %d", len(svgs), minCharts)
	}
	for i, s := range svgs {
		bars := 0
		for _, m := range rectRE.FindAllStringSubmatch(s[1], -1) {
			w, _ := strconv.ParseFloat(m[1], 64)
			h, _ := strconv.ParseFloat(m[2], 64)
			if w > 0 && h > 0 {
				bars++
			}
		}
		if bars == 0 {
			t.Errorf("chart %d has no bar of non-zero size", i)
		}
	}
	for _, c := range colors {
		if n := countColor(shot, c); n < 200 {
			t.Errorf("screenshot has %d pixels of bar colour %s: the charts did not render", n, c)
		}
	}
}

func writeHTML(t *testing.T, r *report.Report) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("http://")) || bytes.Contains(b.Bytes(), []byte("https://")) || bytes.Contains(b.Bytes(), []byte("<script")) {
		t.Fatal("the page links out or has a script")
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestHTMLInChromium renders the report of a corpus table and of a
// generated 100k-file table in headless Chromium.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	ctx := context.Background()

	t.Run("console check works", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "bad.html")
		page := `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head>` +
			`<body><img src="http://192.0.2.1/x.png"></body></html>`
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, console := browse(t, bin, file); len(console) == 0 {
			t.Fatal("a blocked fetch logged no console message: the console check would miss errors")
		}
	})

	t.Run("corpus", func(t *testing.T) {
		r := buildReport(t, filepath.Join(testutil.CorpusDir(t), "golden/data-reader-partition-values/delta"))
		// histogram ×2, partitions, history; the stats chart is a note
		// (the table has no stats).
		checkPage(t, bin, writeHTML(t, r), 4, "#4e79a7", "#f28e2b")
	})

	t.Run("100k files", func(t *testing.T) {
		root := t.TempDir()
		store, err := local.New(root)
		if err != nil {
			t.Fatal(err)
		}
		const n, k = 100_000, 5
		live, err := synth.Build(ctx, store, n, k)
		if err != nil {
			t.Fatal(err)
		}
		r := buildReport(t, root)
		if r.Files != int64(live) || r.StatsFiles != int64(live) || r.LogTail != k || r.Vacuum.Tombstones != 5*k {
			t.Fatalf("files %d stats %d tail %d tombstones %d, want %d, %d, %d, %d", r.Files, r.StatsFiles, r.LogTail, r.Vacuum.Tombstones, live, live, k, 5*k)
		}
		checkPage(t, bin, writeHTML(t, r), 5, "#4e79a7", "#f28e2b", "#59a14f")
	})
}

// buildReport opens the table at dir and builds its report.
func buildReport(t *testing.T, dir string) *report.Report {
	t.Helper()
	ctx := context.Background()
	tb, err := delta.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Build(ctx, snap, report.Options{Name: filepath.Base(dir)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
