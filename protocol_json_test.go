package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/schema"
)

// checkCommitJSON reads every commit of tbl the way a strict reader
// written from PROTOCOL.md's field lists would: each line one action of a
// known kind, with only the fields the protocol defines for it, every
// required field present with its JSON type, partitionValues holding
// strings or null but never "" (the protocol's null is JSON null), a
// remove with extendedFileMetadata true carrying partitionValues and size,
// cdc with dataChange false, and no HTML escapes (\u003c, \u003e, \u0026)
// where Spark writes the characters.
func checkCommitJSON(t *testing.T, tbl *Table) {
	t.Helper()
	ctx := context.Background()
	type field struct {
		kind     string // JSON kind: string, number, bool, object, array
		required bool
	}
	str, num, boolean, obj, arr := "string", "number", "bool", "object", "array"
	req := func(k string) field { return field{k, true} }
	opt := func(k string) field { return field{k, false} }
	spec := map[string]map[string]field{
		"add": {"path": req(str), "partitionValues": req(obj), "size": req(num), "modificationTime": req(num),
			"dataChange": req(boolean), "stats": opt(str), "tags": opt(obj), "deletionVector": opt(obj),
			"baseRowId": opt(num), "defaultRowCommitVersion": opt(num), "clusteringProvider": opt(str)},
		"remove": {"path": req(str), "deletionTimestamp": opt(num), "dataChange": req(boolean),
			"extendedFileMetadata": opt(boolean), "partitionValues": opt(obj), "size": opt(num), "stats": opt(str),
			"tags": opt(obj), "deletionVector": opt(obj), "baseRowId": opt(num), "defaultRowCommitVersion": opt(num)},
		"cdc": {"path": req(str), "partitionValues": req(obj), "size": req(num), "dataChange": req(boolean), "tags": opt(obj)},
		"metaData": {"id": req(str), "name": opt(str), "description": opt(str), "format": req(obj),
			"schemaString": req(str), "partitionColumns": req(arr), "createdTime": opt(num), "configuration": req(obj)},
		"protocol":       {"minReaderVersion": req(num), "minWriterVersion": req(num), "readerFeatures": opt(arr), "writerFeatures": opt(arr)},
		"txn":            {"appId": req(str), "version": req(num), "lastUpdated": opt(num)},
		"domainMetadata": {"domain": req(str), "configuration": req(str), "removed": req(boolean)},
		"commitInfo":     nil, // free-form
	}
	kindOf := func(raw json.RawMessage) string {
		switch raw[0] {
		case '"':
			return str
		case '{':
			return obj
		case '[':
			return arr
		case 't', 'f':
			return boolean
		case 'n':
			return "null"
		}
		return num
	}
	for v := int64(0); ; v++ {
		data, err := tbl.Store().Get(ctx, deltalog.CommitKey(v))
		if err != nil {
			break
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte{'\n'}) {
			where := fmt.Sprintf("version %d line %d", v, i+1)
			for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if bytes.Contains(line, []byte(esc)) {
					t.Errorf("%s: HTML escape %s: %s", where, esc, line)
				}
			}
			var action map[string]map[string]json.RawMessage
			if err := json.Unmarshal(line, &action); err != nil || len(action) != 1 {
				t.Errorf("%s: not one action object (%v): %s", where, err, line)
				continue
			}
			for kind, fields := range action {
				want, known := spec[kind]
				if !known {
					t.Errorf("%s: unknown action %q", where, kind)
					continue
				}
				if want == nil {
					continue
				}
				for name, raw := range fields {
					f, ok := want[name]
					if !ok {
						t.Errorf("%s: %s has a field %q the protocol does not define", where, kind, name)
						continue
					}
					if got := kindOf(raw); got != f.kind {
						t.Errorf("%s: %s.%s is %s %s, want %s", where, kind, name, got, raw, f.kind)
					}
				}
				for name, f := range want {
					if _, ok := fields[name]; f.required && !ok {
						t.Errorf("%s: %s lacks required %q: %s", where, kind, name, line)
					}
				}
				if pv, ok := fields["partitionValues"]; ok && kindOf(pv) == obj {
					var vals map[string]json.RawMessage
					_ = json.Unmarshal(pv, &vals)
					for k, raw := range vals {
						if s := string(raw); s == `""` || (kindOf(raw) != str && s != "null") {
							t.Errorf("%s: %s.partitionValues[%q] = %s, want a non-empty string or null", where, kind, k, s)
						}
					}
				}
				if kind == "remove" && string(fields["extendedFileMetadata"]) == "true" {
					for _, name := range []string{"partitionValues", "size"} {
						if _, ok := fields[name]; !ok {
							t.Errorf("%s: remove with extendedFileMetadata lacks %q: %s", where, name, line)
						}
					}
				}
				if kind == "cdc" && string(fields["dataChange"]) != "false" {
					t.Errorf("%s: cdc with dataChange %s", where, fields["dataChange"])
				}
			}
		}
	}
}

// Tables this library writes read as the protocol says to a strict reader:
// null partition values as JSON null, removes with extendedFileMetadata
// complete on unpartitioned tables, predicates in commitInfo unescaped.
// (Issue 19, items 1, 2 and the HTML escape of item 4.)
func TestCommitJSONStrict(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.Long, Nullable: true},
		{Name: "s", Type: schema.String, Nullable: true},
		{Name: "n", Type: schema.Integer, Nullable: true},
		{Name: "d", Type: schema.Date, Nullable: true},
	}}
	rows := [][]schema.Value{
		{schema.LongValue(1), schema.StringValue("a"), schema.IntegerValue(1), schema.DateValue(1)},
		{schema.LongValue(2), {}, {}, {}},
		{schema.LongValue(3), schema.StringValue("a<b&c>d"), schema.IntegerValue(3), schema.DateValue(3)},
	}
	for _, tc := range []struct {
		name  string
		parts []string
	}{
		{"partitioned", []string{"s", "n", "d"}},
		{"unpartitioned", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := Create(ctx, filepath.Join(t.TempDir(), "t"), TableSpec{Schema: sch, PartitionColumns: tc.parts,
				Properties: map[string]string{"delta.enableChangeDataFeed": "true"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.AppendRows(ctx, rows, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			pred, err := ParsePredicate("id > 2 AND id < 9")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.OverwriteRows(ctx, [][]schema.Value{rows[2]}, OverwriteOptions{ReplaceWhere: pred}); err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.OverwriteRows(ctx, rows, OverwriteOptions{}); err != nil {
				t.Fatal(err)
			}
			checkCommitJSON(t, tbl)
			data, err := tbl.Store().Get(ctx, deltalog.CommitKey(2))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "`id` > 2") {
				t.Errorf("the overwrite's predicate is not in its commitInfo as written: %s", data)
			}
		})
	}
}
