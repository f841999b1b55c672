package snapshot

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/tableconfig"
)

// WriteLogCompaction writes the log compaction file of the commits from..to
// of the snapshot's table (<from>.<to>.compacted.json, PROTOCOL.md "Log
// Compaction Files") and returns its key. The file holds the reconciliation
// of those commits alone, by the replay every load uses: the newest
// protocol and metaData among them, the newest txn of each application and
// domainMetadata of each domain (removals kept), and the last add or remove
// of each file (removes kept as they are: they cancel files of earlier
// versions); no commitInfo and no cdc. Readers may then read it in place of
// the commits (see deltalog.Segment.Plan); the commits stay.
//
// It needs 0 <= from < to <= the snapshot's version (ErrInvalidArgument),
// every commit between them (ErrMissingLogFile), and a protocol this build
// can write at to, so that no field of an action it does not know is
// dropped (ErrUnsupportedFeature). A compaction file of the same range that
// is already there is left as it is (logstore.ErrAlreadyExists, wrapped).
func (s *Snapshot) WriteLogCompaction(ctx context.Context, from, to int64) (string, error) {
	if from < 0 || from >= to || to > s.version {
		return "", fmt.Errorf("snapshot: log compaction of versions %d to %d of a table at version %d: %w", from, to, s.version, deltaerr.ErrInvalidArgument)
	}
	files, err := deltalog.List(ctx, s.store, from)
	if err != nil {
		return "", err
	}
	var commits []deltalog.LogFile
	for _, f := range files {
		if f.Kind == deltalog.Commit && f.Version >= from && f.Version <= to {
			commits = append(commits, f)
		}
	}
	for i, v := 0, from; v <= to; i, v = i+1, v+1 {
		if i >= len(commits) || commits[i].Version != v {
			return "", fmt.Errorf("snapshot: log compaction of versions %d to %d: commit %s is missing: %w", from, to, deltalog.CommitKey(v), deltaerr.ErrMissingLogFile)
		}
	}
	r := newReplay(nil)
	if err := r.applyCommits(ctx, s.store, commits); err != nil {
		return "", err
	}
	r.finishTail()

	p, m := s.protocol, s.metadata
	if r.protocol != nil {
		p = *r.protocol
	}
	if r.metadata != nil {
		m = *r.metadata
	}
	if err := tableconfig.WriteSupported(&p, &m, true); err != nil {
		return "", fmt.Errorf("snapshot: log compaction of versions %d to %d: %w", from, to, err)
	}

	var acts []actions.Action
	if r.protocol != nil {
		acts = append(acts, actions.Action{Protocol: r.protocol})
	}
	if r.metadata != nil {
		acts = append(acts, actions.Action{Metadata: r.metadata})
	}
	for _, app := range slices.Sorted(maps.Keys(r.txns)) {
		t := r.txns[app]
		acts = append(acts, actions.Action{Txn: &t})
	}
	for _, name := range slices.Sorted(maps.Keys(r.domains)) {
		d := r.domains[name]
		acts = append(acts, actions.Action{DomainMetadata: &d})
	}
	for _, e := range r.order {
		if e.add != nil {
			acts = append(acts, actions.Action{Add: e.add})
		} else {
			acts = append(acts, actions.Action{Remove: e.remove})
		}
	}
	data, err := actions.EncodeCommit(acts)
	if err != nil {
		return "", err
	}
	key := deltalog.CompactedKey(from, to)
	if err := s.store.PutIfAbsent(ctx, key, data); err != nil {
		return "", fmt.Errorf("snapshot: writing %s: %w", key, err)
	}
	return key, nil
}
