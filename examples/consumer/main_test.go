package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/examples/internal/exampleenv"
	"github.com/godelta/delta/examples/internal/exampletest"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

func produce(t *testing.T, uri string, from, to int64) {
	t.Helper()
	ctx := context.Background()
	tbl, err := exampleenv.Open(ctx, uri, true)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	sink, err := tbl.Sink("test-producer", stream.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for b := from; b < to; b++ {
		row := [][]schema.Value{{schema.LongValue(b), schema.LongValue(0), schema.TimestampValue(0), schema.StringValue("x")}}
		if _, err := sink.Write(ctx, b, delta.Rows(row)); err != nil {
			t.Fatal(err)
		}
	}
}

var (
	rowsRE    = regexp.MustCompile(`: (\d+) rows`)
	resumedRE = regexp.MustCompile(`^resuming at 4:0@[0-9a-f-]{36}\nversions 4-5: 2 rows`)
)

func consumed(out string) int {
	n := 0
	for _, m := range rowsRE.FindAllStringSubmatch(out, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	return n
}

func testConsumer(t *testing.T, uri string) {
	ctx := context.Background()
	cursor := filepath.Join(t.TempDir(), "offset")
	produce(t, uri, 0, 3)
	var out bytes.Buffer
	if err := run(ctx, []string{"-table", uri, "-cursor", cursor, "-once", "-max-files", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if consumed(out.String()) != 3 {
		t.Fatalf("first run:\n%s", out.String())
	}
	produce(t, uri, 3, 5)
	out.Reset()
	if err := run(ctx, []string{"-table", uri, "-cursor", cursor, "-once"}, &out); err != nil {
		t.Fatal(err)
	}
	// The cursor names the table as well as the version and index, so
	// that it is not resumed against another table at the same path.
	if !resumedRE.MatchString(out.String()) || consumed(out.String()) != 2 {
		t.Fatalf("second run:\n%s", out.String())
	}
}

func TestConsumerLocal(t *testing.T) {
	testConsumer(t, filepath.Join(t.TempDir(), "queue"))
}

func TestConsumerS3(t *testing.T) {
	testConsumer(t, exampletest.S3Table(t))
}
