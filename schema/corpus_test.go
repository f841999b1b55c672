package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/godelta/delta/schema"
)

// Every schemaString in the corpus parses, and MarshalJSON gives it back
// byte for byte; schemas that are not byte-exact must at least be equal
// after JSON compaction, and are logged.
func TestCorpusRoundTrip(t *testing.T) {
	dir := corpusDir(t)
	n, exact := 0, 0
	for _, p := range logFiles(t, dir) {
		eachLine(t, p, func(line []byte) {
			var action struct {
				MetaData *struct {
					SchemaString string `json:"schemaString"`
				} `json:"metaData"`
			}
			if json.Unmarshal(line, &action) != nil || action.MetaData == nil || action.MetaData.SchemaString == "" {
				return
			}
			in := action.MetaData.SchemaString
			n++
			st, err := schema.Parse(in)
			if err != nil {
				t.Errorf("%s: Parse: %v", p, err)
				return
			}
			out, err := st.MarshalJSON()
			if err != nil {
				t.Errorf("%s: MarshalJSON: %v", p, err)
				return
			}
			if string(out) == in {
				exact++
				return
			}
			if compact(t, string(out)) != compact(t, in) {
				t.Errorf("%s: round trip differs after compaction:\n got %s\nwant %s", p, out, in)
				return
			}
			t.Logf("%s: equal only after compaction:\n got %s\nwant %s", p, out, in)
			if st.String() != string(out) {
				t.Errorf("%s: String and MarshalJSON differ", p)
			}
		})
	}
	if n == 0 {
		t.Fatal("no schemas found in the corpus")
	}
	t.Logf("%d schema strings, %d byte-exact", n, exact)
}
