package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/checkpoint"
)

// TestServe_ClosedTaskIsSealedWithoutAsking: a task closed on a running
// serve has, with no further command, its certificate bundle kept under
// <data>/certificates/<task>/ and its head's checkpoint signed and in the
// checkpoint log; the kept bundle verifies with the data directory's key
// against the log. A task still open when serve stops has its head
// checkpointed into the log at shutdown.
func TestServe_ClosedTaskIsSealedWithoutAsking(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)
	task, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	res, err := s.client.Authorize(ctx, task.TaskID, readerCall())
	require.NoError(t, err)
	require.NoError(t, s.client.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID}))
	closed, err := s.client.CloseTask(ctx, task.TaskID)
	require.NoError(t, err)

	kept := filepath.Join(data, "certificates", task.TaskID.String())
	// Sealing follows the close asynchronously: wait for it (the bound
	// only ends a test that would fail anyway).
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(kept, "checkpoint")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "no kept bundle: %s", s.stderr)
		time.Sleep(20 * time.Millisecond)
	}
	log := filepath.Join(data, "checkpoints")
	notes, err := checkpoint.ReadLog(log)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	cp, err := checkpoint.Open(notes[0], nil)
	require.NoError(t, err)
	require.Equal(t, closed.Head, cp.Head)
	require.Equal(t, checkpoint.Origin(closed.ChainID), cp.Origin)

	code, vkey, stderr := runCLI(t, "", "cert", "key", "show", "--data", data)
	require.Equal(t, exitOK, code, stderr)
	rep := verifyReport(t, exitOK, kept, "--key", strings.TrimSpace(vkey), "--checkpoints", log)
	require.Equal(t, true, rep["authenticated"])
	require.Equal(t, closed.Head, rep["evidence_chain_head"])

	// An open task at shutdown: its head is checkpointed.
	open, err := s.client.OpenTask(ctx, api.OpenTaskRequest{})
	require.NoError(t, err)
	_, err = s.client.Authorize(ctx, open.TaskID, readerCall())
	require.NoError(t, err)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s.wait(t), s.stderr.String())
	notes, err = checkpoint.ReadLog(log)
	require.NoError(t, err)
	require.Len(t, notes, 2, "the open task's head at shutdown")
	origins := []string{}
	for _, n := range notes {
		cp, err := checkpoint.Open(n, []string{strings.TrimSpace(vkey)})
		require.NoError(t, err)
		origins = append(origins, cp.Origin)
	}
	require.Contains(t, origins, checkpoint.Origin(open.ChainID))
}
