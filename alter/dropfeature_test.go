package alter_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/alter"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/tableconfig"
)

func TestDropFeature(t *testing.T) {
	for _, tc := range []struct {
		name    string
		props   map[string]string
		drop    string
		wantR   int32
		wantW   int32
		wantW7  []string // writer features of a writer-7 result
		wantErr error
	}{
		{"checkConstraints of writer 3: legacy writer 2 is left", map[string]string{"delta.minWriterVersion": "3"},
			actions.FeatureCheckConstraints, 1, 2, nil, nil},
		{"checkConstraints of writer 4: a list", map[string]string{"delta.minWriterVersion": "4"},
			actions.FeatureCheckConstraints, 1, 7, []string{"appendOnly", "changeDataFeed", "generatedColumns", "invariants"}, nil},
		{"domainMetadata of writer 7", map[string]string{"delta.feature.domainMetadata": "supported"},
			actions.FeatureDomainMetadata, 1, 2, nil, nil},
		{"domainMetadata beside deletion vectors: reader 3 stays", map[string]string{"delta.feature.domainMetadata": "supported", "delta.enableDeletionVectors": "true"},
			actions.FeatureDomainMetadata, 3, 7, []string{"appendOnly", "deletionVectors", "invariants"}, nil},
		{"inCommitTimestamp, on: turned off, then dropped", map[string]string{"delta.enableInCommitTimestamps": "true"},
			actions.FeatureInCommitTimestamp, 1, 2, nil, nil},
		{"not supported by the protocol", nil, actions.FeatureDomainMetadata, 0, 0, nil, alter.ErrInvalidChange},
		{"a reader-writer feature not droppable here", map[string]string{"delta.columnMapping.mode": "name"},
			actions.FeatureColumnMapping, 0, 0, nil, deltaerr.ErrUnsupportedFeature},
		{"a feature Spark does not drop", map[string]string{"delta.minWriterVersion": "2"},
			actions.FeatureAppendOnly, 0, 0, nil, deltaerr.ErrUnsupportedFeature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := create(t, "id BIGINT", tc.props)
			res, err := alter.DropFeature(ctx, s, tc.drop, alter.Options{})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			s = must(t, s, res, err)
			p := s.Protocol()
			if p.MinReaderVersion != tc.wantR || p.MinWriterVersion != tc.wantW {
				t.Fatalf("protocol %+v, want %d/%d", p, tc.wantR, tc.wantW)
			}
			if tc.wantW == 7 && !slices.Equal(p.WriterFeatures, tc.wantW7) {
				t.Errorf("writer features %v, want %v", p.WriterFeatures, tc.wantW7)
			}
			if tableconfig.HasWriterFeature(&p, tc.drop) {
				t.Errorf("%s still supported", tc.drop)
			}
			if op, params := lastOperation(t, s); op != alter.OpDropFeature || params["featureName"] != tc.drop || params["truncateHistory"] != false {
				t.Errorf("commitInfo %s %v", op, params)
			}
			if tc.drop == actions.FeatureInCommitTimestamp {
				conf := s.Metadata().Configuration
				if conf["delta.enableInCommitTimestamps"] != "false" || conf["delta.inCommitTimestampEnablementVersion"] != "" {
					t.Errorf("properties %v", conf)
				}
			}
		})
	}
}

// A CHECK constraint, or domain metadata, stops the drop: nothing is
// committed.
func TestDropFeatureInUse(t *testing.T) {
	s := create(t, "id BIGINT", map[string]string{"delta.minWriterVersion": "3"})
	res, err := alter.AddConstraint(ctx, s, "positive", "id > 0", alter.Options{})
	s = must(t, s, res, err)
	if _, err := alter.DropFeature(ctx, s, actions.FeatureCheckConstraints, alter.Options{}); !errors.Is(err, alter.ErrInvalidChange) {
		t.Fatalf("with a constraint: %v", err)
	}
	res, err = alter.DropConstraint(ctx, s, "positive", false, alter.Options{})
	s = must(t, s, res, err)
	res, err = alter.DropFeature(ctx, s, actions.FeatureCheckConstraints, alter.Options{})
	s = must(t, s, res, err)
	if p := s.Protocol(); p.MinWriterVersion != 2 {
		t.Fatalf("protocol %+v", p)
	}
}
