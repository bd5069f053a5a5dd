package govhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/internal/pgtest"
)

// TestEngine_SessionsSurviveReopen: both backends keep, replace and
// forget a session value, and a kept one is there after the engine is
// closed and opened again (the server's restart).
func TestEngine_SessionsSurviveReopen(t *testing.T) {
	for _, backend := range []string{"pebble", "postgres"} {
		t.Run("store="+backend, func(t *testing.T) {
			ctx := context.Background()
			opts := withCache(govhost.Options{Dir: t.TempDir()})
			if backend == "postgres" {
				opts.Store = pgtest.Schema(t)
			}
			eng, err := govhost.Open(ctx, opts)
			require.NoError(t, err)
			_, ok, err := eng.Sessions.GetSession(ctx, "claude/s1")
			require.NoError(t, err)
			require.False(t, ok)
			require.NoError(t, eng.Sessions.PutSession(ctx, "claude/s1", []byte(`{"v":1}`)))
			require.NoError(t, eng.Sessions.PutSession(ctx, "claude/s1", []byte(`{"v":2}`)))
			require.NoError(t, eng.Sessions.PutSession(ctx, "codex/s2", []byte(`{"v":3}`)))
			require.NoError(t, eng.Close(ctx))

			eng, err = govhost.Open(ctx, opts)
			require.NoError(t, err)
			defer eng.Close(ctx)
			v, ok, err := eng.Sessions.GetSession(ctx, "claude/s1")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, `{"v":2}`, string(v))
			require.NoError(t, eng.Sessions.DeleteSession(ctx, "claude/s1"))
			require.NoError(t, eng.Sessions.DeleteSession(ctx, "claude/s1"), "forgetting twice is no error")
			_, ok, err = eng.Sessions.GetSession(ctx, "claude/s1")
			require.NoError(t, err)
			require.False(t, ok)
			v, ok, err = eng.Sessions.GetSession(ctx, "codex/s2")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, `{"v":3}`, string(v))
		})
	}
}
