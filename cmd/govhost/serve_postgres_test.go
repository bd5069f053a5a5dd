package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/pgtest"
	"github.com/govhost/govhost/server/client"
)

// TestServe_TwoServersOnOnePostgres runs two real `govhost serve
// --store postgres` processes (own data directories, one database) with 32
// clients each, every client a task of its own, authorizing and completing
// calls while PostgreSQL is stopped with a fast and then an immediate
// shutdown and started again. The servers are never restarted. Then:
// every refusal was a typed error body; every chain verifies through
// either server (no gap, no duplicate); every acknowledged completion is
// on its chain; the connection string (with its password) appears in no
// output.
func TestServe_TwoServersOnOnePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and two servers")
	}
	ctx := context.Background()
	srv, err := pgtest.Start(pgtest.Options{})
	pgtest.Require(t, err)
	defer srv.Close()
	const secret = "pw-never-printed-7f3a"
	t.Setenv(govhost.DatabaseURLEnv, pgtest.SchemaOn(t, srv)+" password="+secret)

	var servers [2]*served
	for i := range servers {
		servers[i] = startServe(t, filepath.Join(t.TempDir(), "data"), "--store", "postgres")
	}

	type acked struct{ chain, op uuid.UUID }
	var (
		mu        sync.Mutex
		completed []acked
		chains    []uuid.UUID
		codes     = map[string]int{}
		calls     atomic.Int64
		stop      = make(chan struct{})
		wg        sync.WaitGroup
	)
	typed := func(err error) {
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code == "" {
			t.Errorf("untyped failure: %v", err)
			return
		}
		mu.Lock()
		codes[ce.Code]++
		mu.Unlock()
	}
	for i := 0; i < 64; i++ {
		s := servers[i%2]
		task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
		require.NoError(t, err)
		chains = append(chains, task.ChainID)
		wg.Add(1)
		go func(task api.TaskInfo) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := s.client.Authorize(ctx, task.TaskID, readerCall())
				if err != nil {
					typed(err)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if res.Permit == nil {
					t.Errorf("reader call not allowed: %+v", res)
					return
				}
				if err := s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}); err != nil {
					typed(err)
					time.Sleep(20 * time.Millisecond)
					continue
				}
				mu.Lock()
				completed = append(completed, acked{task.ChainID, res.Permit.OperationID})
				mu.Unlock()
				calls.Add(1)
			}
		}(task)
	}
	waitCalls := func(n int64) {
		deadline := time.Now().Add(time.Minute)
		for calls.Load() < n {
			require.True(t, time.Now().Before(deadline), "only %d calls", calls.Load())
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitCalls(200)
	require.NoError(t, srv.Stop("fast"))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, srv.Restart())
	before := calls.Load()
	waitCalls(before + 200)
	require.NoError(t, srv.Stop("immediate"))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, srv.Restart())
	before = calls.Load()
	waitCalls(before + 200) // both servers recovered without a restart
	close(stop)
	wg.Wait()
	t.Logf("%d acknowledged completions; refusals by code: %v", len(completed), codes)

	recorded := map[uuid.UUID]bool{}
	acknowledged := map[uuid.UUID]bool{}
	for _, a := range completed {
		acknowledged[a.chain] = true
	}
	for i, chain := range chains {
		c := servers[(i+1)%2].client // read through the other server
		head, err := c.ChainHead(ctx, chain)
		var ce *client.Error
		if errors.As(err, &ce) && ce.Code == "chain_not_found" && !acknowledged[chain] {
			// A task none of whose calls got its records before the callable
			// written (one batch each, refused while PostgreSQL was down) has
			// no record; one with an acknowledged completion must have them.
			continue
		}
		require.NoError(t, err)
		res, err := c.VerifyChain(ctx, chain, head.Hash)
		require.NoError(t, err)
		require.True(t, res.Valid, "chain %s: %+v", chain, res)
		var buf bytes.Buffer
		require.NoError(t, c.ExportChain(ctx, chain, &buf))
		seqs := map[int64]bool{}
		require.NoError(t, evidence.ReadJSONL(&buf, func(r governance.EvidenceRecord) bool {
			require.False(t, seqs[r.Sequence], "sequence %d twice", r.Sequence)
			seqs[r.Sequence] = true
			if r.RecordType == governance.CallableCompleted {
				recorded[r.OperationID.UUID] = true
			}
			return true
		}))
	}
	for _, a := range completed {
		require.True(t, recorded[a.op], "acknowledged completion of %s is on chain %s", a.op, a.chain)
	}
	for _, s := range servers {
		require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
		require.Equal(t, 0, s.wait(t), s.stderr.String())
		require.NotContains(t, s.stdout.String()+s.stderr.String(), secret)
	}
}
