package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestSchema_IsolatesTables(t *testing.T) {
	ctx := context.Background()
	a, b := Schema(t), Schema(t)
	ca, err := pgx.Connect(ctx, a)
	require.NoError(t, err)
	defer ca.Close(ctx)
	cb, err := pgx.Connect(ctx, b)
	require.NoError(t, err)
	defer cb.Close(ctx)
	_, err = ca.Exec(ctx, "CREATE TABLE x (v int)")
	require.NoError(t, err)
	_, err = cb.Exec(ctx, "CREATE TABLE x (v int)")
	require.NoError(t, err, "the same table name in another schema")
	_, err = ca.Exec(ctx, "INSERT INTO x VALUES (1)")
	require.NoError(t, err)
	var n int
	require.NoError(t, cb.QueryRow(ctx, "SELECT count(*) FROM x").Scan(&n))
	require.Equal(t, 0, n)
}

func TestServer_StopRestart(t *testing.T) {
	s, err := Start(Options{})
	Require(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ctx := context.Background()
	require.NoError(t, s.Exec(ctx, "", "CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)"))
	require.NoError(t, s.Stop("immediate"))
	require.Error(t, s.Exec(ctx, "", "SELECT 1"), "stopped")
	require.NoError(t, s.Restart())
	conn, err := pgx.Connect(ctx, s.DSN(""))
	require.NoError(t, err)
	defer conn.Close(ctx)
	var v int
	require.NoError(t, conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v))
	require.Equal(t, 7, v)
}
