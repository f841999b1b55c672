package schema_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func TestParsePartitionValue(t *testing.T) {
	dec := schema.DecimalType{Precision: 10, Scale: 5}
	tests := []struct {
		typ  schema.DataType
		in   string
		want string // Value.String(); "" for null
	}{
		{schema.String, "", ""},
		{schema.String, "A/A b%", "A/A b%"},
		{schema.Integer, "-42", "-42"},
		{schema.Long, "9223372036854775807", "9223372036854775807"},
		{schema.Boolean, "true", "true"},
		{schema.Date, "2021-09-08", "2021-09-08"},
		{schema.Date, "1969-12-31", "1969-12-31"},
		{dec, "-123.45600", "-123.45600"},
		{schema.Timestamp, "2021-09-08 11:11:11", ""},
		{schema.Timestamp, "2021-09-08 11:11:11.123456", ""},
		{schema.Timestamp, "1970-01-01T00:00:00.123456Z", ""},
		{schema.TimestampNTZ, "2021-09-08 11:11:11.5", ""},
		{schema.Double, "NaN", ""},
	}
	for _, tt := range tests {
		v, err := schema.ParsePartitionValue(tt.typ, tt.in)
		if err != nil {
			t.Errorf("%v %q: %v", tt.typ, tt.in, err)
			continue
		}
		if tt.in == "" {
			if !v.IsNull() {
				t.Errorf("empty string is not null: %v", v)
			}
			continue
		}
		if tt.want != "" && v.String() != tt.want {
			t.Errorf("%v %q = %s, want %s", tt.typ, tt.in, v, tt.want)
		}
		// The writer's form reads back to the same value.
		back, err := schema.ParsePartitionValue(tt.typ, schema.FormatPartitionValue(v))
		if err != nil || back.String() != v.String() {
			t.Errorf("%v %q: format %q reads back as %v, %v", tt.typ, tt.in, schema.FormatPartitionValue(v), back, err)
		}
	}
	micros, err := schema.ParsePartitionValue(schema.Timestamp, "1970-01-01T00:00:00.123456Z")
	if err != nil || micros.Int64() != 123456 {
		t.Errorf("ISO timestamp = %d, %v; want 123456 µs", micros.Int64(), err)
	}
	for _, bad := range []struct {
		typ schema.DataType
		in  string
	}{{schema.Integer, "x"}, {schema.Integer, "99999999999"}, {schema.Date, "2021-13-01"}, {schema.Boolean, "yes"}, {dec, "1.234567"}} {
		if _, err := schema.ParsePartitionValue(bad.typ, bad.in); !errors.Is(err, deltaerr.ErrCorrupt) {
			t.Errorf("%v %q: err = %v, want ErrCorrupt", bad.typ, bad.in, err)
		}
	}
}
