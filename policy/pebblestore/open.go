package pebblestore

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/govhost/govhost/policy"
)

// Options configures a Store. The zero value works: nothing is available
// to activation (fail closed) and Open uses the real file system.
type Options struct {
	// Availability answers activation's adapter and module checks. Default
	// nil: every adapter and module is unavailable, so only a snapshot
	// without gate bindings can be activated.
	Availability policy.Availability

	// FS is the file system Open opens the directory on. Default
	// vfs.Default. New ignores it (the shared DB has its own).
	FS vfs.FS

	// Logger receives the messages of the Pebble database Open opens
	// (Infof at Info, Errorf at Error). Default slog.Default(). New ignores
	// it: the owner of a shared DB configured its logger.
	Logger *slog.Logger
}

// EnsureDefaults fills in the defaults of unset fields.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports options that cannot work; the zero value is valid.
func (o *Options) Validate() error { return nil }

// ErrLayout is returned by Open and New when the database holds policy
// data in a layout this version does not read.
var ErrLayout = errors.New("pebblestore: unsupported policy key layout")

// Store is the durable policy.Store. Close it when done.
type Store struct {
	db    *pebble.DB
	owned bool
	avail policy.Availability

	writeMu  sync.Mutex // serializes read-check-write of Put, Activate, Bind
	verified policy.SnapshotCache
}

var _ policy.Store = (*Store)(nil)

// Open opens (creating if needed) a Pebble database in dir that this Store
// owns: Close closes it.
func Open(dir string, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{FS: opts.FS, Logger: pebbleLogger{opts.Logger}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s, err := newStore(db, true, opts)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// New returns a Store on a database shared with other stores (for example
// the evidence store): it writes only keys under KeyPrefix, and its Close
// does not close db. The caller keeps db open while the Store is used.
func New(db *pebble.DB, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return newStore(db, false, opts)
}

func newStore(db *pebble.DB, owned bool, opts Options) (*Store, error) {
	v, err := get(db, formatKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := db.Set(formatKey, []byte(formatVersion), pebble.Sync); err != nil {
			return nil, fmt.Errorf("pebblestore: write layout version: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("pebblestore: read layout version: %w", err)
	case string(v) != formatVersion:
		return nil, fmt.Errorf("%w: %q (this build reads %q)", ErrLayout, v, formatVersion)
	}
	return &Store{db: db, owned: owned, avail: opts.Availability}, nil
}

// Close closes the database if Open opened it; a shared one stays open.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.db.Close()
}

// get returns a copy of key's value, or pebble.ErrNotFound.
func get(db *pebble.DB, key []byte) ([]byte, error) {
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), v...)
	return out, closer.Close()
}
