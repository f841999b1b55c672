package parquetio

import (
	"fmt"

	"github.com/godelta/delta/deltaerr"
)

// abort is the panic value of [Fail]: only this package's panics that
// carry it are recovered, by [Catch].
type abort struct{ err error }

// Fail aborts decoding with err; [Catch] returns it.
func Fail(err error) { panic(abort{err}) }

// Corruptf aborts decoding with a *deltaerr.CorruptError for file with a
// formatted reason.
func Corruptf(file, format string, args ...any) {
	Fail(deltaerr.Corruptf(file, format, args...))
}

// Check aborts decoding with err unless it is nil.
func Check(err error) {
	if err != nil {
		Fail(err)
	}
}

// Catch runs fn and returns its error, or the error of a [Fail] inside
// it. Any other panic goes on: it is a bug, not bad input.
func Catch(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			a, ok := v.(abort)
			if !ok {
				panic(v)
			}
			err = a.err
		}
	}()
	return fn()
}

// Decode runs fn, a call of parquet-go on bytes of file, and turns a
// panic in it into a *deltaerr.CorruptError naming file and the column
// whose bytes fn decodes ("" for the footer). fn must do nothing but call
// parquet-go: the recover would hide a bug of ours. Decode allocates
// nothing unless fn panics: it wraps every page read.
func Decode(file, column string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			reason := "Parquet decoder failed"
			if column != "" {
				reason = "column " + column + ": " + reason
			}
			err = &deltaerr.CorruptError{Path: file, Reason: reason, Err: panicError{v}}
		}
	}()
	return fn()
}

// panicError is the value of a recovered decoder panic as an error.
type panicError struct{ v any }

func (p panicError) Error() string {
	switch v := p.v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return fmt.Sprint(p.v)
}

// Unwrap returns the panic value if it is an error.
func (p panicError) Unwrap() error {
	e, _ := p.v.(error)
	return e
}
