package pgstore

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
)

// viaProxy opens a store on a fresh schema whose one connection goes
// through a proxy that can drop it mid-statement, and a second store
// straight to the server (to look at what was committed).
func viaProxy(t *testing.T, opts Options) (*Store, *Store, *pgtest.Proxy) {
	t.Helper()
	srv := pgtest.Shared(t)
	dsn := pgtest.SchemaOn(t, srv)
	p, err := pgtest.NewProxy(srv.Port)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	opts.MaxConns = 1
	s, err := Open(ctx, strings.Replace(dsn, "port="+strconv.Itoa(srv.Port), "port="+strconv.Itoa(p.Port()), 1), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	direct, err := Open(ctx, dsn, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = direct.Close() })
	return s, direct, p
}

// warm appends two records so both append statements are prepared on the
// one connection: the next append is a single Bind/Execute round trip.
func warm(t *testing.T, s *Store) (uuid.UUID, governance.ChainHead) {
	t.Helper()
	chain, recs := storetest.Fill(t, s, 2)
	return chain, recs[1].Head()
}

// The connection is lost after the server committed, before the client
// heard: the store reads back, finds the record, and acknowledges it.
func TestAppend_AmbiguousCommitThatCommittedIsAcknowledged(t *testing.T) {
	s, direct, p := viaProxy(t, Options{})
	chain, head := warm(t, s)
	r := storetest.Next(t, head, chain)
	p.Arm(pgtest.CutBeforeReply, 0)
	rc, err := s.Append(ctx, r)
	require.Equal(t, 1, p.Cuts(), "the reply was cut")
	require.NoError(t, err, "read back found the committed record")
	require.Equal(t, governance.ReceiptFor(r), rc)
	got, err := direct.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, r.Head(), got)

	// The store goes on on a new connection.
	_, err = s.Append(ctx, storetest.Next(t, r.Head(), chain))
	require.NoError(t, err)
}

// The connection is lost before the server saw the statement: read back
// finds nothing, the append fails as unavailable, and nothing is stored —
// the same record can be appended again.
func TestAppend_LostBeforeTheServerIsNotAppended(t *testing.T) {
	s, direct, p := viaProxy(t, Options{})
	chain, head := warm(t, s)
	r := storetest.Next(t, head, chain)
	p.Arm(pgtest.CutBeforeServer, 0)
	_, err := s.Append(ctx, r)
	require.Equal(t, 1, p.Cuts())
	require.ErrorIs(t, err, governance.ErrStoreUnavailable)
	require.NotErrorIs(t, err, ErrCommitUnknown)
	got, err := direct.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, head, got, "nothing appended")
	_, err = s.Append(ctx, r)
	require.NoError(t, err, "the record was not stored, so it appends now")
}

// The statement reached a backend that is blocked (another transaction
// holds the chain's head row) when the network partitions: the backend
// never sees its client go. Unsettled, that
// backend would commit once the lock is released — after the client was
// told "not appended". The store terminates it before reading back, so
// its answer stays true.
func TestAppend_LostWhileBlockedIsSettledBeforeAnswering(t *testing.T) {
	s, direct, p := viaProxy(t, Options{})
	chain, head := warm(t, s)

	locker, err := direct.pool.Begin(ctx)
	require.NoError(t, err)
	defer locker.Rollback(ctx)
	_, err = locker.Exec(ctx, `SELECT 1 FROM evidence_chains WHERE chain_id = $1 FOR UPDATE`, chain)
	require.NoError(t, err)

	r := storetest.Next(t, head, chain)
	p.DropCancels(true) // lost with the partition: pgx's own cancel cannot help
	p.Arm(pgtest.PartitionAfterDelay, 300*time.Millisecond)
	_, err = s.Append(ctx, r)
	t.Log(err)
	rows, _ := direct.pool.Query(ctx, `SELECT pid, coalesce(application_name,''), coalesce(state,''), coalesce(wait_event_type,''), left(coalesce(query,''), 60) FROM pg_stat_activity WHERE backend_type = 'client backend'`)
	for rows.Next() {
		var pid int
		var a, b, c, d string
		_ = rows.Scan(&pid, &a, &b, &c, &d)
		t.Log(pid, a, b, c, d)
	}
	rows.Close()
	require.Equal(t, 1, p.Cuts())
	require.ErrorIs(t, err, governance.ErrStoreUnavailable)

	require.NoError(t, locker.Rollback(ctx)) // the lock goes; a live backend would now commit
	time.Sleep(300 * time.Millisecond)
	var n int
	require.NoError(t, direct.pool.QueryRow(ctx, `SELECT count(*) FROM evidence_records WHERE record_id = $1`, r.RecordID).Scan(&n))
	require.Zero(t, n, "the lost append never commits")
	got, err := direct.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, head, got)
}

// The connection is lost after the commit and the database stays out of
// reach past ReadBackTimeout: the append fails with ErrCommitUnknown
// (never a receipt, never "nothing appended"); once reachable, Head tells.
func TestAppend_UnresolvableCommitIsCommitUnknown(t *testing.T) {
	s, direct, p := viaProxy(t, Options{ReadBackTimeout: 700 * time.Millisecond})
	chain, head := warm(t, s)
	r := storetest.Next(t, head, chain)
	p.Arm(pgtest.CutBeforeReply, 0)
	p.Refuse(true)
	_, err := s.Append(ctx, r)
	require.ErrorIs(t, err, ErrCommitUnknown)
	require.ErrorIs(t, err, governance.ErrStoreUnavailable)
	p.Refuse(false)
	got, err := direct.Head(ctx, chain)
	require.NoError(t, err)
	require.Equal(t, r.Head(), got, "it had committed")
	got, err = s.Head(ctx, chain)
	require.NoError(t, err, "the store recovers once the database is reachable")
	require.Equal(t, r.Head(), got)
}
