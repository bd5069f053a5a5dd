package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// runChild runs govhost as its own process (this test binary, see
// TestMain) and returns its exit status, stdout and stderr.
func runChild(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	encoded, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(encoded))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), errb.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errb.String()
}

// TestCLI_ThroughARunningServe is issue 23's "done when": with a real
// `govhost serve` holding the data directory, every command on that
// directory runs as its own process and succeeds without stopping it,
// through /v1 (the directory is locked by the server, so none of them
// could open it). After a clean stop the address record is gone and the
// commands open the directory themselves; a stale record is ignored.
func TestCLI_ThroughARunningServe(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)
	var rec api.ServeRecord
	b, err := os.ReadFile(filepath.Join(data, api.ServeFileName))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rec))
	require.Equal(t, s.url, rec.URL)
	require.NotContains(t, string(b), "token", "the address record holds no token")
	st, err := os.Stat(filepath.Join(data, api.OperatorTokenFileName))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	require.Contains(t, s.stdout.String(), "next: govhost install")

	cli := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runChild(t, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		return stdout
	}

	// demo: the session goes through the server.
	out := cli("demo", "--data", data)
	require.Contains(t, out, `"valid":true`)
	require.Contains(t, out, `"process_grade": "FULL"`)
	require.Contains(t, out, "destructive.rm_recursive_force")
	require.Equal(t, 3, strings.Count(out, "  allow  "))
	require.Equal(t, 3, strings.Count(out, "  deny   "))
	i := strings.Index(out, `"task_boundary_id": "`)
	require.GreaterOrEqual(t, i, 0, out)
	task := out[i+len(`"task_boundary_id": "`) : i+len(`"task_boundary_id": "`)+36]

	// cert bundle with its signed checkpoint, then cert verify offline
	// against the data directory's key.
	bundle, log := filepath.Join(t.TempDir(), "bundle"), filepath.Join(t.TempDir(), "checkpoints.log")
	certText := cli("cert", "bundle", "--data", data, "--task", task, "--out", bundle, "--checkpoint-log", log)
	var cert governance.TaskCertificate
	require.NoError(t, cert.UnmarshalJSON([]byte(strings.TrimSpace(certText))))
	require.FileExists(t, filepath.Join(bundle, "checkpoint"))
	vkey := strings.TrimSpace(cli("cert", "key", "show", "--data", data))
	rep := cli("cert", "verify", bundle, "--key", vkey, "--checkpoints", log)
	require.Contains(t, rep, `"valid":true`)

	// chain export, verified against the certificate's head.
	chainText, err := os.ReadFile(filepath.Join(bundle, "chain.jsonl"))
	require.NoError(t, err)
	var first governance.EvidenceRecord
	require.NoError(t, first.UnmarshalJSON(bytes.SplitN(chainText, []byte("\n"), 2)[0]))
	chainID := first.ChainID.String()
	exported := cli("chain", "export", "--data", data, "--chain", chainID)
	code, verdict, stderr := runCLI(t, exported, "chain", "verify", "--file", "-", "--expected-head", cert.EvidenceChainHead)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, verdict, `"valid":true`)

	// cert checkpoint: signed by the server (operator token from the
	// data directory).
	note := cli("cert", "checkpoint", "--data", data, "--chain", chainID)
	require.Contains(t, note, "— ", "a signed note")

	// policy put (its .wasm module uploaded first) | activate | bind | list | show | resolve
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "gates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gates", "redact.wasm"), wasmfixtures.Bytes("toolgate.wasm"), 0o644))
	// NB: the 3.4 MB Go-built module compiles in seconds, but under -race on
	// a loaded machine its first compile has outlasted serve's LoadTimeout
	// (gate.load_timeout): compiled into the package's shared cache first,
	// the upload finds it there, as a second upload would.
	compileIntoTestCache(t, wasmfixtures.Bytes("toolgate.wasm"))
	file := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(cliPolicy, "VERSION", "7", 1)), 0o644))
	put := decodeSummary(t, cli("policy", "put", "--data", data, "--file", file))
	require.True(t, *put.Stored)
	require.Equal(t, "staged", put.ReleaseState)
	require.False(t, *decodeSummary(t, cli("policy", "put", "--data", data, "--file", file)).Stored, "idempotent")
	require.Equal(t, "active", decodeSummary(t, cli("policy", "activate", "--data", data, "--id", cliPolicyID, "--version", "7")).ReleaseState)
	var binding governance.PolicyBinding
	require.NoError(t, json.Unmarshal([]byte(cli("policy", "bind", "--data", data, "--id", cliPolicyID, "--version", "7", "--scope", "role", "--selector", "dev")), &binding))
	require.Equal(t, governance.ScopeRole, binding.Scope)
	require.Equal(t, put.Digest, decodeSummary(t, cli("policy", "resolve", "--data", data, "--role", "dev")).Digest)
	var list struct{ Policies []cliSummary }
	require.NoError(t, json.Unmarshal([]byte(cli("policy", "list", "--data", data)), &list))
	versions := map[string]string{}
	for _, p := range list.Policies {
		versions[p.PolicyID+"@"+p.Version] = p.ReleaseState
	}
	require.Equal(t, "active", versions[cliPolicyID+"@7"], "%v", versions)
	require.Equal(t, "active", versions["2f6b8a1e-5c3d-4e7f-9a0b-1c2d3e4f5a6b@demo-1"], "the demo's policy")
	require.Len(t, versions, 3, "the default policy, the demo's and this one: %v", versions)
	var snap governance.PolicySnapshot
	require.NoError(t, json.Unmarshal([]byte(cli("policy", "show", "--data", data, "--id", cliPolicyID, "--version", "7")), &snap))
	require.Equal(t, put.Digest, snap.Digest())
	require.Contains(t, cli("policy", "show", "--data", data, "--id", cliPolicyID), `"version":"7"`)

	// plugin add | list
	wasm := filepath.Join(dir, "gates", "redact.wasm")
	require.Contains(t, cli("plugin", "add", "--data", data, wasm), "already stored", "policy put uploaded it")
	mods := cli("plugin", "list", "--data", data, "--json")
	require.Contains(t, mods, snap.GateBinding(1).ModuleDigest())

	// grant exception: the operator token (read from the data directory);
	// the agents' token is refused.
	open, err := s.client.OpenTask(ctx, api.OpenTaskRequest{Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}})
	require.NoError(t, err)
	grantArgs := []string{"grant", "exception", "--data", data, "--task", open.TaskID.String(), "--gate", "permission", "--tool", "bash", "--reason", "incident.7", "--for", "10m", "--issuer", "alice"}
	var grant governance.ExceptionGrant
	require.NoError(t, json.Unmarshal([]byte(cli(grantArgs...)), &grant))
	require.Equal(t, governance.ActorRef{Kind: "agent", ID: "coder"}, grant.Actor)
	require.Equal(t, &governance.ActorRef{Kind: "operator", ID: "alice"}, grant.IssuedBy)
	code, _, stderr = runChild(t, append(grantArgs, "--token-file", filepath.Join(data, api.TokenFileName))...)
	require.Equal(t, exitInvalid, code)
	require.Contains(t, stderr, "forbidden")
	_, err = s.client.CloseTask(ctx, open.TaskID)
	require.NoError(t, err)
	exported = cli("chain", "export", "--data", data, "--chain", open.ChainID.String())
	require.Contains(t, exported, `"record_type":"exception_granted"`)
	require.Contains(t, exported, `issued_by_id`)

	// A clean stop removes the record; the commands open the directory.
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s.wait(t), s.stderr.String())
	require.NoFileExists(t, filepath.Join(data, api.ServeFileName))
	require.Contains(t, cli("policy", "list", "--data", data), cliPolicyID)
	// A stale record (nobody listens there) is ignored.
	require.NoError(t, os.WriteFile(filepath.Join(data, api.ServeFileName), []byte(`{"url":"`+s.url+`","pid":1}`), 0o644))
	require.Contains(t, cli("policy", "list", "--data", data), cliPolicyID)
	code, _, stderr = runChild(t, "grant", "exception", "--data", data, "--task", open.TaskID.String(), "--gate", "g", "--tool", "t", "--reason", "r", "--for", "1m")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "no govhost serve runs on")
}

// compileIntoTestCache loads wasm once through a host on the package's
// shared compilation cache (the one every served test uses).
func compileIntoTestCache(t *testing.T, wasm []byte) {
	t.Helper()
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(testCacheDir))
	require.NoError(t, err)
	defer h.Close(ctx)
	_, err = h.Load(ctx, wasm, host.AnyDigest)
	require.NoError(t, err)
}
