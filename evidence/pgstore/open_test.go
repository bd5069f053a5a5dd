package pgstore

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
)

func TestOpen_MigrationIsIdempotentAndKeepsRecords(t *testing.T) {
	dsn := pgtest.Schema(t)
	a, err := Open(ctx, dsn, Options{})
	require.NoError(t, err)
	chain, recs := storetest.Fill(t, a, 3)
	require.NoError(t, a.Close())

	b, err := Open(ctx, dsn, Options{})
	require.NoError(t, err, "reopening an up-to-date schema")
	defer b.Close()
	head, err := b.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, recs[2].Head(), head)
}

func TestOpen_RefusesNewerSchema(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := Open(ctx, dsn, Options{})
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `UPDATE govhost_schema_versions SET version = version + 1 WHERE component = 'evidence'`)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	_, err = Open(ctx, dsn, Options{})
	require.ErrorIs(t, err, ErrSchemaTooNew)
	require.Contains(t, err.Error(), "evidence schema version 2, this build knows 1")
}

func TestOpen_MalformedDSNNeverEchoesIt(t *testing.T) {
	_, err := Open(ctx, "postgres://govhost:s3cret-pw@127.0.0.1:notaport/db", Options{})
	require.ErrorIs(t, err, ErrDSN)
	require.NotContains(t, err.Error(), "s3cret-pw")
}

func TestOpen_UnreachableIsUnavailable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close()) // nothing listens there now
	_, err = Open(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=postgres connect_timeout=2", port), Options{})
	require.ErrorIs(t, err, governance.ErrStoreUnavailable)
}

func TestOpen_InvalidOptions(t *testing.T) {
	_, err := Open(ctx, pgtest.Schema(t), Options{MaxConns: -1})
	require.Error(t, err)
	_, err = Open(ctx, pgtest.Schema(t), Options{ReadBackTimeout: -1})
	require.Error(t, err)
}

func TestStore_Chains(t *testing.T) {
	storetest.RunChainLister(t, harness())
}

func TestStore_ClosedRefuses(t *testing.T) {
	s := open(t, Options{})
	require.NoError(t, s.Close())
	_, err := s.Head(ctx, uuid.New())
	require.True(t, errors.Is(err, ErrClosed))
}
