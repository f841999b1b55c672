package govalue_test

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/godelta/delta/schema"
	"github.com/godelta/delta/schema/govalue"
)

type event struct {
	ID    int64     `parquet:"event_id"`
	Kind  string    // matches column "kind" ignoring case
	At    time.Time `parquet:"ts"`
	Tags  []string
	Debug bool `parquet:"-"` // takes no column
}

// A struct is written to a row of values and read back unchanged: the one
// mapping scan.All and write.StructBatches share.
func ExampleMapper() {
	sch, err := schema.ParseDDL("event_id BIGINT NOT NULL, kind STRING, ts TIMESTAMP, tags ARRAY<STRING>, note STRING")
	if err != nil {
		fmt.Println(err)
		return
	}
	var m govalue.Mapper
	in := event{ID: 7, Kind: "click", At: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Tags: []string{"a", "b"}, Debug: true}

	row, err := m.StructFields(reflect.ValueOf(in), sch)
	fmt.Println(row, err) // note has no field: null

	var out event
	err = m.Assign(reflect.ValueOf(&out).Elem(), schema.StructValue(row), sch)
	fmt.Printf("%d %s %s %v %v %v\n", out.ID, out.Kind, out.At.Format(time.RFC3339), out.Tags, out.Debug, err)

	// A value that does not fit its column is ErrMismatch.
	_, err = m.Value(reflect.ValueOf("seven"), schema.Long)
	fmt.Println(errors.Is(err, govalue.ErrMismatch))
	// Output:
	// [7 click 2024-05-01T12:00:00Z [a, b] null] <nil>
	// 7 click 2024-05-01T12:00:00Z [a b] false <nil>
	// true
}
