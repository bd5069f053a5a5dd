package pebblestore

import (
	"errors"
	"fmt"
)

// Sentinels, matched with errors.Is. Errors returned by the store wrap them
// with context (and, where there is one, the underlying Pebble or OS error).
var (
	// ErrLocked: the directory is held by another open store (another
	// process, or another Open in this process).
	ErrLocked = errors.New("pebblestore: directory is in use by another store")

	// ErrForeignDirectory: the directory holds files but no Pebble database.
	// The store refuses to create its files among someone else's.
	ErrForeignDirectory = errors.New("pebblestore: directory is not empty and holds no Pebble database")

	// ErrCorrupt: the database or the evidence keyspace could not be read
	// as written (bad manifest, evidence keys without a format marker, an
	// undecodable record in Read). Verify reports tampered records as a
	// result, never as this error.
	ErrCorrupt = errors.New("pebblestore: stored data is corrupt")

	// ErrUnsupportedFormat: the evidence keyspace was written by an
	// incompatible version of this package.
	ErrUnsupportedFormat = errors.New("pebblestore: unsupported evidence format")

	// ErrDiskFull: the disk ran out of space. Appends are refused until
	// space is freed (the store re-creates its ballast first); nothing that
	// was acknowledged is lost.
	ErrDiskFull = errors.New("pebblestore: disk full")

	// ErrIO: a read or write failed. For Append, nothing was acknowledged.
	ErrIO = errors.New("pebblestore: I/O error")

	// ErrFenced: an earlier write failed after it reached the WAL buffer,
	// so whether it is durable is unknown (see package doc). Every later
	// call fails with this error; Close and reopen to recover.
	ErrFenced = errors.New("pebblestore: store fenced after a failed write; close and reopen")

	// ErrClosed: the store was closed.
	ErrClosed = errors.New("pebblestore: store closed")
)

// FatalError is the panic value raised when Pebble reports a fatal error
// through its logger (a failed commit pipeline, MANIFEST write or sync). It
// is also passed to Options.OnFatal. Pebble's state is undefined after
// such an error, so the process must stop: every append acknowledged before
// is durable, and reopening the directory recovers it.
type FatalError struct {
	Dir     string
	Message string
}

func (e *FatalError) Error() string {
	return fmt.Sprintf("pebblestore: fatal storage error in %s: %s (no pending append was acknowledged; restart to recover every acknowledged record)", e.Dir, e.Message)
}
