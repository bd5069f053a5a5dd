package pgstore

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/internal/pgdb"
)

var (
	_ evidence.Store         = (*Store)(nil)
	_ evidence.BatchAppender = (*Store)(nil)
	_ evidence.ChainLister   = (*Store)(nil)
)

// Store is a durable evidence.Store on PostgreSQL. Every method is safe
// for concurrent use, also with other Stores (in this or other processes)
// on the same tables; returned slices belong to the caller. Close it.
type Store struct {
	pool  *pgxpool.Pool
	owned bool // Open made the pool; Close closes it
	opts  Options

	mu     sync.RWMutex // held shared by operations, exclusively by Close
	closed bool
}

// Open connects to dsn (a postgres:// URL or key=value string; "" takes
// the PG* environment variables, as libpq does), creates or migrates the
// evidence tables in the connection's current schema, and returns the
// store. A malformed dsn is ErrDSN; a newer schema ErrSchemaTooNew; an
// unreachable database matches governance.ErrStoreUnavailable.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	pool, err := pgdb.Connect(ctx, dsn, opts.pool())
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New returns a store over a pool the caller keeps owning (Close leaves it
// open); the pool settings in opts are then ignored. For the ambiguous
// commit read-back to find a lost connection's backend, the pool should
// come from Open or from another store's Pool.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, errors.New("pgstore: New needs a non-nil pool")
	}
	if err := pgdb.Migrate(ctx, pool, component, migrations); err != nil {
		return nil, err
	}
	return &Store{pool: pool, opts: opts}, nil
}

// Pool returns the connection pool, so the policy store can share it.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close waits for in-flight operations and closes the pool if Open made
// it. Later calls fail with ErrClosed. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.owned {
		s.pool.Close()
	}
	return nil
}

// enter refuses a closed store; on nil the caller must call s.mu.RUnlock.
func (s *Store) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	return nil
}
