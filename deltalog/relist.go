package deltalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/logstore"
)

// Re-listing bounds: Relist calls its read at most RelistAttempts times,
// pausing relistPause before the second call and twice as long before each
// later one, up to relistMaxPause (10+20+40+80 ms in all by default).
const (
	RelistAttempts = 5
	relistPause    = 10 * time.Millisecond
	relistMaxPause = 200 * time.Millisecond
)

// Relist runs read, a function that lists the log and reads the files the
// listing names, and runs it again while it fails with
// deltaerr.ErrMissingLogFile, up to RelistAttempts calls in all, with a
// short pause (doubling from 10 ms) before each new call. It returns the
// result of the first call that succeeds or fails otherwise, or the error
// of the last call. When ctx ends during a pause, the error of the last
// call is returned joined with ctx's.
//
// ErrMissingLogFile is what a reader sees when its listing raced a writer
// or log cleanup: a store whose listing is not a point-in-time snapshot (a
// local directory read while files are created, object stores' list pages)
// can show commit N+1 without N although N was written first, and cleanup
// running beside a reader can delete a commit or checkpoint between the
// listing and the read (see Vanished). A new listing, made after the
// writer's put of N returned or after the cleanup, no longer has the hole.
// A commit that is truly missing from the store stays missing on every
// listing, so it still ends in ErrMissingLogFile, as Delta Spark and the
// Delta kernels refuse such a log.
//
// Every reader of the listing in godelta that can be misled this way
// (snapshot loading, updating, history and time travel by timestamp) goes
// through Relist; read must therefore list anew on each call.
func Relist[T any](ctx context.Context, read func() (T, error)) (T, error) {
	pause := relistPause
	for attempt := 1; ; attempt++ {
		v, err := read()
		if err == nil || attempt >= RelistAttempts || !errors.Is(err, deltaerr.ErrMissingLogFile) {
			return v, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			var zero T
			return zero, errors.Join(err, context.Cause(ctx))
		case <-t.C:
		}
		pause = min(2*pause, relistMaxPause)
	}
}

// Vanished classifies the error of reading key, a log file a listing
// named: when the store says it is not there, the file was deleted after
// the listing (log cleanup), or the listing showed it before the store
// could serve it, and the error also matches deltaerr.ErrMissingLogFile,
// for Relist to list again; it still matches logstore.ErrNotFound. Other
// errors, and nil, are returned as they are.
func Vanished(key string, err error) error {
	if err == nil || !errors.Is(err, logstore.ErrNotFound) || errors.Is(err, deltaerr.ErrMissingLogFile) {
		return err
	}
	return fmt.Errorf("%s vanished after listing: %w: %w", key, deltaerr.ErrMissingLogFile, err)
}
