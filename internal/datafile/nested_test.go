package datafile_test

import (
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/godelta/delta/internal/datafile"
	"github.com/godelta/delta/schema"
)

func list(elems ...any) []any { return elems }

func kv(k string, v any) map[string]any { return row("key", k, "value", v) }

// TestNested reads structs, arrays and maps: null and empty kept apart,
// null elements and values kept.
func TestNested(t *testing.T) {
	intList := stdList(parquet.Optional(parquet.Int(32)))
	mapGroup := func(value parquet.Node) parquet.Node {
		return parquet.Optional(parquet.Group{"key_value": parquet.Repeated(parquet.Group{
			"key": parquet.String(), "value": value,
		})})
	}
	root := parquet.Group{
		"id": parquet.Int(64),
		"l":  intList,
		"s": parquet.Optional(parquet.Group{
			"a": parquet.Optional(parquet.Int(32)),
			"b": parquet.Optional(parquet.Group{"c": parquet.Optional(parquet.String())}),
		}),
		"m":  mapGroup(parquet.Optional(parquet.Int(64))),
		"ll": stdList(stdList(parquet.Optional(parquet.String()))),
		"ls": stdList(parquet.Optional(parquet.Group{
			"x": parquet.Optional(parquet.Int(32)),
			"y": stdList(parquet.Int(32)),
		})),
		"ml": mapGroup(stdList(parquet.Optional(parquet.Int(32)))),
	}
	patches := []patch{autoAnnotate}
	rows := rowsOf(
		row("id", int64(0), "l", lst(int32(1), nil, int32(3)), "s", row("a", int32(1), "b", row("c", "x")),
			"m", row("key_value", list(kv("a", int64(1)), kv("b", nil))),
			"ll", lst(lst("p", nil), nil, lst()), "ls", lst(row("x", int32(1), "y", lst(int32(2), int32(3))), nil, row("x", nil, "y", nil)),
			"ml", row("key_value", list(kv("k", lst(int32(1), nil)), kv("n", nil), kv("e", lst())))),
		row("id", int64(1), "l", nil, "s", nil, "m", nil, "ll", nil, "ls", nil, "ml", nil),
		row("id", int64(2), "l", lst(), "s", row("a", nil, "b", nil), "m", row("key_value", list()),
			"ll", lst(), "ls", lst(), "ml", row("key_value", list())),
		row("id", int64(3), "l", lst(nil), "s", row("a", int32(2), "b", row("c", nil)), "m", row("key_value", list(kv("z", int64(-1)))),
			"ll", lst(nil), "ls", lst(nil), "ml", nil),
	)
	want := st(
		fld("id", schema.Long),
		fld("l", arr(schema.Integer)),
		fld("s", st(fld("a", schema.Integer), fld("b", st(fld("c", schema.String))))),
		fld("m", mp(schema.String, schema.Long)),
		fld("ll", arr(arr(schema.String))),
		fld("ls", arr(st(fld("x", schema.Integer), fld("y", arr(schema.Integer))))),
		fld("ml", mp(schema.String, arr(schema.Integer))),
	)
	runCases(t, []readCase{{
		name: "all", root: root, rows: rows, patches: patches, want: want,
		expect: `
			[0, [1, null, 3], {1, {x}}, {a: 1, b: null}, [[p, null], null, []], [{1, [2, 3]}, null, {null, null}], {k: [1, null], n: null, e: []}]
			[1, null, null, null, null, null, null]
			[2, [], {null, null}, {}, [], [], {}]
			[3, [null], {2, {null}}, {z: -1}, [null], [null], null]`,
	}, {
		name: "batches of one", root: root, rows: rows, patches: patches, want: want, opts: datafile.ReadOptions{BatchSize: 1},
		expect: `
			[0, [1, null, 3], {1, {x}}, {a: 1, b: null}, [[p, null], null, []], [{1, [2, 3]}, null, {null, null}], {k: [1, null], n: null, e: []}]
			[1, null, null, null, null, null, null]
			[2, [], {null, null}, {}, [], [], {}]
			[3, [null], {2, {null}}, {z: -1}, [null], [null], null]`,
	}, {
		name: "projection of nested fields", root: root, rows: rows, patches: patches,
		want: st(fld("ls", arr(st(fld("y", arr(schema.Long))))), fld("s", st(fld("b", st(fld("c", schema.String))))), fld("id", schema.Long)),
		expect: `
			[[{[2, 3]}, null, {null}], {{x}}, 0]
			[null, null, 1]
			[[], {null}, 2]
			[[null], {{null}}, 3]`,
	}, {
		name: "missing nested fields", root: root, rows: rows, patches: patches,
		want: st(
			fld("s", st(fld("nope", schema.Long), fld("b", st(fld("gone", schema.String))))),
			fld("ls", arr(st(fld("z", schema.String)))),
			fld("l", arr(schema.Void)),
			fld("absent", st(fld("a", schema.Long))),
			fld("m", mp(schema.String, schema.Void)),
		),
		expect: `
			[{null, {null}}, [{null}, null, {null}], [null, null, null], null, {a: null, b: null}]
			[null, null, null, null, null]
			[{null, null}, [], [], null, {}]
			[{null, {null}}, [null], [null], null, {z: null}]`,
	}})
}

// TestLegacyLists reads the list and map layouts of LogicalTypes.md's
// backward-compatibility rules, as parquet-mr and Spark's legacy format
// write them.
func TestLegacyLists(t *testing.T) {
	cases := []readCase{{
		name:    "two-level primitive",
		root:    parquet.Group{"l": parquet.Optional(parquet.Group{"array": parquet.Repeated(parquet.Int(32))})},
		rows:    rowsOf(row("l", row("array", list(int32(1), int32(2)))), row("l", nil), row("l", row("array", list()))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(schema.Integer))),
		expect: `
			[[1, 2]]
			[null]
			[[]]`,
	}, {
		name: "spark legacy bag of nullable elements",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"bag": parquet.Repeated(parquet.Group{
			"array": parquet.Optional(parquet.String())})})},
		rows:    rowsOf(row("l", row("bag", list(row("array", "a"), row("array", nil)))), row("l", nil), row("l", row("bag", list()))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(schema.String))),
		expect: `
			[[a, null]]
			[null]
			[[]]`,
	}, {
		name: "repeated group of several fields is the element",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"array": parquet.Repeated(parquet.Group{
			"a": parquet.Optional(parquet.Int(32)), "b": parquet.Optional(parquet.String())})})},
		rows:    rowsOf(row("l", row("array", list(row("a", int32(1), "b", "x"), row("a", nil, "b", nil))))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(st(fld("a", schema.Integer), fld("b", schema.String))))),
		expect:  `[[{1, x}, {null, null}]]`,
	}, {
		name: "repeated group named array is the element",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"array": parquet.Repeated(parquet.Group{
			"x": parquet.Optional(parquet.Group{"y": parquet.Optional(parquet.Int(32))})})})},
		rows:    rowsOf(row("l", row("array", list(row("x", row("y", int32(1))), row("x", nil))))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(st(fld("x", st(fld("y", schema.Integer))))))),
		expect:  `[[{{1}}, {null}]]`,
	}, {
		name: "repeated group named _tuple is the element",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"l_tuple": parquet.Repeated(parquet.Group{
			"x": parquet.Optional(parquet.Group{"y": parquet.Optional(parquet.Int(32))})})})},
		rows:    rowsOf(row("l", row("l_tuple", list(row("x", row("y", int32(1))))))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(st(fld("x", st(fld("y", schema.Integer))))))),
		expect:  `[[{{1}}]]`,
	}, {
		name: "repeated group of one struct field is three-level",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"list": parquet.Repeated(parquet.Group{
			"element": parquet.Optional(parquet.Group{"y": parquet.Optional(parquet.Int(32))})})})},
		rows:    rowsOf(row("l", row("list", list(row("element", row("y", int32(1))), row("element", nil))))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(st(fld("y", schema.Integer))))),
		expect:  `[[{1}, null]]`,
	}, {
		name: "repeated group of one leaf read as a struct",
		root: parquet.Group{"l": parquet.Optional(parquet.Group{"bag": parquet.Repeated(parquet.Group{
			"a": parquet.Optional(parquet.Int(32))})})},
		rows:    rowsOf(row("l", row("bag", list(row("a", int32(4)), row("a", nil))))),
		patches: []patch{at("l", listAnn)},
		want:    st(fld("l", arr(st(fld("a", schema.Integer))))),
		expect:  `[[{4}, {null}]]`,
	}, {
		name:   "bare repeated fields",
		root:   parquet.Group{"r": parquet.Repeated(parquet.Int(32)), "g": parquet.Repeated(parquet.Group{"a": parquet.Int(32)})},
		rows:   rowsOf(row("r", list(int32(1), int32(2)), "g", list(row("a", int32(5)))), row("r", list(), "g", list())),
		want:   st(fld("r", arr(schema.Integer)), fld("g", arr(st(fld("a", schema.Integer))))),
		expect: "[[1, 2], [{5}]]\n[[], []]",
	}, {
		name: "bare repeated field read as a primitive",
		root: parquet.Group{"r": parquet.Repeated(parquet.Int(32))},
		rows: rowsOf(row("r", list(int32(1)))),
		want: st(fld("r", schema.Integer)),
		err:  datafile.ErrTypeMismatch, errText: "column r",
	}, {
		name: "legacy map with MAP_KEY_VALUE",
		root: parquet.Group{"m": parquet.Optional(parquet.Group{"map": parquet.Repeated(parquet.Group{
			"key": parquet.String(), "value": parquet.Optional(parquet.Int(32))})})},
		rows:    rowsOf(row("m", row("map", list(kv("a", int32(1)), kv("b", nil)))), row("m", nil), row("m", row("map", list()))),
		patches: []patch{at("m", mapAnn), at("m.map", mapKeyValueAnn)},
		want:    st(fld("m", mp(schema.String, schema.Integer))),
		expect: `
			[{a: 1, b: null}]
			[null]
			[{}]`,
	}, {
		name: "MAP_KEY_VALUE on the outer group",
		root: parquet.Group{"m": parquet.Optional(parquet.Group{"map": parquet.Repeated(parquet.Group{
			"key": parquet.String(), "value": parquet.Optional(parquet.Int(32))})})},
		rows:    rowsOf(row("m", row("map", list(kv("a", int32(1)))))),
		patches: []patch{at("m", mapKeyValueAnn)},
		want:    st(fld("m", mp(schema.String, schema.Integer))),
		expect:  `[{a: 1}]`,
	}}
	runCases(t, cases)
}

// TestMatching matches wanted fields by name (exact first, then ignoring
// case) or by field id, at every level.
func TestMatching(t *testing.T) {
	root := parquet.Group{
		"col-a": parquet.Optional(parquet.Int(64)),
		"Mixed": parquet.Optional(parquet.Int(64)),
		"dup":   parquet.Optional(parquet.Int(64)),
		"DUP":   parquet.Optional(parquet.Int(64)),
		"col-s": parquet.Optional(parquet.Group{"col-x": parquet.Optional(parquet.String())}),
		"col-l": stdList(parquet.Optional(parquet.Group{"col-y": parquet.Optional(parquet.Int(32))})),
	}
	rows := rowsOf(row("col-a", int64(1), "Mixed", int64(2), "dup", int64(3), "DUP", int64(4),
		"col-s", row("col-x", "x"), "col-l", lst(row("col-y", int32(7)))))
	ids := []patch{autoAnnotate, at("col-a", fieldID(1)), at("col-s", fieldID(2)), at("col-s.col-x", fieldID(3)),
		at("col-l", fieldID(4)), at("col-l.list.element.col-y", fieldID(5))}
	runCases(t, []readCase{{
		name: "by name", root: root, rows: rows,
		want:   st(fld("mixed", schema.Long), fld("DUP", schema.Long), fld("dup", schema.Long), fld("COL-A", schema.Long)),
		expect: `[2, 4, 3, 1]`,
	}, {
		name: "ambiguous name", root: root, rows: rows,
		want: st(fld("Dup", schema.Long)),
		err:  datafile.ErrTypeMismatch, errText: "ambiguous",
	}, {
		name: "by field id", root: root, rows: rows, patches: ids, opts: datafile.ReadOptions{ByFieldID: true},
		want: st(
			withID(fld("renamed", schema.Long), 1),
			withID(fld("s", st(withID(fld("x2", schema.String), 3), withID(fld("col-x", schema.String), 99))), 2),
			withID(fld("l", arr(st(withID(fld("y", schema.Integer), 5)))), 4),
			withID(fld("col-a", schema.Long), 42), // the id decides, not the name
			fld("Mixed", schema.Long),             // no id: by name
		),
		expect: `[1, {x, null}, [{7}], null, 2]`,
	}})
}

// TestVariant reads an unshredded variant as the struct of its metadata
// and value binaries, metadata first, whatever their order in the file.
func TestVariant(t *testing.T) {
	root := parquet.Group{"v": parquet.Optional(parquet.Group{
		"value": parquet.Leaf(parquet.ByteArrayType), "metadata": parquet.Leaf(parquet.ByteArrayType)})}
	rows := rowsOf(row("v", row("value", []byte{0x0c, 0x01}, "metadata", []byte{0x01, 0x00, 0x00})), row("v", nil))
	runCases(t, []readCase{{
		name: "variant", root: root, rows: rows, patches: []patch{at("v", variantAnn)},
		want: st(fld("v", schema.Variant)),
		expect: `
			[{010000, 0c01}]
			[null]`,
	}, {
		name: "variant without annotation", root: root, rows: rows,
		want: st(fld("v", schema.Variant), fld("w", schema.Variant)),
		expect: `
			[{010000, 0c01}, null]
			[null, null]`,
	}})
}
