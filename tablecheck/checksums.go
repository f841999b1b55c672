package tablecheck

import (
	"context"
	"errors"
	"math"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/deltalog"
	"github.com/godelta/delta/internal/checksum"
	"github.com/godelta/delta/internal/checksum/crcwriter"
	"github.com/godelta/delta/logstore"
	"github.com/godelta/delta/snapshot"
)

// checkCRC compares each version checksum (<v>.crc) of the listing, newest
// first and at most Options.MaxChecksums of them, with the checksum of the
// replay at v. The replay never reads a .crc (snapshot.LoadWithoutCheckpoints
// over the check's one listing, with no checkpoint excluded), so a wrong
// checksum cannot vouch for itself; it does start from the newest
// checkpoint at or below v, which step 2 has checked against its commits.
func checkCRC(ctx context.Context, c *checker) error {
	var versions []int64
	for i := len(c.files) - 1; i >= 0; i-- {
		if c.files[i].Kind == deltalog.CRC {
			versions = append(versions, c.files[i].Version)
		}
	}
	if n := c.opts.MaxChecksums; n > 0 && len(versions) > n {
		c.skip("version checksums of versions %d and older: only the newest %d are compared (Options.MaxChecksums)", versions[n], n)
		versions = versions[:n]
	}
	for _, v := range versions {
		key := deltalog.CRCKey(v)
		got, err := checksum.Read(ctx, c.store, v)
		switch {
		case errors.Is(err, logstore.ErrNotFound):
			continue // log cleanup ran beside the check
		case errors.Is(err, deltaerr.ErrCorrupt):
			c.report(KindCRC, v, key, "version checksum cannot be read: %v", err)
			continue
		case err != nil:
			return err
		}
		c.rep.Checked["checksums"]++
		snap, err := snapshot.LoadWithoutCheckpoints(ctx, c.store, c.files, v, math.MaxInt64)
		if err == nil {
			var want *checksum.VersionChecksum
			if want, err = crcwriter.Compute(ctx, snap); err == nil {
				for _, d := range checksum.Compare(got, want) {
					c.report(KindCRC, v, key, "version checksum differs from the log: %s", d)
				}
				continue
			}
		}
		if !errors.Is(err, deltaerr.ErrMissingLogFile) && !errors.Is(err, deltaerr.ErrCorrupt) &&
			!errors.Is(err, deltaerr.ErrVersionNotFound) && !errors.Is(err, deltaerr.ErrFileNotFound) {
			return err
		}
		// A log that cannot rebuild v is step 1's or 2's problem.
		c.skip("version checksum of version %d: the version cannot be rebuilt from the log: %v", v, err)
	}
	return nil
}
