package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestServe_RestartLoadsTheLastRunsBuiltinsAndAnswersTheFirstCallAlike:
// a server that governed calls lists, as it stops, the built-in modules its
// gates ran (govhost-warm-builtins in its compilation cache); a restart on the
// same data directory loads them while its database opens, and answers its
// first calls — an allowed read, a denied destructive command — exactly as
// the first run did.
func TestServe_RestartLoadsTheLastRunsBuiltinsAndAnswersTheFirstCallAlike(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	cache := filepath.Join(t.TempDir(), "wasm-cache")
	t.Setenv(cacheEnv, cache) // the servers' own, not the tests' shared cache
	calls := []api.AuthorizeRequest{readerCall(),
		{CallRequest: api.CallRequest{Tool: "bash", Arguments: []byte(`{"command":"rm -rf /"}`)}}}
	answers := func(s *served) []string {
		task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
		require.NoError(t, err)
		var got []string
		for _, c := range calls {
			res, err := s.client.Authorize(ctx, task.TaskID, c)
			require.NoError(t, err)
			answer := res.Decision
			if res.Denial != nil {
				answer += " " + res.Denial.GateID + " " + res.Denial.ReasonCode
			}
			got = append(got, answer)
		}
		require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
		require.Equal(t, 0, s.wait(t), s.stderr.String())
		return got
	}

	first := answers(startServe(t, data))
	require.Equal(t, api.DecisionAllow, first[0])
	require.True(t, strings.HasPrefix(first[1], api.DecisionDeny+" "), first[1])
	raw, err := os.ReadFile(filepath.Join(cache, govhost.WarmBuiltinsFile))
	require.NoError(t, err)
	listed := strings.Fields(string(raw))
	require.NotEmpty(t, listed)
	for _, d := range listed {
		_, ok := builtin.ByDigest(d)
		require.True(t, ok, "%s is not a built-in module", d)
	}

	require.Equal(t, first, answers(startServe(t, data)))
}
