package tableconfig_test

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

// New parses a table's protocol and metadata once; every property is then
// read through the Config, with Spark's parsing and Spark's defaults.
func ExampleNew() {
	p := actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	m := actions.Metadata{
		ID:           "example",
		Format:       actions.Format{Provider: "parquet"},
		SchemaString: `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
		Configuration: map[string]string{
			tableconfig.KeyAppendOnly:           "TRUE", // booleans in any case
			tableconfig.KeyLogRetentionDuration: "interval 7 days",
		},
	}
	cfg, err := tableconfig.New(p, m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("append-only:", cfg.AppendOnly())
	fmt.Println("log retention:", cfg.LogRetention())
	fmt.Println("checkpoint interval:", cfg.CheckpointInterval()) // not set: Spark's default
	fmt.Println("column mapping:", cfg.ColumnMappingMode())
	// Output:
	// append-only: true
	// log retention: 168h0m0s
	// checkpoint interval: 10
	// column mapping: none
}

// Validate refuses a value Spark would refuse when the property is set.
func ExampleValidate() {
	err := tableconfig.Validate(map[string]string{tableconfig.KeyCheckpointInterval: "0"})
	var pe *tableconfig.PropertyError
	if errors.As(err, &pe) {
		fmt.Println(pe.Key, pe.Value)
	}
	fmt.Println(errors.Is(err, tableconfig.ErrInvalidProperty), errors.Is(err, deltaerr.ErrInvalidArgument))

	// Keys this library does not know are kept, never refused.
	fmt.Println(tableconfig.Validate(map[string]string{"delta.someFutureProperty": "x", "owner": "me"}))
	// Output:
	// delta.checkpointInterval 0
	// true true
	// <nil>
}

// ReadSupported says whether this library can read a table with a protocol.
func ExampleReadSupported() {
	for _, p := range []actions.Protocol{
		{MinReaderVersion: 1, MinWriterVersion: 2},
		{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"someFutureFeature"}, WriterFeatures: []string{"someFutureFeature"}},
	} {
		err := tableconfig.ReadSupported(&p)
		var fe *deltaerr.FeatureError
		fmt.Println(err == nil, errors.As(err, &fe), errors.Is(err, deltaerr.ErrUnsupportedFeature))
	}
	// Output:
	// true false false
	// false true true
}
