package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/certify/forgetest"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// TestCert_ForgeriesRefused: each forgery of issue 27 made from the demo's
// real chain, as an insider holding the data directory would: re-hashed,
// the certificate's head and gate summary rewritten, the checkpoint
// re-signed with the data directory's own key. `cert verify --key` refuses
// each bundle with its rule (exit 1); and appended to the store as a task
// of its own, `cert bundle` refuses to mint it (exit 1).
func TestCert_ForgeriesRefused(t *testing.T) {
	ctx := context.Background()
	data, task := demoTask(t)
	good := filepath.Join(t.TempDir(), "good")
	code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", task, "--out", good)
	require.Equal(t, exitOK, code, stderr)
	real, err := certify.ReadBundle(certify.PartsOf(good))
	require.NoError(t, err)
	code, vkey, _ := runCLI(t, "", "cert", "key", "show", "--data", data)
	require.Equal(t, exitOK, code)
	kr, err := govhost.OpenKeyring(data)
	require.NoError(t, err)
	signer, err := kr.Signer()
	require.NoError(t, err)

	eng, err := govhost.Open(ctx, engineOptions(ctx, data))
	require.NoError(t, err)
	minted := map[string]uuid.UUID{}
	for _, f := range forgetest.All() {
		recs, snap := real.Records, *real.Policy
		if f.Records != nil {
			recs, err = f.Records(recs, snap)
			require.NoError(t, err, f.Name)
		}
		if f.Policy != nil {
			snap, err = f.Policy(snap)
			require.NoError(t, err)
		}
		forged, head, err := forgetest.Rechain(recs)
		require.NoError(t, err)
		cert := real.Certificate
		cert.EvidenceChainHead, cert.GateSummary = head, forgetest.Summary(forged)
		note, err := checkpoint.Sign(checkpoint.For(forged[0].ChainID, int64(len(forged)), head), signer)
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), strings.ReplaceAll(f.Name, " ", "-"))
		require.NoError(t, certify.WriteBundle(dir, certify.Bundle{Certificate: cert, Records: forged, Policy: &snap, Checkpoint: note}))
		rep := verifyReport(t, exitInvalid, dir, "--key", strings.TrimSpace(vkey))
		require.Equal(t, string(f.Rule), rep["rule"], "%s: %v", f.Name, rep["reason"])
		require.Equal(t, true, rep["authenticated"], "%s: the forger's signature itself verifies, and proves nothing", f.Name)

		// The same forgery in the store, as a task of its own.
		newTask := uuid.New()
		moved, err := forgetest.Move(recs, uuid.New(), newTask)
		require.NoError(t, err)
		if f.Policy != nil {
			staged, err := governance.NewPolicySnapshot(uuid.New(), snap.Version(), snap.GateBindings())
			require.NoError(t, err)
			require.NoError(t, eng.Policies.Put(ctx, staged))
			moved, err = forgetest.Repin(moved, staged)
			require.NoError(t, err)
		}
		moved, _, err = forgetest.Rechain(moved)
		require.NoError(t, err)
		_, err = evidence.AppendAll(ctx, eng.Evidence, moved)
		require.NoError(t, err)
		minted[f.Name] = newTask
	}
	require.NoError(t, eng.Close(ctx))
	for _, f := range forgetest.All() {
		code, _, stderr := runCLI(t, "", "cert", "bundle", "--data", data, "--task", minted[f.Name].String(), "--out", filepath.Join(t.TempDir(), "minted"))
		require.Equal(t, exitInvalid, code, "%s: %s", f.Name, stderr)
		require.Contains(t, stderr, "("+string(f.Rule), f.Name)
	}
	_, err = os.Stat(filepath.Join(good, "checkpoint"))
	require.NoError(t, err)
}
