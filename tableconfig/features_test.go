package tableconfig_test

import (
	"errors"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

func TestReadSupported(t *testing.T) {
	tests := []struct {
		p       actions.Protocol
		wantErr error
	}{
		{actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, nil},
		{actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}, nil},
		{actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors", "columnMapping", "v2Checkpoint", "timestampNtz"}}, nil},
		{actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"noSuchFeature"}}, deltaerr.ErrUnsupportedFeature},
		// Supported as a feature; the snapshot refuses it without a
		// catalog's view of the log (package catalogmanaged).
		{actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"catalogManaged"}}, nil},
		{actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"catalogOwned-preview"}}, deltaerr.ErrUnsupportedFeature},
		{actions.Protocol{MinReaderVersion: 99, MinWriterVersion: 7}, deltaerr.ErrUnsupportedFeature},
		{actions.Protocol{MinReaderVersion: 0, MinWriterVersion: 2}, deltaerr.ErrCorrupt},
		{actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"noSuchWriterFeature"}}, nil},
	}
	for _, tt := range tests {
		err := tableconfig.ReadSupported(&tt.p)
		if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
			t.Errorf("%+v: err = %v, want %v", tt.p, err, tt.wantErr)
		}
	}
	legacy := actions.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	if !tableconfig.HasReaderFeature(&legacy, actions.FeatureColumnMapping) || !tableconfig.HasWriterFeature(&legacy, actions.FeatureChangeDataFeed) || tableconfig.HasWriterFeature(&legacy, actions.FeatureIdentityColumns) {
		t.Error("legacy protocol feature implication wrong")
	}
}

// TestWriteSupported: the write support of each kind of feature, for a
// writer that does not check rows and for one that does.
func TestWriteSupported(t *testing.T) {
	plain := actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}`}
	invariant := actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{"delta.invariants":"{\"expression\":{\"expression\":\"x > 0\"}}"}}]}`}
	collated := actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"s","type":"string","nullable":true,"metadata":{"__COLLATIONS":{"s":"spark.UTF8_LCASE"}}}]}`}
	identity := actions.Metadata{SchemaString: `{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{"delta.identity.start":1,"delta.identity.step":1,"delta.identity.allowExplicitInsert":false}}]}`}
	for _, tt := range []struct {
		name           string
		p              actions.Protocol
		m              actions.Metadata
		plain, checked bool // writable
	}{
		{"legacy 2", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, plain, true, true},
		{"legacy 2, an invariant", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, invariant, false, true},
		{"legacy 6, identity unused", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 6}, plain, true, true},
		// The row writer allocates identity values (package write).
		{"legacy 6, an identity column", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 6}, identity, false, true},
		{"deletion vectors", actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}, plain, true, true},
		// Collated strings are written as any string, with UTF-8 binary
		// statistics (the protocol allows them for every collation).
		{"collations", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"collations", "domainMetadata"}}, collated, true, true},
		{"collations-preview", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"collations-preview", "domainMetadata"}}, collated, true, true},
		{"geospatial", actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"geospatial"}, WriterFeatures: []string{"geospatial"}}, plain, false, false},
		{"unknown writer feature", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"noSuchFeature"}}, plain, false, false},
		{"writer version 8", actions.Protocol{MinReaderVersion: 1, MinWriterVersion: 8}, plain, false, false},
		{"unreadable", actions.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNanos"}, WriterFeatures: []string{"timestampNanos"}}, plain, false, false},
	} {
		for _, checked := range []bool{false, true} {
			want := tt.plain
			if checked {
				want = tt.checked
			}
			err := tableconfig.WriteSupported(&tt.p, &tt.m, checked)
			if want && err != nil || !want && !errors.Is(err, deltaerr.ErrUnsupportedFeature) {
				t.Errorf("%s, rows checked %v: %v, want writable %v", tt.name, checked, err, want)
			}
		}
	}
}
