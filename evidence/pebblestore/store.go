package pebblestore

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

var (
	_ evidence.Store            = (*Store)(nil)
	_ evidence.BatchAppender    = (*Store)(nil)
	_ evidence.UnsyncedAppender = (*Store)(nil)
	_ evidence.SealedAppender   = (*Store)(nil)
)

// Store is a durable evidence.Store on Pebble. Every method is safe for
// concurrent use; returned slices belong to the caller. Close it when done.
type Store struct {
	db    *pebble.DB
	dir   string
	log   *slog.Logger
	owned *ownedDB // set by Open: the DB, lock and ballast Close releases

	// closeMu is held shared by every operation and exclusively by Close,
	// so Close waits for in-flight appends (including their WAL sync) and
	// no operation reaches a closed Pebble DB (which panics).
	closeMu sync.RWMutex
	closed  bool

	fenced atomic.Pointer[error]

	// ids spares the duplicate-id check its Pebble lookups for ids the
	// store certainly does not hold (idfilter.go). Its load starts at the
	// first append (loadIDs) and runs until it has read the id index, or
	// until Close closes stopLoad; loadDone is closed when it has returned.
	ids      *idFilter
	loadOnce sync.Once
	stopLoad chan struct{}
	loadDone chan struct{}

	mu     sync.Mutex // guards chains
	chains map[uuid.UUID]*chainState

	// stripes serialize the duplicate check and the write of a record id
	// across chains. Lock order: chain lock, then stripes in
	// ascending index order. NB: a stripe is held through ApplyNoSyncWait
	// (the commit pipeline), so there must be many more stripes than
	// concurrent appenders or unrelated appends queue behind each other:
	// with 64 stripes, 64 writers spent most of their time here.
	stripes [4096]sync.Mutex
}

// chainState is the per-chain append lock and the cached head.
type chainState struct {
	refs   int // appends holding or waiting for mu; guarded by Store.mu
	mu     sync.Mutex
	loaded bool
	// head is the head of the last batch applied to Pebble (visible, maybe
	// not yet synced). NB: it is updated only after ApplyNoSyncWait
	// succeeded, and read only under mu.
	head governance.ChainHead
}

type ownedDB struct {
	lock    *pebble.Lock
	ballast *ballast
}

// New returns a Store over an open Pebble DB it shares with other stores.
// The store uses only keys starting with "e/" (see doc.go). The caller
// keeps owning db: Close does not close it, and the caller must configure
// db's Logger (Pebble's default exits the process on a fatal error) and any
// disk-room reserve; opts.FS, BallastSize, CacheSize and MemTableSize are
// ignored. Only one Store may use a DB at a time: the append locks and head
// cache are per Store. Close the Store before the DB: it reads the DB in
// the background (the record ids, see idfilter.go) until its Close.
func New(db *pebble.DB, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if db == nil {
		return nil, errors.New("pebblestore: New needs a non-nil *pebble.DB")
	}
	s := newStore(db, "", opts.Logger)
	if err := s.checkFormat(); err != nil {
		return nil, err
	}
	return s, nil
}

// newStore returns a Store on db before its format check; startLoad then
// makes it fast.
func newStore(db *pebble.DB, dir string, log *slog.Logger) *Store {
	return &Store{db: db, dir: dir, log: log, chains: make(map[uuid.UUID]*chainState), ids: newIDFilter()}
}

// loadIDs starts the id filter's load, once, at the first append: a
// process that only reads the store (a short command exporting a chain or
// verifying a certificate) never scans the id index. The caller holds the
// close lock shared, so Close cannot run meanwhile.
func (s *Store) loadIDs() { s.loadOnce.Do(s.startLoad) }

// startLoad starts loading the stored record ids into s.ids, in the
// background: a large store's index takes seconds to read, and appends
// until then look every id up in Pebble, as they always did.
func (s *Store) startLoad() {
	s.stopLoad, s.loadDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.loadDone)
		if err := s.ids.load(s.db, s.stopLoad); err != nil && !errors.Is(err, errLoadStopped) {
			s.log.Warn("pebblestore: cannot load the record ids; every append looks its ids up in the database", slog.String("dir", s.dir), slog.Any("error", err))
		}
	}()
}

// checkFormat writes the format marker into an unused keyspace, upgrades a
// format 1 keyspace (see formatMarker) and refuses an incompatible or
// unmarked one.
func (s *Store) checkFormat() error {
	v, closer, err := s.db.Get(formatKey)
	switch {
	case err == nil:
		got := string(v)
		_ = closer.Close()
		switch got {
		case formatMarker:
			return nil
		case formatMarkerV1, formatMarkerV2:
			return s.upgrade(got)
		}
		return fmt.Errorf("%w: keyspace %q holds %q, this build reads %q", ErrUnsupportedFormat, keyPrefix, got, formatMarker)
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("pebblestore: read format marker: %w: %w", ErrIO, err)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte(keyPrefix), UpperBound: prefixEnd([]byte(keyPrefix))})
	if err != nil {
		return fmt.Errorf("pebblestore: scan keyspace: %w: %w", ErrIO, err)
	}
	used := it.First()
	err = errors.Join(it.Error(), it.Close())
	if err != nil {
		return fmt.Errorf("pebblestore: scan keyspace: %w: %w", ErrIO, err)
	}
	if used {
		return fmt.Errorf("%w: keys under %q but no format marker", ErrCorrupt, keyPrefix)
	}
	if err := s.db.Set(formatKey, []byte(formatMarker), pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: write format marker: %w: %w", ErrIO, err)
	}
	return nil
}

// upgrade turns a format 1 or 2 keyspace into format 3: the new marker
// (and, from format 1, the deletion of the head keys) in one synced batch,
// before any append. From then on an older build refuses the keyspace
// rather than misread batch values or trust heads no longer updated.
func (s *Store) upgrade(from string) error {
	b := s.db.NewBatch()
	defer b.Close()
	if from == formatMarkerV1 {
		heads := []byte{'e', '/', tagHead}
		if err := b.DeleteRange(heads, prefixEnd(heads), nil); err != nil {
			return fmt.Errorf("pebblestore: upgrade format: %w: %w", ErrIO, err)
		}
	}
	if err := b.Set(formatKey, []byte(formatMarker), nil); err != nil {
		return fmt.Errorf("pebblestore: upgrade format: %w: %w", ErrIO, err)
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("pebblestore: upgrade format: %w: %w", ErrIO, err)
	}
	s.log.Info("pebblestore: evidence keyspace upgraded to format 3 (a batch's records in one value)", "dir", s.dir, "from", from)
	return nil
}

// DB returns the Pebble DB under the store, so that another store (the
// policy store) can keep its own keyspace in the same directory and share
// its WAL syncs, logger, fatal path and ballast. It must use keys outside
// "e/" and stop using the DB before this store's Close, which closes the
// DB when Open opened it.
func (s *Store) DB() *pebble.DB { return s.db }

// Close waits for in-flight operations, then closes the DB if Open opened
// it. Later calls fail with ErrClosed. Close is idempotent.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.stopLoad != nil {
		close(s.stopLoad)
		<-s.loadDone
	}
	if s.owned == nil {
		return nil
	}
	err := s.db.Close()
	if lerr := s.owned.lock.Close(); err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("pebblestore: close %s: %w", s.dir, err)
	}
	return nil
}

// enter takes the shared close lock and refuses a closed or fenced store.
// The caller must call s.closeMu.RUnlock when it returns nil.
func (s *Store) enter() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return ErrClosed
	}
	if err := s.fencedErr(); err != nil {
		s.closeMu.RUnlock()
		return err
	}
	return nil
}

// fence stops the store after a failure that leaves durability unknown.
func (s *Store) fence(cause error) {
	if s.fenced.CompareAndSwap(nil, &cause) {
		s.log.Error("pebblestore: store fenced; close and reopen to recover", slog.String("dir", s.dir), slog.Any("cause", cause))
	}
}

func (s *Store) fencedErr() error {
	if p := s.fenced.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrFenced, *p)
	}
	return nil
}

// maxIdleChains bounds the head cache: every task is a chain, so a
// long-running host would otherwise keep one entry per chain it ever
// touched. Beyond it, a chain's entry is dropped when its last append
// ends, and the next append re-reads its persisted head (one Get).
var maxIdleChains = 1 << 16 // a var for tests

// chain returns the chain's state, held until release.
func (s *Store) chain(id uuid.UUID) *chainState {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[id]
	if c == nil {
		c = &chainState{}
		s.chains[id] = c
	}
	c.refs++
	return c
}

func (s *Store) release(id uuid.UUID, c *chainState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.refs--
	if c.refs == 0 && len(s.chains) > maxIdleChains {
		delete(s.chains, id)
	}
}
