package pgdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrSchemaTooNew refuses a database whose schema a newer govhost wrote:
// this build would misread it.
var ErrSchemaTooNew = errors.New("pgstore: database schema is newer than this build")

// versionsTable records, per component ("evidence", "policy"), how many
// migrations have been applied in this schema.
const versionsTable = `CREATE TABLE IF NOT EXISTS govhost_schema_versions (
	component  text PRIMARY KEY,
	version    integer NOT NULL CHECK (version >= 0),
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Migrate brings component's tables to len(steps): step i (0-based) takes
// the schema from version i to i+1, and steps only ever grow at the end.
// Steps run in one transaction under an advisory lock, so servers starting
// together apply each step once; an up-to-date schema costs one query. A
// recorded version above len(steps) is ErrSchemaTooNew and nothing
// changes.
func Migrate(ctx context.Context, pool *pgxpool.Pool, component string, steps []string) error {
	current, err := schemaVersion(ctx, pool, component)
	if err != nil {
		return err
	}
	if current > len(steps) {
		return tooNew(component, current, len(steps))
	}
	if current == len(steps) {
		return nil
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '/govhost/' || $1))`, component); err != nil {
			return Wrap("migrate: lock", err)
		}
		if _, err := tx.Exec(ctx, versionsTable); err != nil {
			return Wrap("migrate: versions table", err)
		}
		var v int
		err := tx.QueryRow(ctx, `SELECT version FROM govhost_schema_versions WHERE component = $1`, component).Scan(&v)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return Wrap("migrate: read version", err)
		}
		if v > len(steps) {
			return tooNew(component, v, len(steps))
		}
		for i := v; i < len(steps); i++ {
			if _, err := tx.Exec(ctx, steps[i]); err != nil {
				return Wrap(fmt.Sprintf("migrate %s to version %d", component, i+1), err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO govhost_schema_versions (component, version) VALUES ($1, $2)
			ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version, applied_at = now()`, component, len(steps))
		return Wrap("migrate: record version", err)
	})
}

func tooNew(component string, got, want int) error {
	return fmt.Errorf("%w: %s schema version %d, this build knows %d", ErrSchemaTooNew, component, got, want)
}

// schemaVersion reads the recorded version without locking; 0 when the
// versions table or the component's row does not exist yet.
func schemaVersion(ctx context.Context, pool *pgxpool.Pool, component string) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('govhost_schema_versions') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, Wrap("migrate: find versions table", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := pool.QueryRow(ctx, `SELECT version FROM govhost_schema_versions WHERE component = $1`, component).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, Wrap("migrate: read version", err)
	}
	return v, nil
}
