package pgdb

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/govhost/govhost/governance"
)

// ErrCommitUnknown is matched by an append whose connection was lost
// after the commit was sent and whose outcome could not be read back
// before the store's ReadBackTimeout: the records may or may not be
// committed. It also matches governance.ErrStoreUnavailable.
var ErrCommitUnknown = errors.New("pgstore: commit outcome unknown")

// ConnName returns the connection's unique application_name (set by
// Connect), the handle Settle needs.
func ConnName(c *pgx.Conn) string { return c.Config().RuntimeParams["application_name"] }

// Settle makes the outcome of a write sent on the lost connection named
// name final, then calls check on a fresh connection to read it. The
// server may not have noticed the loss (a backend blocked on a lock, or
// inside its commit): pg_terminate_backend ends it and waits for its exit
// (PostgreSQL 14+), after which its transaction is either committed or
// rolled back for good. Settle retries with backoff while the database is
// unavailable, until timeout; then it returns ErrCommitUnknown.
func Settle(ctx context.Context, pool *pgxpool.Pool, name string, timeout time.Duration, check func(ctx context.Context, q Querier) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	backoff := 20 * time.Millisecond
	var last error
	for {
		last = settleOnce(ctx, pool, name, check)
		if last == nil || !Unavailable(last) {
			return last
		}
		select {
		case <-ctx.Done():
			return errors.Join(ErrCommitUnknown, governance.ErrStoreUnavailable, last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func settleOnce(ctx context.Context, pool *pgxpool.Pool, name string, check func(ctx context.Context, q Querier) error) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	for {
		var alive bool
		err := c.QueryRow(ctx, `SELECT coalesce(bool_or(NOT pg_terminate_backend(pid, 1000)), false)
			FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&alive)
		if err != nil {
			return err
		}
		if !alive {
			break
		}
	}
	return check(ctx, c)
}

// Querier is what a read-back needs of a connection.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
