package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// TestClient_PutPolicyFile: an operator's policy file naming a .wasm by
// path is stored through the server (module uploaded first, the file sent
// with its digest) as the same snapshot, new the first time only; a module
// whose bytes are not its digest's is refused before any policy is sent.
func TestClient_PutPolicyFile(t *testing.T) {
	e := openEnv(t, true) // its own module folder: the shared one's uploads are other tests'
	defer e.close()
	ctx := context.Background()
	src := t.TempDir()
	wasm := wasmfixtures.Bytes("c_gate.wasm")
	require.NoError(t, os.WriteFile(filepath.Join(src, "tg.wasm"), wasm, 0o644))
	id := uuid.New()
	text := `{"policy_id":"` + id.String() + `","version":"v1","gates":[
		{"gate_id":"tg","module":"tg.wasm","level":"hard","order":1,"tool_ids":["bash"],"config":{"deny_tool":"bash"}}]}`
	path := filepath.Join(src, "p.json")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	f, err := govhost.ReadPolicyFile(path)
	require.NoError(t, err)
	wire, err := f.WireText()
	require.NoError(t, err)

	sum, created, err := e.operator.PutPolicyFile(ctx, f.Snapshot, wire, f.Modules)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, f.Snapshot.Digest(), sum.Digest)
	require.FileExists(t, filepath.Join(e.modules, governance.SHA256Hex(wasm)+".wasm"))
	_, created, err = e.operator.PutPolicyFile(ctx, f.Snapshot, wire, f.Modules)
	require.NoError(t, err)
	require.False(t, created)

	other := uuid.New()
	lying := map[string][]byte{strings.Repeat("a", 64): wasm}
	_, _, err = e.operator.PutPolicyFile(ctx, f.Snapshot, []byte(strings.ReplaceAll(string(wire), id.String(), other.String())), lying)
	require.ErrorContains(t, err, "the server stored it as "+governance.SHA256Hex(wasm))
	_, err = e.operator.ShowPolicy(ctx, other, "v1")
	require.Error(t, err, "no policy was sent")
}
