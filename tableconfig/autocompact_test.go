package tableconfig_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/tableconfig"
)

// Auto compaction follows Spark's getAutoCompactType: the deprecated
// delta.autoOptimize=true wins, then delta.autoOptimize.autoCompact; off
// by default. A value Spark refuses is refused when set, but a table that
// carries one stays readable and only AutoCompact reports it.
func TestAutoCompact(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  bool
		bad   string // the key whose value is refused
	}{
		{nil, false, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "true"}, true, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "TRUE"}, true, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "false"}, false, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "auto"}, true, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "Legacy"}, true, ""},
		{map[string]string{tableconfig.KeyAutoOptimize: "true"}, true, ""},
		{map[string]string{tableconfig.KeyAutoOptimize: "true", tableconfig.KeyAutoCompact: "false"}, true, ""},
		{map[string]string{tableconfig.KeyAutoOptimize: "false", tableconfig.KeyAutoCompact: "true"}, true, ""},
		{map[string]string{tableconfig.KeyAutoOptimize: "false"}, false, ""},
		{map[string]string{tableconfig.KeyAutoCompact: "yes"}, false, tableconfig.KeyAutoCompact},
		{map[string]string{tableconfig.KeyAutoCompact: ""}, false, tableconfig.KeyAutoCompact},
		{map[string]string{tableconfig.KeyAutoOptimize: "1", tableconfig.KeyAutoCompact: "true"}, false, tableconfig.KeyAutoOptimize},
	} {
		err := tableconfig.Validate(tc.props)
		var pe *tableconfig.PropertyError
		if tc.bad == "" && err != nil || tc.bad != "" && (!errors.As(err, &pe) || pe.Key != tc.bad) {
			t.Errorf("Validate(%v) = %v; want a refusal of %q", tc.props, err, tc.bad)
		}
		cfg, err := tableconfig.New(actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2},
			actions.Metadata{SchemaString: `{"type":"struct","fields":[]}`, Configuration: tc.props})
		if err != nil {
			t.Errorf("New(%v) = %v: a table with any auto compaction value stays readable", tc.props, err)
			continue
		}
		on, err := cfg.AutoCompact()
		if on != tc.want || (err != nil) != (tc.bad != "") || err != nil && !errors.As(err, &pe) {
			t.Errorf("AutoCompact of %v = %v, %v; want %v (refused: %q)", tc.props, on, err, tc.want, tc.bad)
		}
	}
	if !tableconfig.IsKnownKey(tableconfig.KeyAutoCompact) || !tableconfig.IsKnownKey(tableconfig.KeyAutoOptimize) {
		t.Error("the auto compaction properties are known keys")
	}
}
