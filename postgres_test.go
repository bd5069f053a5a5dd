package govhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence/pgstore"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/pgtest"
	policypg "github.com/govhost/govhost/policy/pgstore"
)

// wasmCache is one compilation cache for every engine the tests open:
// compiling the built-in modules is most of an engine's open (minutes
// under -race), and the cache is keyed by module content.
var wasmCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "govhost-wasm-cache-")
	if err != nil {
		panic(err)
	}
	wasmCache = dir
	code := pgtest.Main(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// withCache gives opts the tests' shared compilation cache.
func withCache(opts govhost.Options) govhost.Options {
	if opts.Host == nil {
		cfg := host.NewConfig().WithCompilationCacheDir(wasmCache)
		opts.Host = &cfg
	}
	return opts
}

func TestPostgresDSN_SelectsTheStore(t *testing.T) {
	t.Setenv(govhost.DatabaseURLEnv, "postgres://u@db.example/govhost")
	for _, c := range []struct {
		store, dsn string
		pg         bool
	}{
		{"", "", false},
		{"pebble", "", false},
		{"postgres", "postgres://u@db.example/govhost", true},
		{"postgresql", "postgres://u@db.example/govhost", true},
		{"postgres://x:pw@h:5432/d", "postgres://x:pw@h:5432/d", true},
		{"host=h dbname=d", "host=h dbname=d", true},
	} {
		dsn, pg, err := govhost.PostgresDSN(c.store)
		require.NoError(t, err, c.store)
		require.Equal(t, c.pg, pg, c.store)
		require.Equal(t, c.dsn, dsn, c.store)
	}
	_, _, err := govhost.PostgresDSN("mysql://root:hunter2@h/d")
	require.ErrorIs(t, err, govhost.ErrStoreOption)
	require.NotContains(t, err.Error(), "hunter2")
}

// TestEngine_Postgres_OutageAndRecovery runs governed calls on the
// PostgreSQL stores while the database is stopped (fast, then immediate
// shutdown) and started again: every call during the outage fails with
// GovernanceEvidenceError before the callable, and the same engine works
// again once the database is back, with one valid chain.
func TestEngine_Postgres_OutageAndRecovery(t *testing.T) {
	ctx := context.Background()
	srv, err := pgtest.Start(pgtest.Options{})
	pgtest.Require(t, err)
	defer srv.Close()
	eng, snap, root := openWorkspaceWith(t, govhost.Options{Dir: t.TempDir(), Store: srv.URL(""),
		Postgres: pgstore.Options{ReadBackTimeout: 5e9}})
	defer eng.Close(ctx)
	require.IsType(t, &pgstore.Store{}, eng.Evidence)
	require.IsType(t, &policypg.Store{}, eng.Policies)

	ctl, err := eng.NewController(controller.Config{})
	require.NoError(t, err)
	m := controller.NewManager()
	var ran atomic.Int64
	require.NoError(t, m.Register(controller.Tool{ID: "bash", Fn: func(context.Context, map[string]any) (any, error) {
		ran.Add(1)
		return "ok", nil
	}}))
	require.NoError(t, m.Govern(ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))
	task, err := ctl.OpenTask(ctx, controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version()})
	require.NoError(t, err)
	call := func() error {
		opctx, err := task.Context("bash")
		require.NoError(t, err)
		_, err = m.Invoke(ctx, controller.Call{Tool: "bash", Operation: "execute_command", Arguments: json.RawMessage(`{"command":"git status"}`), Cwd: root}, &opctx)
		return err
	}
	require.NoError(t, call())
	want := int64(1)
	for _, mode := range []string{"fast", "immediate"} {
		require.NoError(t, srv.Stop(mode))
		err := call()
		var ge *governance.GovernanceEvidenceError
		require.ErrorAs(t, err, &ge, "database stopped (%s)", mode)
		require.False(t, ge.CallExecuted)
		require.ErrorIs(t, err, governance.ErrStoreUnavailable)
		var de *governance.GovernanceDeniedError
		require.False(t, errors.As(err, &de), "an outage is not a denial")
		require.Equal(t, want, ran.Load(), "callable not reached while the database is down")

		require.NoError(t, srv.Restart())
		require.NoError(t, call(), "the same engine recovers after a %s shutdown", mode)
		want++
		require.Equal(t, want, ran.Load())
	}
	boundary, err := task.Close(ctx)
	require.NoError(t, err)
	head, err := eng.Evidence.Head(ctx, boundary.ChainID)
	require.NoError(t, err)
	res, err := eng.Evidence.Verify(ctx, boundary.ChainID, head.Hash)
	require.NoError(t, err)
	require.True(t, res.Valid, "%+v", res)
	_, err = eng.Issuer().Mint(ctx, boundary, head.Hash)
	require.NoError(t, err, "three complete operations: the task is certifiable")

	// The bundle finds the task's chain by listing the database's chains.
	b, err := eng.Bundle(ctx, boundary.TaskBoundaryID)
	require.NoError(t, err)
	require.Len(t, b.Records, int(head.Sequence+1))
}
