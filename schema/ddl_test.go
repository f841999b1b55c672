package schema_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/schema"
)

func TestParseDDL(t *testing.T) {
	tests := []struct{ ddl, want string }{
		{"id BIGINT NOT NULL, name STRING", `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}`},
		{"a tinyint, b SMALLINT, c int, d float, e double, f boolean, g binary, h date, i timestamp, j timestamp_ntz",
			`{"type":"struct","fields":[{"name":"a","type":"byte","nullable":true,"metadata":{}},{"name":"b","type":"short","nullable":true,"metadata":{}},{"name":"c","type":"integer","nullable":true,"metadata":{}},{"name":"d","type":"float","nullable":true,"metadata":{}},{"name":"e","type":"double","nullable":true,"metadata":{}},{"name":"f","type":"boolean","nullable":true,"metadata":{}},{"name":"g","type":"binary","nullable":true,"metadata":{}},{"name":"h","type":"date","nullable":true,"metadata":{}},{"name":"i","type":"timestamp","nullable":true,"metadata":{}},{"name":"j","type":"timestamp_ntz","nullable":true,"metadata":{}}]}`},
		{"p DECIMAL(10, 2), q decimal, r VARCHAR(20)", `{"type":"struct","fields":[{"name":"p","type":"decimal(10,2)","nullable":true,"metadata":{}},{"name":"q","type":"decimal(10,0)","nullable":true,"metadata":{}},{"name":"r","type":"string","nullable":true,"metadata":{}}]}`},
		{"tags ARRAY<STRING>, m MAP<STRING, INT>, s STRUCT<city: STRING, zip INT NOT NULL>",
			`{"type":"struct","fields":[{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":"integer","valueContainsNull":true},"nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"city","type":"string","nullable":true,"metadata":{}},{"name":"zip","type":"integer","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}}]}`},
		{"`odd ``name``` STRING COMMENT 'a \\'c\\''", `{"type":"struct","fields":[{"name":"odd ` + "`name`" + `","type":"string","nullable":true,"metadata":{"comment":"a 'c'"}}]}`},
	}
	for _, tc := range tests {
		st, err := schema.ParseDDL(tc.ddl)
		if err != nil {
			t.Errorf("ParseDDL(%q): %v", tc.ddl, err)
			continue
		}
		if got := st.String(); got != tc.want {
			t.Errorf("ParseDDL(%q) =\n %s\nwant\n %s", tc.ddl, got, tc.want)
		}
	}
	for _, bad := range []string{"", "id", "id BIGINT,", "id NOPE", "id DECIMAL(40,2)", "a ARRAY<INT", "a INT NOT", "a INT, A STRING", "a STRUCT<b INT"} {
		if _, err := schema.ParseDDL(bad); !errors.Is(err, deltaerr.ErrInvalidArgument) {
			t.Errorf("ParseDDL(%q): %v, want ErrInvalidArgument", bad, err)
		}
	}
}
