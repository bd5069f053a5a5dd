package pgdb

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Pool settings left zero come from the DSN when it names them, else the
// defaults; explicit settings win.
func TestConnect_PoolSettingsFromOptionsOrDSN(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Schema(t)
	pool, err := Connect(ctx, dsn, Pool{})
	require.NoError(t, err)
	require.EqualValues(t, DefaultMaxConns, pool.Config().MaxConns)
	var st string
	require.NoError(t, pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&st))
	require.Equal(t, "10s", st)
	pool.Close()

	pool, err = Connect(ctx, dsn+" pool_max_conns=3 pool_max_conn_lifetime=1h statement_timeout=2500", Pool{})
	require.NoError(t, err)
	require.EqualValues(t, 3, pool.Config().MaxConns)
	require.Equal(t, time.Hour, pool.Config().MaxConnLifetime)
	require.NoError(t, pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&st))
	require.Equal(t, "2500ms", st)
	pool.Close()

	pool, err = Connect(ctx, dsn+" pool_max_conns=3", Pool{MaxConns: 5, StatementTimeout: 4 * time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 5, pool.Config().MaxConns)
	require.NoError(t, pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&st))
	require.Equal(t, "4s", st)
	pool.Close()
}
