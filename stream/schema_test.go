package stream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/godelta/delta"
	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/stream"
)

// alterSchema commits a metaData action whose schema is edit's result.
func alterSchema(t *testing.T, tbl *delta.Table, edit func(*schema.StructType)) {
	t.Helper()
	ctx := context.Background()
	tx, err := tbl.Begin(ctx, delta.TxnOptions{Operation: "ALTER TABLE"})
	if err != nil {
		t.Fatal(err)
	}
	m := tx.Snapshot().Metadata()
	sch, err := schema.Parse(m.SchemaString)
	if err != nil {
		t.Fatal(err)
	}
	edit(sch)
	m.SchemaString = sch.String()
	tx.SetMetadata(m)
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSourceSchemaChanges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		props  map[string]string
		edit   func(*schema.StructType)
		column string // "" when the stream carries the change
	}{
		{"column added", nil, func(s *schema.StructType) {
			s.Fields = append(s.Fields, schema.StructField{Name: "extra", Type: schema.String, Nullable: true})
		}, ""},
		{"column renamed under column mapping", map[string]string{"delta.columnMapping.mode": "name"}, func(s *schema.StructType) {
			s.Fields[1].Name = "sequence"
		}, "seq"},
		{"column dropped under column mapping", map[string]string{"delta.columnMapping.mode": "name"}, func(s *schema.StructType) {
			s.Fields = s.Fields[:1]
		}, "seq"},
		{"column retyped", nil, func(s *schema.StructType) {
			s.Fields[1].Type = schema.String
		}, "seq"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t, "", tc.props)
			appendBatch(t, tbl, 1, 1) // v1
			src, err := stream.NewSource(ctx, tbl.Store(), stream.Options{Start: stream.FromVersion(1)})
			if err != nil {
				t.Fatal(err)
			}
			alterSchema(t, tbl, tc.edit) // v2
			if tc.column == "" {
				res, err := tbl.AppendRows(ctx, [][]schema.Value{{schema.LongValue(3), schema.LongValue(0), schema.StringValue("x")}}, delta.WriteOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := drain(t, src)
				equalKeys(t, got, append(want(1, "", 1), want(1, "", 3)...))
				if n := len(src.Schema().Fields); n != 2 || res.Version != 3 {
					t.Errorf("stream schema has %d columns, want the 2 it began with", n)
				}
				return
			}
			b, ok, err := src.TryNext(ctx) // the rows before the change
			if err != nil || !ok {
				t.Fatalf("first batch: %v %v", ok, err)
			}
			got, _ := readKeys(ctx, b)
			equalKeys(t, got, want(1, "", 1))
			_, _, err = src.TryNext(ctx)
			var se *stream.SchemaChangeError
			if !errors.As(err, &se) || se.Column != tc.column || se.Version != 2 || !errors.Is(err, stream.ErrSchemaChanged) {
				t.Fatalf("after the change: %v, want a *SchemaChangeError on %s at 2", err, tc.column)
			}
		})
	}
}
