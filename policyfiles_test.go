package govhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/policy/policyfile"
)

// policyFileText is a policy file naming one built-in gate and one module
// by path.
func policyFileText(id uuid.UUID, version, module string) string {
	return `{"policy_id":"` + id.String() + `","version":"` + version + `","gates":[
		{"gate_id":"destructive","module":"destructive","level":"hard","order":1,"tool_ids":["bash"]},
		{"gate_id":"mine","module":"` + module + `","level":"soft","order":2,"tool_ids":["bash"],"config":{"n":9007199254740993}}]}`
}

func openPolicyEngine(t *testing.T) (*govhost.Engine, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	cfg := host.NewConfig().WithCompilationCacheDir(wasmCache)
	eng, err := govhost.Open(ctx, govhost.Options{Dir: dir, Host: &cfg})
	require.NoError(t, err)
	t.Cleanup(func() { _ = eng.Close(ctx) })
	return eng, dir
}

func storedModules(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dataDir, govhost.ModulesDir))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") { // not the check records beside them
			names = append(names, e.Name())
		}
	}
	return names
}

// TestEngine_PutPolicyFile: parsing stores nothing; putting stores the
// version and the module the file names by path (exactly the bytes that
// were hashed), says it is new, then not new the second time; an edited
// module under the same version is a conflict that stores nothing; the
// stored version can be activated, its module loads.
func TestEngine_PutPolicyFile(t *testing.T) {
	ctx := context.Background()
	eng, dataDir := openPolicyEngine(t)
	src := t.TempDir()
	wasm := wasmfixtures.Bytes("allow.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(src, "mine.wasm"), wasm, 0o644))
	id := uuid.New()
	path := filepath.Join(src, "policy.json")
	require.NoError(t, os.WriteFile(path, []byte(policyFileText(id, "v1", "mine.wasm")), 0o644))

	f, err := govhost.ReadPolicyFile(path)
	require.NoError(t, err)
	digest := governance.SHA256Hex(wasm)
	require.Equal(t, map[string][]byte{digest: wasm}, f.Modules)
	require.Empty(t, storedModules(t, dataDir), "parsing stores nothing")
	_, err = eng.Policies.Get(ctx, id, "v1")
	require.Error(t, err)

	snap, created, err := eng.PutPolicyFile(ctx, f)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, f.Snapshot.Digest(), snap.Digest())
	require.Equal(t, governance.Staged, snap.ReleaseState())
	require.Equal(t, []string{digest + ".wasm"}, storedModules(t, dataDir))
	got, err := os.ReadFile(filepath.Join(dataDir, govhost.ModulesDir, digest+".wasm"))
	require.NoError(t, err)
	require.Equal(t, wasm, got)

	_, created, err = eng.PutPolicyFile(ctx, f)
	require.NoError(t, err)
	require.False(t, created, "the same version and digest again is not new")

	active, err := eng.Policies.Activate(ctx, id, "v1", nil, time.Now())
	require.NoError(t, err, "the stored module loads")
	again, created, err := eng.PutPolicyFile(ctx, f)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, governance.Active, active.ReleaseState())
	require.Equal(t, governance.Active, again.ReleaseState(), "put answers the version as stored")

	other := wasmfixtures.Bytes("c_gate.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(src, "mine.wasm"), other, 0o644))
	edited, err := govhost.ReadPolicyFile(path)
	require.NoError(t, err)
	_, _, err = eng.PutPolicyFile(ctx, edited)
	var conflict *governance.PolicyConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, []string{digest + ".wasm"}, storedModules(t, dataDir), "a conflict stores no module")
}

// TestParsePolicyFile_Refusals: a missing module, a file that is not Wasm
// and a broken file are typed refusals that name the file.
func TestParsePolicyFile_Refusals(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "text.wasm"), []byte("not wasm"), 0o644))
	id := uuid.New()
	for name, tc := range map[string]struct {
		text     string
		notFound bool
	}{
		"missing module": {policyFileText(id, "v1", "nowhere.wasm"), true},
		"unknown gate":   {policyFileText(id, "v1", "no-such-builtin"), true},
		"not wasm":       {policyFileText(id, "v1", "text.wasm"), false},
		"broken json":    {`{"policy_id":`, false},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := govhost.ParsePolicyFile([]byte(tc.text), "p.json", src)
			require.ErrorIs(t, err, policyfile.ErrInvalidFile)
			require.Equal(t, tc.notFound, errors.Is(err, policyfile.ErrModuleNotFound), "%v", err)
			require.Contains(t, err.Error(), "p.json")
		})
	}
	_, err := govhost.ReadPolicyFile(filepath.Join(src, "absent.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestGates_ParseSentPolicyFile: a file sent over the API may not name a
// path on the server; once its modules are uploaded, the file's wire text
// (paths replaced by digests, numbers as written) parses to the same
// snapshot as the operator's file.
func TestGates_ParseSentPolicyFile(t *testing.T) {
	ctx := context.Background()
	eng, _ := openPolicyEngine(t)
	src := t.TempDir()
	wasm := wasmfixtures.Bytes("allow.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(src, "mine.wasm"), wasm, 0o644))
	text := []byte(policyFileText(uuid.New(), "v1", "mine.wasm"))

	_, err := eng.Gates.ParseSentPolicyFile(text, "request body")
	require.ErrorIs(t, err, policyfile.ErrModuleNotFound)
	require.Contains(t, err.Error(), "not accepted over the API")

	local, err := govhost.ParsePolicyFile(text, "policy.json", src)
	require.NoError(t, err)
	wire, err := local.WireText()
	require.NoError(t, err)
	require.NotContains(t, string(wire), "mine.wasm")
	require.Contains(t, string(wire), "9007199254740993", "numbers stay as written")
	_, err = eng.Gates.ParseSentPolicyFile(wire, "request body")
	require.ErrorIs(t, err, policyfile.ErrModuleNotFound, "the module is not stored yet")

	_, _, err = eng.Gates.Upload(ctx, wasm)
	require.NoError(t, err)
	sent, err := eng.Gates.ParseSentPolicyFile(wire, "request body")
	require.NoError(t, err)
	require.Equal(t, local.Snapshot.Digest(), sent.Snapshot.Digest())
	require.Empty(t, sent.Modules)
}

// TestGates_OneGatePolicyAndHold: a dry run's one-gate policy binds the
// gate to every tool with its canonical configuration, and refuses a bad
// configuration or an unknown gate; Hold makes a parsed file's modules
// loadable without storing its version.
func TestGates_OneGatePolicyAndHold(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithCompilationCacheDir(wasmCache))
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)

	snap, err := gates.OneGatePolicy("permission", []byte(`{"preset":"safe"}`), "")
	require.NoError(t, err)
	require.Equal(t, govhost.OneGatePolicyID, snap.PolicyID())
	require.Len(t, snap.GateBindings(), 1)
	b := snap.GateBindings()[0]
	require.Equal(t, "permission", b.GateID())
	require.Equal(t, []string{"*"}, b.ToolIDs())
	require.Equal(t, governance.LevelHard, b.Level())

	_, err = gates.OneGatePolicy("permission", []byte(`{"a":1.5}`), "")
	require.ErrorContains(t, err, "config")
	_, err = gates.OneGatePolicy("no-such-gate", []byte(`{}`), "")
	require.ErrorIs(t, err, policyfile.ErrModuleNotFound)

	src := t.TempDir()
	wasm := wasmfixtures.Bytes("allow.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(src, "mine.wasm"), wasm, 0o644))
	text := `{"policy_id":"` + uuid.NewString() + `","version":"v1","gates":[
		{"gate_id":"mine","module":"mine.wasm","level":"hard","order":1,"tool_ids":["bash"]}]}`
	f, err := govhost.ParsePolicyFile([]byte(text), "p.json", src)
	require.NoError(t, err)
	require.False(t, gates.ModuleAvailable(governance.SHA256Hex(wasm)))
	require.NoError(t, gates.Hold(f))
	require.True(t, gates.ModuleAvailable(governance.SHA256Hex(wasm)))
	for _, b := range f.Snapshot.GateBindings() {
		_, err := gates.GateFor(ctx, b)
		require.NoError(t, err, b.GateID())
	}
}
