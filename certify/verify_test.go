package certify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/governance"
)

// signedBundle writes tk's bundle, its checkpoint signed by a new key, and
// returns the folder and the verifier key.
func signedBundle(t *testing.T, tk *task) (string, string, *checkpoint.Keyring) {
	t.Helper()
	kr, err := checkpoint.OpenKeyring(filepath.Join(t.TempDir(), "keys"))
	require.NoError(t, err)
	signer, err := kr.Signer()
	require.NoError(t, err)
	note, err := checkpoint.Sign(checkpoint.For(tk.boundary.ChainID, int64(len(tk.recs)), tk.head), signer)
	require.NoError(t, err)
	snap := tk.snap
	dir := filepath.Join(t.TempDir(), "bundle")
	require.NoError(t, certify.WriteBundle(dir, certify.Bundle{Certificate: tk.cert, Records: tk.recs, Policy: &snap, Checkpoint: note}))
	vkey, err := kr.VerifierKey()
	require.NoError(t, err)
	return dir, vkey, kr
}

func verifyDir(t *testing.T, dir string, opts certify.VerifyOptions) certify.Report {
	t.Helper()
	b, err := certify.ReadBundle(certify.PartsOf(dir))
	require.NoError(t, err)
	return certify.Verify(b, opts)
}

// TestVerify_DoneWhen: a task with denials and callable failures mints
// FULL and its bundle verifies offline, authenticated with the key;
// the same task with an exception is DEGRADED and verifies too.
func TestVerify_DoneWhen(t *testing.T) {
	for _, grant := range []bool{false, true} {
		tk := runTask(t, grant)
		dir, vkey, _ := signedBundle(t, tk)
		rep := verifyDir(t, dir, certify.VerifyOptions{})
		require.True(t, rep.Valid, "%+v", rep)
		require.False(t, rep.Authenticated)
		require.Equal(t, certify.CheckpointUnauthenticated, rep.Checkpoint)
		rep = verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}})
		require.True(t, rep.Valid, "%+v", rep)
		require.True(t, rep.Authenticated)
		want := governance.GradeFull
		if grant {
			want = governance.GradeDegraded
		}
		require.Equal(t, want, rep.ProcessGrade)
		require.Equal(t, int64(len(tk.recs)), rep.CheckedRecords)
	}
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := edit(string(b))
	require.NotEqual(t, string(b), out, "the edit changed nothing")
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
}

// TestVerify_Refuses: each edit of a bundle fails its rule and code.
func TestVerify_Refuses(t *testing.T) {
	type tc struct {
		edit func(t *testing.T, tk *task, dir string, opts *certify.VerifyOptions)
		rule governance.CertificateRule
		code governance.VerificationFailureCode
	}
	cert := func(dir string) string { return filepath.Join(dir, certify.CertificateFile) }
	cases := map[string]tc{
		"certificate summary edited": {edit: func(t *testing.T, _ *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, cert(dir), func(s string) string { return strings.Replace(s, `"hard_deny":1`, `"hard_deny":0`, 1) })
		}, rule: governance.RuleGateSummary},
		"certificate grade edited": {edit: func(t *testing.T, _ *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, cert(dir), func(s string) string { return strings.Replace(s, `"FULL"`, `"DEGRADED"`, 1) })
		}, rule: governance.RuleGrade},
		"certificate head edited": {edit: func(t *testing.T, tk *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, cert(dir), func(s string) string { return strings.Replace(s, tk.head, tk.recs[len(tk.recs)-2].ChainHash, 1) })
		}, rule: governance.RuleChain, code: governance.BrokenLink},
		"changed payload byte": {edit: func(t *testing.T, _ *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, filepath.Join(dir, certify.ChainFile), func(s string) string {
				return strings.Replace(s, `\"tool_id\":\"read\"`, `\"tool_id\":\"reaD\"`, 1)
			})
		}, rule: governance.RuleChain, code: governance.ContentMismatch},
		"missing policy": {edit: func(t *testing.T, _ *task, dir string, _ *certify.VerifyOptions) {
			require.NoError(t, os.Remove(filepath.Join(dir, certify.PolicyFile)))
		}, rule: governance.RulePolicy, code: governance.MissingPolicy},
		"policy whose digest does not recompute": {edit: func(t *testing.T, _ *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, filepath.Join(dir, certify.PolicyFile), func(s string) string { return strings.Replace(s, `"level":"soft"`, `"level":"advisory"`, 1) })
		}, rule: governance.RulePolicy, code: governance.MissingPolicy},
		"checkpoint signed by another key": {edit: func(t *testing.T, _ *task, _ string, opts *certify.VerifyOptions) {
			other, err := checkpoint.OpenKeyring(filepath.Join(t.TempDir(), "other"))
			require.NoError(t, err)
			k, _ := other.VerifierKey()
			opts.Keys = []string{k}
		}, rule: governance.RuleCheckpoint},
		"checkpoint of another head": {edit: func(t *testing.T, tk *task, dir string, _ *certify.VerifyOptions) {
			editFile(t, filepath.Join(dir, certify.CheckpointFile), func(s string) string { return strings.Replace(s, tk.head, tk.recs[0].ChainHash, 1) })
		}, rule: governance.RuleCheckpoint},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tk := runTask(t, false)
			dir, vkey, _ := signedBundle(t, tk)
			opts := certify.VerifyOptions{Keys: []string{vkey}}
			c.edit(t, tk, dir, &opts)
			rep := verifyDir(t, dir, opts)
			require.False(t, rep.Valid)
			require.Equal(t, c.rule, *rep.Rule, "%s", *rep.Reason)
			if c.code == "" {
				require.Nil(t, rep.FailureCode)
			} else {
				require.Equal(t, c.code, *rep.FailureCode)
			}
		})
	}
}

// TestVerify_LaterCheckpoints: a bundle of a chain truncated to an earlier
// valid head — here a correction appended after TASK_CLOSED is cut off
// again, and the certificate and checkpoint made for the shorter chain —
// verifies on its own but fails against a later checkpoint of the longer
// chain; a fork fails the same way.
func TestVerify_LaterCheckpoints(t *testing.T) {
	tk := runTask(t, true)
	dir, vkey, kr := signedBundle(t, tk)
	signer, _ := kr.Signer()
	longer, err := checkpoint.Sign(checkpoint.For(tk.boundary.ChainID, int64(len(tk.recs))+1, governance.SHA256Hex([]byte("next"))), signer)
	require.NoError(t, err)
	rep := verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}, Later: [][]byte{longer}})
	require.False(t, rep.Valid)
	require.Equal(t, governance.RuleCheckpoint, *rep.Rule)
	require.Contains(t, *rep.Reason, "truncated")

	fork, err := checkpoint.Sign(checkpoint.For(tk.boundary.ChainID, 3, governance.SHA256Hex([]byte("fork"))), signer)
	require.NoError(t, err)
	rep = verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}, Later: [][]byte{fork}})
	require.False(t, rep.Valid)
	require.Contains(t, *rep.Reason, "rolled back or forked")

	// A consistent later checkpoint (an earlier size) and one of another
	// chain pass.
	same, err := checkpoint.Sign(checkpoint.For(tk.boundary.ChainID, 3, tk.recs[2].ChainHash), signer)
	require.NoError(t, err)
	rep = verifyDir(t, dir, certify.VerifyOptions{Keys: []string{vkey}, Later: [][]byte{same}})
	require.True(t, rep.Valid, "%+v", rep)
	require.Equal(t, 1, rep.LaterCheckpoints)
}

// TestReadBundle_RefusesForgedLines: a bundle whose chain line carries a
// case-variant duplicate key is an input error naming the line and field.
func TestReadBundle_RefusesForgedLines(t *testing.T) {
	tk := runTask(t, false)
	dir, _, _ := signedBundle(t, tk)
	editFile(t, filepath.Join(dir, certify.ChainFile), func(s string) string {
		return strings.Replace(s, `"record_type":"operation_denied"`, `"record_type":"callable_completed","Record_Type":"operation_denied"`, 1)
	})
	_, err := certify.ReadBundle(certify.PartsOf(dir))
	require.ErrorIs(t, err, certify.ErrBundle)
	require.Contains(t, err.Error(), "Record_Type")
	require.Contains(t, err.Error(), "line ")
}
