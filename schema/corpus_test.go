package schema_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/godelta/delta/schema"
)

// Every schemaString in the corpus parses and re-encodes byte for byte.
func TestCorpusRoundTrip(t *testing.T) {
	dir := os.Getenv("GODELTA_TESTDATA")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "testdata")
	}
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("corpus missing at %s", dir)
		}
		t.Skipf("corpus missing at %s", dir)
	}
	n := 0
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".json") || !strings.Contains(p, "_delta_log") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			var line struct {
				MetaData *struct {
					SchemaString string `json:"schemaString"`
				} `json:"metaData"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || line.MetaData == nil || line.MetaData.SchemaString == "" {
				continue
			}
			n++
			st, err := schema.Parse(line.MetaData.SchemaString)
			if err != nil {
				t.Errorf("%s: %v", p, err)
				continue
			}
			b, err := json.Marshal(st)
			if err != nil || string(b) != line.MetaData.SchemaString {
				t.Errorf("%s: round trip differs (%v):\n got %s\nwant %s", p, err, b, line.MetaData.SchemaString)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no schemas found in the corpus")
	}
}

func TestMalformed(t *testing.T) {
	for _, s := range []string{``, `{`, `[]`, `{"type":"struct","fields":[{"name":"a","type":"nosuchtype","nullable":true,"metadata":{}}]}`, `{"type":"struct","fields":[{"name":"a","type":"decimal(99,2)","nullable":true,"metadata":{}}]}`} {
		if _, err := schema.Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
}
