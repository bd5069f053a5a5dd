package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgdb"
	"github.com/govhost/govhost/policy"
	"github.com/govhost/govhost/policy/internal/resolve"
)

// Store is the policy.Store on PostgreSQL. Every method is safe for
// concurrent use, also with Stores of other processes on the same tables.
// Close it.
type Store struct {
	pool     *pgxpool.Pool
	owned    bool
	avail    policy.Availability
	verified policy.SnapshotCache

	mu     sync.RWMutex // shared by operations, exclusive by Close
	closed bool
}

var _ policy.Store = (*Store)(nil)

// ErrClosed: the store was closed.
var ErrClosed = errors.New("pgstore: policy store closed")

// Open connects to dsn ("" takes the PG* environment variables), creates
// or migrates the policy tables in the connection's current schema and
// returns a store that owns its pool.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
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

// New returns a store over a pool the caller keeps owning (the evidence
// store's, to share one pool); the pool settings in opts are ignored.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New needs a non-nil pool")
	}
	if err := pgdb.Migrate(ctx, pool, component, migrations); err != nil {
		return nil, err
	}
	return &Store{pool: pool, avail: opts.Availability}, nil
}

// Close closes the pool if Open made it; later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.owned {
		s.pool.Close()
	}
	s.closed = true
	return nil
}

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

func snapshotKey(policyID uuid.UUID, version string) string {
	return fmt.Sprintf("policy_snapshots/%s/%s", policyID, version)
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// read returns the stored snapshot, checked, and whether it exists; lock
// is "" or a row-locking clause (FOR UPDATE, FOR SHARE) inside a
// transaction.
func (s *Store) read(ctx context.Context, q querier, policyID uuid.UUID, version, lock string) (governance.PolicySnapshot, bool, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT snapshot FROM policy_snapshots WHERE policy_id = $1 AND version = $2 `+lock, policyID, version).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return governance.PolicySnapshot{}, false, nil
	}
	if err != nil {
		return governance.PolicySnapshot{}, false, pgdb.Wrap(fmt.Sprintf("read %s@%s", policyID, version), err)
	}
	snap, err := s.verified.Decode(snapshotKey(policyID, version), policyID, version, raw)
	if err != nil {
		return governance.PolicySnapshot{}, false, err
	}
	return snap, true, nil
}

// Put implements policy.Store.
func (s *Store) Put(ctx context.Context, snap governance.PolicySnapshot) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if err := policy.CheckPut(snap); err != nil {
		return err
	}
	value, err := snap.MarshalJSON()
	if err != nil {
		return fmt.Errorf("pgstore: encode %s: %w", snap.Ref(), err)
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO policy_snapshots (policy_id, version, snapshot) VALUES ($1, $2, $3)
		ON CONFLICT (policy_id, version) DO NOTHING`, snap.PolicyID(), snap.Version(), string(value))
	if err != nil {
		return pgdb.Wrap("put "+snap.Ref(), err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	stored, found, err := s.read(ctx, s.pool, snap.PolicyID(), snap.Version(), "")
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("pgstore: put %s: the stored version vanished", snap.Ref())
	}
	return policy.CheckRePut(stored, snap)
}

// Get implements policy.Store.
func (s *Store) Get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error) {
	if err := s.enter(ctx); err != nil {
		return governance.PolicySnapshot{}, err
	}
	defer s.mu.RUnlock()
	return s.get(ctx, policyID, version)
}

func (s *Store) get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error) {
	snap, found, err := s.read(ctx, s.pool, policyID, version, "")
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	if !found {
		return governance.PolicySnapshot{}, &governance.PolicyNotFoundError{PolicyID: policyID.String(), Version: version}
	}
	return snap, nil
}

// Activate implements policy.Store. The version's row is locked for the
// check and the write, so concurrent activations (on any server) make one
// transition and the others return it unchanged.
func (s *Store) Activate(ctx context.Context, policyID uuid.UUID, version string, actor *governance.ActorRef, at time.Time) (governance.PolicySnapshot, error) {
	if err := s.enter(ctx); err != nil {
		return governance.PolicySnapshot{}, err
	}
	defer s.mu.RUnlock()
	var out governance.PolicySnapshot
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		stored, found, err := s.read(ctx, tx, policyID, version, "FOR UPDATE")
		if err != nil {
			return err
		}
		if !found {
			return &governance.PolicyNotFoundError{PolicyID: policyID.String(), Version: version}
		}
		active, err := policy.ActivateSnapshot(stored, s.avail, actor, at)
		if err != nil {
			return err
		}
		if stored.IsActive() {
			out = stored
			return nil
		}
		value, err := active.MarshalJSON()
		if err != nil {
			return fmt.Errorf("pgstore: encode %s: %w", active.Ref(), err)
		}
		if _, err := tx.Exec(ctx, `UPDATE policy_snapshots SET snapshot = $3 WHERE policy_id = $1 AND version = $2`, policyID, version, string(value)); err != nil {
			return pgdb.Wrap("activate "+active.Ref(), err)
		}
		out = active
		return nil
	})
	if err != nil {
		return governance.PolicySnapshot{}, wrapTx("activate", err)
	}
	return out, nil
}

// wrapTx adds unavailability to a transaction's own failures (begin,
// commit), leaving the rule errors returned from inside it as they are.
func wrapTx(op string, err error) error {
	if errors.Is(err, governance.ErrStoreUnavailable) || !pgdb.Unavailable(err) {
		return err
	}
	return pgdb.Wrap(op, err)
}

// Bind implements policy.Store.
func (s *Store) Bind(ctx context.Context, b governance.PolicyBinding) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if err := b.Validate(); err != nil {
		return err
	}
	value, err := b.MarshalJSON()
	if err != nil {
		return fmt.Errorf("pgstore: encode binding %s: %w", b.BindingID, err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if stored, found, err := readBinding(ctx, tx, b.BindingID); err != nil || found {
			if err != nil {
				return err
			}
			return policy.CheckReBind(stored, b)
		}
		target, found, err := s.read(ctx, tx, b.PolicyID, b.PolicyVersion, "FOR SHARE")
		if err != nil {
			return err
		}
		if err := policy.CheckBindTarget(b, target, found); err != nil {
			return err
		}
		existing, err := lockedLabel(ctx, tx, b.Scope, b.Selector)
		if err != nil {
			return err
		}
		if err := policy.CheckBindLabel(b, existing); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO policy_bindings (binding_id, scope, selector, binding) VALUES ($1, $2, $3, $4)
			ON CONFLICT (binding_id) DO NOTHING`, b.BindingID, string(b.Scope), b.Selector, string(value))
		if err != nil {
			return pgdb.Wrap("bind "+b.BindingID.String(), err)
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
		// Another writer stored this binding id since our read.
		stored, _, err := readBinding(ctx, tx, b.BindingID)
		if err != nil {
			return err
		}
		return policy.CheckReBind(stored, b)
	})
	return wrapTx("bind", err)
}

func readBinding(ctx context.Context, q querier, id uuid.UUID) (governance.PolicyBinding, bool, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT binding FROM policy_bindings WHERE binding_id = $1`, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return governance.PolicyBinding{}, false, nil
	}
	if err != nil {
		return governance.PolicyBinding{}, false, pgdb.Wrap("read binding "+id.String(), err)
	}
	b, err := policy.DecodeBinding("policy_bindings/"+id.String(), raw)
	return b, err == nil, err
}

// Resolve implements policy.Store.
func (s *Store) Resolve(ctx context.Context, role, resource string) (governance.PolicySnapshot, error) {
	if err := s.enter(ctx); err != nil {
		return governance.PolicySnapshot{}, err
	}
	defer s.mu.RUnlock()
	ref, err := resolve.Resolve(ctx, role, resource, func(ctx context.Context, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
		return lookup(ctx, s.pool, scope, selector)
	})
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	snap, err := s.get(ctx, ref.PolicyID, ref.Version)
	if err != nil {
		return governance.PolicySnapshot{}, err
	}
	if !snap.IsActive() {
		return governance.PolicySnapshot{}, policy.NotActiveBound(snapshotKey(ref.PolicyID, ref.Version), snap)
	}
	return snap, nil
}

// lookup returns the bindings stored for (scope, selector), checking each
// row holds the binding its key columns say.
func lookup(ctx context.Context, q rowsQuerier, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
	rows, err := q.Query(ctx, `SELECT binding_id, binding FROM policy_bindings WHERE scope = $1 AND selector = $2 ORDER BY binding_id`, string(scope), selector)
	if err != nil {
		return nil, pgdb.Wrap("scan bindings", err)
	}
	defer rows.Close()
	var out []governance.PolicyBinding
	for rows.Next() {
		var (
			id  uuid.UUID
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, pgdb.Wrap("scan bindings", err)
		}
		key := "policy_bindings/" + id.String()
		b, err := policy.DecodeBinding(key, raw)
		if err == nil && (b.BindingID != id || b.Scope != scope || b.Selector != selector) {
			err = &policy.IntegrityError{Key: key, Field: "binding_id", Reason: "binding stored under another binding's key"}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, pgdb.Wrap("scan bindings", err)
	}
	return out, nil
}

type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// lockedLabel takes the transaction's lock on (scope, selector), so that
// binds and unbinds of one label run one at a time across every process
// sharing the database, and returns the bindings stored there.
func lockedLabel(ctx context.Context, tx pgx.Tx, scope governance.PolicyScope, selector string) ([]governance.PolicyBinding, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "govhost/policy-label/"+string(scope)+"/"+selector); err != nil {
		return nil, pgdb.Wrap("lock binding label", err)
	}
	return lookup(ctx, tx, scope, selector)
}

// Unbind implements policy.Store.
func (s *Store) Unbind(ctx context.Context, u policy.Unbinding) (int, error) {
	if err := s.enter(ctx); err != nil {
		return 0, err
	}
	defer s.mu.RUnlock()
	if err := u.Validate(); err != nil {
		return 0, err
	}
	removed := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		removed = 0
		existing, err := lockedLabel(ctx, tx, u.Scope, u.Selector)
		if err != nil {
			return err
		}
		for _, b := range existing {
			if !u.Matches(b) {
				continue
			}
			if _, err := tx.Exec(ctx, `DELETE FROM policy_bindings WHERE binding_id = $1`, b.BindingID); err != nil {
				return pgdb.Wrap("unbind "+b.BindingID.String(), err)
			}
			removed++
		}
		return nil
	})
	if err != nil {
		return 0, wrapTx("unbind", err)
	}
	return removed, nil
}

// Bindings implements policy.Store.
func (s *Store) Bindings(ctx context.Context) ([]governance.PolicyBinding, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	rows, err := s.pool.Query(ctx, `SELECT binding_id, binding FROM policy_bindings`)
	if err != nil {
		return nil, pgdb.Wrap("list bindings", err)
	}
	defer rows.Close()
	var out []governance.PolicyBinding
	for rows.Next() {
		var (
			id  uuid.UUID
			raw []byte
		)
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, pgdb.Wrap("list bindings", err)
		}
		b, err := policy.DecodeBinding("policy_bindings/"+id.String(), raw)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, pgdb.Wrap("list bindings", err)
	}
	policy.SortBindings(out)
	return out, nil
}
