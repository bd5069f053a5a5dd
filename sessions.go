package govhost

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/govhost/govhost/internal/pgdb"
)

// SessionStore keeps small values by key, durably, in the engine's own
// database: the open task of each coding agent's session (package hooks
// encodes them), so that a session continues its task after the server
// restarts. Writes are synced before they return. Safe for concurrent use;
// it lives as long as the engine.
type SessionStore interface {
	// PutSession stores value under key, replacing any.
	PutSession(ctx context.Context, key string, value []byte) error
	// GetSession returns key's value; ok is false when there is none.
	GetSession(ctx context.Context, key string) (value []byte, ok bool, err error)
	// DeleteSession removes key; a missing key is not an error.
	DeleteSession(ctx context.Context, key string) error
}

// sessionKeyPrefix is the Pebble keys of the session store; the evidence
// store owns "e/", the policy store "p/".
const sessionKeyPrefix = "h/"

// pebbleSessions is the session store in the engine's Pebble database.
type pebbleSessions struct{ db *pebble.DB }

func (s pebbleSessions) PutSession(_ context.Context, key string, value []byte) error {
	if err := s.db.Set([]byte(sessionKeyPrefix+key), value, pebble.Sync); err != nil {
		return fmt.Errorf("govhost: keep session %q: %w", key, err)
	}
	return nil
}

func (s pebbleSessions) GetSession(_ context.Context, key string) ([]byte, bool, error) {
	v, closer, err := s.db.Get([]byte(sessionKeyPrefix + key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("govhost: read session %q: %w", key, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), true, nil
}

func (s pebbleSessions) DeleteSession(_ context.Context, key string) error {
	if err := s.db.Delete([]byte(sessionKeyPrefix+key), pebble.Sync); err != nil {
		return fmt.Errorf("govhost: forget session %q: %w", key, err)
	}
	return nil
}

// pgSessionSteps are the session table's migrations (component
// "sessions"); steps only ever grow at the end.
var pgSessionSteps = []string{
	`CREATE TABLE hook_sessions (
		session_key text PRIMARY KEY,
		value       bytea NOT NULL,
		updated_at  timestamptz NOT NULL DEFAULT now()
	)`,
}

// pgSessions is the session store in the engine's PostgreSQL database.
type pgSessions struct{ pool *pgxpool.Pool }

func newPGSessions(ctx context.Context, pool *pgxpool.Pool) (pgSessions, error) {
	if err := pgdb.Migrate(ctx, pool, "sessions", pgSessionSteps); err != nil {
		return pgSessions{}, fmt.Errorf("govhost: the PostgreSQL session table: %w", err)
	}
	return pgSessions{pool: pool}, nil
}

func (s pgSessions) PutSession(ctx context.Context, key string, value []byte) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO hook_sessions (session_key, value) VALUES ($1, $2)
		ON CONFLICT (session_key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, key, value)
	return pgdb.Wrap("keep session", err)
}

func (s pgSessions) GetSession(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM hook_sessions WHERE session_key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, pgdb.Wrap("read session", err)
	}
	return v, true, nil
}

func (s pgSessions) DeleteSession(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM hook_sessions WHERE session_key = $1`, key)
	return pgdb.Wrap("forget session", err)
}
