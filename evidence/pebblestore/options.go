package pebblestore

import (
	"errors"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// DefaultBallastSize is the room reserved on disk by Open (see
// Options.BallastSize).
const DefaultBallastSize = 64 << 20

// Options configures a Store. The zero value works: every field documents
// its default, applied by EnsureDefaults.
type Options struct {
	// FS is the filesystem Open uses. Default vfs.Default (the OS). Tests
	// inject vfs.NewMem or errorfs here.
	FS vfs.FS

	// Logger receives Pebble's messages (Infof at Debug: recovery chatter, Errorf and Fatalf
	// at Error) and the store's own warnings. Default slog.Default().
	Logger *slog.Logger

	// OnFatal is called once, after logging, when Pebble reports a fatal
	// error (see FatalError). It should stop the process (flush logs, exit
	// non-zero). If it returns, or is nil (the default), the store panics
	// with the *FatalError: the goroutine Pebble called from is usually a
	// background one, so the process stops with the message and a stack
	// trace on stderr.
	OnFatal func(*FatalError)

	// BallastSize is the room Open reserves in a ballast file so that a
	// full disk is reported as ErrDiskFull rather than killing the process:
	// on the first ENOSPC the ballast is deleted, the failed write retried,
	// and appends refused until space is back. Default DefaultBallastSize;
	// negative disables the ballast (a full disk is then fatal, as in
	// Pebble). Only Open manages a ballast; New does not.
	BallastSize int64

	// CacheSize is Pebble's block cache in bytes, used only by Open.
	// Default 64 MiB. NB: Pebble charges live memtables to this cache, so
	// with Pebble's own defaults (8 MiB cache, 4 MiB memtables) almost
	// nothing is ever cached and every index lookup of an append reads
	// from the file. Validate requires at least 4×MemTableSize.
	CacheSize int64

	// MemTableSize is Pebble's memtable size in bytes, used only by Open.
	// Default 4 MiB (Pebble's).
	MemTableSize uint64
}

// EnsureDefaults fills every zero field with its default and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.BallastSize == 0 {
		o.BallastSize = DefaultBallastSize
	}
	if o.CacheSize == 0 {
		o.CacheSize = 64 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 4 << 20
	}
	return o
}

// Validate refuses values Pebble cannot honour. Call it after
// EnsureDefaults; Open and New call both.
func (o *Options) Validate() error {
	switch {
	case o.CacheSize < 4*int64(o.MemTableSize):
		return errors.New("pebblestore: Options.CacheSize must be at least 4×MemTableSize (memtables are charged to the cache)")
	case o.MemTableSize < 1<<16:
		// Pebble's own lower bound on a memtable.
		return errors.New("pebblestore: Options.MemTableSize must be at least 64 KiB")
	case o.MemTableSize >= 4<<30:
		return errors.New("pebblestore: Options.MemTableSize must be below 4 GiB")
	}
	return nil
}
