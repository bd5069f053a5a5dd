package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/certify/forgetest"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/governance"
)

// TestWitness_CosignsExtensionsRefusesForkAndRollback: a witness with its
// own key and state cosigns the demo task's checkpoint (cert cosign), and
// cert verify --witness --witnesses 1 passes. A fork of the same size
// (one record's time changed, every rule still passing, re-signed with the
// data directory's key) and a rollback (the chain without its last
// operation) are refused by the witness (exit 1), and without its
// cosignature cert verify --witnesses 1 fails on rule witness though the
// log's signature verifies.
func TestWitness_CosignsExtensionsRefusesForkAndRollback(t *testing.T) {
	data, good := goodBundle(t)
	_, vkey, _ := runCLI(t, "", "cert", "key", "show", "--data", data)
	vkey = strings.TrimSpace(vkey)
	wdir := filepath.Join(t.TempDir(), "witness")
	code, wkey, stderr := runCLI(t, "", "witness", "key", "--dir", wdir, "--name", "test-witness")
	require.Equal(t, exitOK, code, stderr)
	wkey = strings.TrimSpace(wkey)
	w, err := newWitness(wdir, "", []string{vkey})
	require.NoError(t, err)
	require.Equal(t, wkey, w.Key.VerifierKey())
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()

	unsigned := copyBundle(t, good)
	code, cosig, stderr := runCLI(t, "", "cert", "cosign", good, "--witness-url", srv.URL)
	require.Equal(t, exitOK, code, stderr)
	require.True(t, strings.HasPrefix(cosig, "— test-witness "), cosig)
	rep := verifyReport(t, exitOK, good, "--key", vkey, "--witness", wkey, "--witnesses", "1")
	require.EqualValues(t, 1, rep["cosignatures"])
	rep = verifyReport(t, exitInvalid, unsigned, "--key", vkey, "--witness", wkey)
	require.Equal(t, "witness", rep["rule"])
	// Cosigning the same checkpoint again is idempotent.
	again := copyBundle(t, unsigned)
	code, _, stderr = runCLI(t, "", "cert", "cosign", again, "--witness-url", srv.URL)
	require.Equal(t, exitOK, code, stderr)

	real, err := certify.ReadBundle(certify.PartsOf(unsigned))
	require.NoError(t, err)
	kr, err := govhost.OpenKeyring(data)
	require.NoError(t, err)
	signer, err := kr.Signer()
	require.NoError(t, err)
	resign := func(recs []governance.EvidenceRecord) string {
		t.Helper()
		recs, head, err := forgetest.Rechain(recs)
		require.NoError(t, err)
		cert := real.Certificate
		cert.EvidenceChainHead, cert.GateSummary = head, forgetest.Summary(recs)
		note, err := checkpoint.Sign(checkpoint.For(recs[0].ChainID, int64(len(recs)), head), signer)
		require.NoError(t, err)
		dir := filepath.Join(t.TempDir(), "forged")
		require.NoError(t, certify.WriteBundle(dir, certify.Bundle{Certificate: cert, Records: recs, Policy: real.Policy, Checkpoint: note}))
		verifyReport(t, exitOK, dir, "--key", vkey) // every rule passes: only the witness can tell
		return dir
	}
	fork := append([]governance.EvidenceRecord(nil), real.Records...)
	fork[1].CreatedAt = fork[1].CreatedAt.Add(time.Microsecond)
	last := 0
	for i, r := range real.Records {
		if r.RecordType == governance.PolicyBound {
			last = i
		}
	}
	rollback := append(append([]governance.EvidenceRecord(nil), real.Records[:last]...), real.Records[len(real.Records)-1])
	for name, dir := range map[string]string{"fork": resign(fork), "rollback": resign(rollback)} {
		code, _, stderr := runCLI(t, "", "cert", "cosign", dir, "--witness-url", srv.URL)
		require.Equal(t, exitInvalid, code, "%s: %s", name, stderr)
		require.Contains(t, stderr, "witness", name)
		rep := verifyReport(t, exitInvalid, dir, "--key", vkey, "--witness", wkey, "--witnesses", "1")
		require.Equal(t, "witness", rep["rule"], name)
		require.Equal(t, true, rep["authenticated"], "%s: the log's own signature verifies", name)
	}
	// The witness's state still holds the real head.
	state, err := os.ReadFile(filepath.Join(wdir, "state.json"))
	require.NoError(t, err)
	require.Contains(t, string(state), real.Certificate.EvidenceChainHead)
}

// TestWitnessServe_AsItsOwnProcess: `govhost witness serve` runs as a
// process of its own (own directory, own key), and `cert cosign` against
// it gives a bundle that `cert verify --witness` accepts; SIGTERM stops it
// with exit 0.
func TestWitnessServe_AsItsOwnProcess(t *testing.T) {
	data, good := goodBundle(t)
	_, vkey, _ := runCLI(t, "", "cert", "key", "show", "--data", data)
	wdir := filepath.Join(t.TempDir(), "witness")
	args, _ := json.Marshal([]string{"witness", "serve", "--dir", wdir, "--log-key", strings.TrimSpace(vkey), "--addr", "127.0.0.1:0"})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(args))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	sc := bufio.NewScanner(out)
	url, wkey := "", ""
	for (url == "" || wkey == "") && sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "govhost witness: listening on "); ok {
			url = rest
		}
		if rest, ok := strings.CutPrefix(sc.Text(), "govhost witness: key "); ok {
			wkey = rest
		}
	}
	require.NotEmpty(t, url)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	code, _, stderr := runCLI(t, "", "cert", "cosign", good, "--witness-url", url)
	require.Equal(t, exitOK, code, stderr)
	rep := verifyReport(t, exitOK, good, "--key", strings.TrimSpace(vkey), "--witness", wkey)
	require.EqualValues(t, 1, rep["cosignatures"])
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait())
}
