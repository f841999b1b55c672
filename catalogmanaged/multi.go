package catalogmanaged

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// A TableCommit is one table's part of a commit across tables: the
// commit to ratify and the catalog's ID of the table.
type TableCommit struct {
	Table  string
	Commit Commit
}

// A MultiCommitter is a catalog that ratifies commits to several of its
// tables at once: every one of them, or none.
type MultiCommitter interface {
	// CommitAll ratifies each commit as its table's version c.Version, in
	// one step: when it returns nil every commit is ratified; otherwise
	// none is. It returns an error matching ErrConflict when some table's
	// version is held by another commit (or does not follow its latest),
	// an error matching logstore.ErrNotWritten when the catalog certainly
	// ratified nothing, and any other error when the outcome is unknown
	// (then it is still all or nothing). A call repeated with the same
	// commits after a lost answer succeeds.
	CommitAll(ctx context.Context, commits []TableCommit) error
}

// ErrMultiAborted is what the tables of a multi-table transaction get
// when another of its tables failed: nothing was ratified. It matches
// logstore.ErrNotWritten, so the commit pipeline gives up at once.
var ErrMultiAborted = fmt.Errorf("catalogmanaged: multi-table transaction aborted by another table's failure: %w", logstore.ErrNotWritten)

// ErrCommittedTwice: a table of a multi-table transaction asked to commit
// a second time. A multi-table transaction commits each table once; the
// second commit is refused, certainly not written.
var ErrCommittedTwice = fmt.Errorf("catalogmanaged: a multi-table transaction commits each table once: %w (%w)", deltaerr.ErrInvalidArgument, logstore.ErrNotWritten)

// A MultiTxn commits to several catalog-managed tables as one transaction
// (PROTOCOL.md's catalog-managed commits, ratified together): each table
// does its work as usual (an append, a MERGE, a DELETE, any commit of the
// one commit pipeline) through the Client that Join hands it, and the
// catalog ratifies the commits of all the tables in one step, or none.
//
// # How
//
// A table's commit goes through its Store as any commit does: the actions
// are staged as _delta_log/_staged_commits/<v>.<uuid>.json and the Store
// asks the table's Client to ratify them. The Client a MultiTxn hands out
// does not ratify at once: it holds the request until every table of the
// transaction has either asked for its ratification or finished its work
// without a commit (a DELETE that matched nothing), then sends all the
// requests to the MultiCommitter as one round. The answers go back to
// each table's commit pipeline:
//
//   - all ratified: each Store publishes its commit and the works return;
//   - a conflict on any table: every table is told its version is taken
//     (logstore.ErrAlreadyExists to the pipeline). The table whose version
//     was taken reads the commit that won it, checks it for logical
//     conflicts and rebases as for any lost race; a table whose version was
//     free finds no winner and asks again for the same version. Their next
//     requests make the next round. A logical conflict (a
//     *txn.ConflictError) ends that table's work with the error, and so
//     aborts the transaction;
//   - an unknown outcome: each pipeline reads its version back from the
//     catalog and finds its own commit there (then all of them do: the
//     catalog ratifies all or none) or asks again;
//   - a failure of any table's work before its commit is ratified aborts
//     the round (ErrMultiAborted, a certain failure, to every table
//     waiting), and nothing is ratified.
//
// Readers through the catalog see the commits of a transaction together:
// the catalog ratifies them in one database transaction, and a ratified
// commit is served from the catalog until it is published.
type MultiTxn struct {
	committer MultiCommitter

	mu    sync.Mutex
	parts []*multiPart
	// round is set while a round is at the catalog: requests wait.
	round bool
	// aborted is the first failure of a table's work before the commits
	// were ratified; every later request gets ErrMultiAborted.
	aborted error
	// ratified is set once the catalog ratified a round.
	ratified bool
	// started is set by Commit: a MultiTxn commits once.
	started bool
}

// multiPart is one table of a MultiTxn.
type multiPart struct {
	id     string
	client Client
	work   func(ctx context.Context, client Client) error
	// pending is the request waiting for the next round, nil when none.
	pending *multiRequest
	// done is set when the work has returned; err is what it returned.
	done bool
	err  error
	// ratified is set when the table's commit has been ratified.
	ratified bool
}

// multiRequest is a ratification request held for a round.
type multiRequest struct {
	commit Commit
	answer chan error // buffered: the round never blocks on it
}

// NewMultiTxn returns a transaction over tables of the catalog behind
// committer.
func NewMultiTxn(committer MultiCommitter) *MultiTxn {
	return &MultiTxn{committer: committer}
}

// Join adds the table whose catalog ID is id, with client its own Client
// (for its reads), and the work to do on it. When Commit runs, work is
// called with the Client to open the table through (catalogmanaged.New,
// or delta.OpenOptions.Catalog): reads go to the table's client, and the
// one commit work makes is ratified with those of the other tables. Work
// commits the table at most once, and should end with its commit: what
// it does after cannot be undone with the other tables.
func (m *MultiTxn) Join(id string, client Client, work func(ctx context.Context, client Client) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started {
		panic("catalogmanaged: MultiTxn.Join after Commit")
	}
	m.parts = append(m.parts, &multiPart{id: id, client: client, work: work})
}

// Commit runs the work of every table, concurrently, and returns nil when
// every table that committed had its commit ratified with the others. It
// returns the tables' errors joined (a *txn.ConflictError on any table
// fails the whole transaction, and is there to errors.As) when nothing was
// ratified, or an error matching logstore.ErrOutcomeUnknown where a
// table's work could not tell. A MultiTxn commits once.
func (m *MultiTxn) Commit(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return fmt.Errorf("catalogmanaged: a multi-table transaction commits once: %w", deltaerr.ErrInvalidArgument)
	}
	m.started = true
	parts := m.parts
	if len(parts) == 0 {
		m.mu.Unlock()
		return fmt.Errorf("catalogmanaged: a multi-table transaction without tables: %w", deltaerr.ErrInvalidArgument)
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if seen[p.id] {
			m.mu.Unlock()
			return fmt.Errorf("catalogmanaged: table %q joined a multi-table transaction twice: %w", p.id, deltaerr.ErrInvalidArgument)
		}
		seen[p.id] = true
	}
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, p := range parts {
		wg.Go(func() {
			err := p.work(ctx, multiClient{m: m, p: p})
			m.finish(ctx, p, err)
		})
	}
	wg.Wait()

	var errs []error
	for _, p := range parts {
		if p.err != nil {
			errs = append(errs, fmt.Errorf("table %s: %w", p.id, p.err))
		}
	}
	return errors.Join(errs...)
}

// finish records that p's work returned err, and starts a round if the
// other tables were waiting on it.
func (m *MultiTxn) finish(ctx context.Context, p *multiPart, err error) {
	m.mu.Lock()
	p.done, p.err = true, err
	if err != nil && !p.ratified && m.aborted == nil && !m.ratified {
		m.aborted = err
	}
	m.step(ctx)
}

// step, called with m.mu held, which it releases, runs a round when every
// table is either waiting for one or finished, or answers the waiting
// requests when the transaction was aborted. It goes on while rounds
// leave requests that can go.
func (m *MultiTxn) step(ctx context.Context) {
	defer m.mu.Unlock()
	for !m.round {
		reqs, ready := m.ready()
		if !ready {
			return
		}
		if m.aborted != nil {
			for _, p := range reqs {
				p.pending.answer <- ErrMultiAborted
				p.pending = nil
			}
			return
		}
		m.round = true
		commits := make([]TableCommit, len(reqs))
		for i, p := range reqs {
			commits[i] = TableCommit{Table: p.id, Commit: p.pending.commit}
		}
		m.mu.Unlock()
		err := m.committer.CommitAll(ctx, commits)
		m.mu.Lock()
		if err == nil {
			m.ratified = true
		}
		for _, p := range reqs {
			// On a conflict, the table whose version was taken rebases;
			// the others find no winner at their version and ask for it
			// again. Any other error is every table's.
			if err == nil {
				p.ratified = true
			}
			p.pending.answer <- err
			p.pending = nil
		}
		m.round = false
	}
}

// ready returns the tables waiting for a round, and whether the round can
// go: some table is waiting and none is still working towards its request.
func (m *MultiTxn) ready() ([]*multiPart, bool) {
	var reqs []*multiPart
	for _, p := range m.parts {
		switch {
		case p.pending != nil:
			reqs = append(reqs, p)
		case !p.done:
			return nil, false // a table still working: the round waits for it
		}
	}
	return reqs, len(reqs) > 0
}

// request holds a ratification request of p for the next round and
// returns its answer.
func (m *MultiTxn) request(ctx context.Context, p *multiPart, c Commit) error {
	m.mu.Lock()
	switch {
	case p.ratified:
		m.mu.Unlock()
		return fmt.Errorf("table %s: %w", p.id, ErrCommittedTwice)
	case m.aborted != nil:
		m.mu.Unlock()
		return ErrMultiAborted
	}
	req := &multiRequest{commit: c, answer: make(chan error, 1)}
	p.pending = req
	m.step(ctx)
	select {
	case err := <-req.answer:
		return err
	case <-ctx.Done():
		// The round may be at the catalog with this request: the outcome
		// is unknown, and the answer, when it comes, goes to the buffer.
		return fmt.Errorf("catalogmanaged: waiting for the multi-table round: %w (%w)", ctx.Err(), logstore.ErrOutcomeUnknown)
	}
}

// multiClient is the Client a table of a MultiTxn commits through.
type multiClient struct {
	m *MultiTxn
	p *multiPart
}

func (c multiClient) Commits(ctx context.Context) (Ratified, error) {
	return c.p.client.Commits(ctx)
}

func (c multiClient) Commit(ctx context.Context, cm Commit) error {
	return c.m.request(ctx, c.p, cm)
}

func (c multiClient) Published(ctx context.Context, version int64) error {
	return c.p.client.Published(ctx, version)
}
