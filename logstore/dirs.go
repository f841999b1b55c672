package logstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// DirLister is an optional capability of a Driver (and of the Store over
// it): ListDirs yields the sub-directories directly under dir, each as a
// directory prefix ending in '/' ("a=1/", "a=1/b=2/"), in increasing byte
// order. dir is "" for the root or a prefix ending in '/', as in List. A
// missing directory lists as empty.
//
// The Store contract's List yields objects only, one level down, so nothing
// walks a table's directory tree through it: VACUUM, which must find files
// that no log names (orphans of failed writes) in any partition directory,
// needs this too. Backends list their "directories" natively: the local
// disk its real directories (never a symbolic link to one, so a walk never
// leaves the root through a link), object stores the common prefixes of a
// delimited listing.
type DirLister interface {
	ListDirs(ctx context.Context, dir string) iter.Seq2[string, error]
}

// ListDirs yields the sub-directories directly under dir of store s (see
// DirLister), looking through wrappers that have an Unwrap() Store method
// (as testutil/faultstore) for one that has the capability. A store without
// it yields one error matching errors.ErrUnsupported.
func ListDirs(ctx context.Context, s Store, dir string) iter.Seq2[string, error] {
	if dl, ok := capability[DirLister](s); ok {
		return dl.ListDirs(ctx, dir)
	}
	return func(yield func(string, error) bool) {
		yield("", &OpError{Op: "list dirs", Key: dir, Err: fmt.Errorf("the store cannot list directories: %w", errors.ErrUnsupported)})
	}
}

// ListDirs implements DirLister when the driver does; otherwise it yields
// one error matching errors.ErrUnsupported. The checks are List's.
func (p *Portable) ListDirs(ctx context.Context, dir string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := p.checkDir(ctx, dir); err != nil {
			yield("", err)
			return
		}
		dl, ok := p.d.(DirLister)
		if !ok {
			yield("", &OpError{Op: "list dirs", Key: dir, Err: fmt.Errorf("the store cannot list directories: %w", errors.ErrUnsupported)})
			return
		}
		for d, err := range dl.ListDirs(ctx, dir) {
			if err != nil {
				yield("", p.wrap(ctx, "list dirs", dir, err))
				return
			}
			if err := ctx.Err(); err != nil {
				yield("", &OpError{Op: "list dirs", Key: dir, Err: err})
				return
			}
			if !yield(d, nil) {
				return
			}
		}
	}
}

// Walk yields every object under dir (a directory prefix, "" for the
// root) and, recursively, under each sub-directory sub for which enter
// returns true (nil enters all), through List and ListDirs. Objects of
// one directory come in List's order; directories are walked depth first.
// A store without DirLister yields the objects of dir itself, then one
// error matching errors.ErrUnsupported. Iteration stops at the first
// error.
func Walk(ctx context.Context, s Store, dir string, enter func(sub string) bool) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		stack := []string{dir}
		for len(stack) > 0 {
			d := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for info, err := range s.List(ctx, d, "") {
				if !yield(info, err) || err != nil {
					return
				}
			}
			var subs []string
			for sub, err := range ListDirs(ctx, s, d) {
				if err != nil {
					yield(ObjectInfo{}, err)
					return
				}
				if enter == nil || enter(sub) {
					subs = append(subs, sub)
				}
			}
			for i := len(subs) - 1; i >= 0; i-- {
				stack = append(stack, subs[i])
			}
		}
	}
}

// DirRemover is an optional capability of a Driver (and of the Store over
// it), for stores that have real directories (the local disk):
// RemoveEmptyDir removes directory dir (a prefix ending in '/', as in
// List; never "", the root) if it is a real directory that holds nothing,
// and reports whether it removed it. A directory that is not empty, is
// missing, or is not a directory (a file, or a symbolic link, which is
// never followed) is left as it is, and is not an error. Removing is
// atomic: a directory in which someone creates a file meanwhile is either
// removed before, or kept. Backends whose directories are only key
// prefixes (object stores, memory) have none to remove, and lack it.
//
// VACUUM uses it to delete the partition directories it has emptied, as
// Spark's VACUUM does; writers of the local backend create a directory
// again if it is removed under them.
type DirRemover interface {
	RemoveEmptyDir(ctx context.Context, dir string) (bool, error)
}

// RemoveEmptyDir removes directory dir of store s if it is empty (see
// DirRemover), looking through wrappers that have an Unwrap() Store method
// for one that has the capability. A store without it has no directories
// to remove: it returns false and nil.
func RemoveEmptyDir(ctx context.Context, s Store, dir string) (bool, error) {
	if dr, ok := capability[DirRemover](s); ok {
		return dr.RemoveEmptyDir(ctx, dir)
	}
	return false, nil
}

// capability returns s as the optional interface T, or the first store
// under it, through wrappers with an Unwrap() Store method, that is one.
func capability[T any](s Store) (T, bool) {
	for s != nil {
		if c, ok := s.(T); ok {
			return c, true
		}
		u, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = u.Unwrap()
	}
	var zero T
	return zero, false
}

// RemoveEmptyDir implements DirRemover: it refuses dir as List does, and
// the root ("") with ErrInvalidKey, then calls the driver's when it has
// one; otherwise it returns false and nil.
func (p *Portable) RemoveEmptyDir(ctx context.Context, dir string) (bool, error) {
	if err := p.checkDir(ctx, dir); err != nil {
		return false, err
	}
	if dir == "" {
		return false, &OpError{Op: "remove dir", Err: fmt.Errorf("the root is never removed: %w", &KeyError{Key: dir})}
	}
	dr, ok := p.d.(DirRemover)
	if !ok {
		return false, nil
	}
	removed, err := dr.RemoveEmptyDir(ctx, dir)
	if err != nil {
		return false, p.wrap(ctx, "remove dir", dir, err)
	}
	return removed, nil
}
