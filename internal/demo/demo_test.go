package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/demo"
	"github.com/govhost/govhost/server"
	"github.com/govhost/govhost/server/client"
	"github.com/govhost/govhost/service"
)

func openEngine(t *testing.T, dataDir string) *govhost.Engine {
	t.Helper()
	ctx := context.Background()
	cfg := host.NewConfig().WithCompilationCacheDir(filepath.Join(os.TempDir(), "govhost-test-wazero-cache"))
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dataDir, Host: &cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close(ctx) })
	return eng
}

// verdicts is what a run printed for its steps: the allow and deny lines
// and each denial's reason, between the policy line and the chain line
// (which carry ids that differ between runs).
func verdicts(out string) []string {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "chain ") {
			return lines[1:i]
		}
	}
	return nil
}

// chainVerdict decodes the "chain ID: {...}" line.
func chainVerdict(t *testing.T, out string) governance.VerificationResult {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "chain ") {
			_, doc, ok := strings.Cut(line, ": ")
			require.True(t, ok, line)
			var res governance.VerificationResult
			require.NoError(t, json.Unmarshal([]byte(doc), &res))
			return res
		}
	}
	t.Fatalf("no chain line in:\n%s", out)
	return governance.VerificationResult{}
}

// TestInProcess_Session: the session allows the workspace read, the write
// and the approved tests, denies the credential read and both destructive
// commands, verifies its chain and mints a certificate; a rerun on the
// same data directory reuses the stored policy.
func TestInProcess_Session(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	workspace, err := demo.Workspace(dataDir)
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(workspace, "README.md"))
	eng := openEngine(t, dataDir)

	var out bytes.Buffer
	require.NoError(t, demo.InProcess(ctx, eng, workspace, &out))
	lines := verdicts(out.String())
	require.Len(t, lines, len(demo.Steps)+3, "one line a step, one more a denial")
	var decisions []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "allow" || f[0] == "deny") {
			decisions = append(decisions, f[0]+" "+f[1])
		}
	}
	require.Equal(t, []string{"allow read", "deny read", "allow write", "allow bash", "deny bash", "deny bash"}, decisions, out.String())
	require.True(t, chainVerdict(t, out.String()).Valid, out.String())
	require.Contains(t, out.String(), "certificate:\n{")

	var again bytes.Buffer
	require.NoError(t, demo.InProcess(ctx, eng, workspace, &again), "a rerun finds the demo policy stored and active")
	require.Equal(t, lines, verdicts(again.String()))
}

// TestThrough_SameVerdictsAsInProcess: through a running server (the real
// service and route table), the session prints the verdicts the in-process
// run prints, and its chain verifies.
func TestThrough_SameVerdictsAsInProcess(t *testing.T) {
	ctx := context.Background()
	local := t.TempDir()
	workspace, err := demo.Workspace(local)
	require.NoError(t, err)
	var inProcess bytes.Buffer
	require.NoError(t, demo.InProcess(ctx, openEngine(t, local), workspace, &inProcess))

	eng := openEngine(t, t.TempDir())
	svc, err := service.New(eng, service.Options{})
	require.NoError(t, err)
	t.Cleanup(svc.Close)
	const token = "demo-test-operator-token-0123456789abcdef"
	srv, err := server.New(server.Config{Service: svc, Token: token + "-agent", OperatorToken: token})
	require.NoError(t, err)
	srv.SetReady()
	t.Cleanup(srv.Shutdown)
	web := httptest.NewServer(srv.Handler())
	t.Cleanup(web.Close)
	c, err := client.New(web.URL, client.Token(token))
	require.NoError(t, err)

	var through bytes.Buffer
	require.NoError(t, demo.Through(ctx, c, workspace, &through))
	require.Equal(t, verdicts(inProcess.String()), verdicts(through.String()))
	require.True(t, chainVerdict(t, through.String()).Valid, through.String())
	require.Contains(t, through.String(), "certificate:\n{")
}

// TestPolicyFile_Refusals: a workspace the template refuses is an error,
// not a policy.
func TestPolicyFile_Refusals(t *testing.T) {
	_, err := demo.PolicyFile("relative/workspace")
	require.Error(t, err)
	text, err := demo.PolicyFile("/work/space")
	require.NoError(t, err)
	f, err := govhost.ParsePolicyFile(text, "demo-policy.json", "")
	require.NoError(t, err)
	require.Equal(t, demo.PolicyID, f.Snapshot.PolicyID())
	require.Equal(t, demo.Version, f.Snapshot.Version())
}
