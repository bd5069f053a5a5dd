package govhost_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
	"github.com/govhost/govhost/policy/policyfile"
)

// TestOpen_LoadsTheBuiltinsTheLastRunsGatesRan: a run that makes gates of
// built-in modules lists them at Close (<dir>/wasm-cache/
// govhost-warm-builtins); the next Open loads them without being asked
// (beside the database's open), and the gates then need no other load. A
// run that makes no gate leaves the list as it was; a list naming anything
// but built-in modules loads only the built-ins it names; a host
// without a compilation cache directory has no list; one with its cache
// elsewhere keeps the list there; without Options.WarmBuiltins nothing is
// loaded from it (a short command).
func TestOpen_LoadsTheBuiltinsTheLastRunsGatesRan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	list := filepath.Join(dir, "wasm-cache", govhost.WarmBuiltinsFile)
	bindings := func(e *govhost.Engine) []governance.ExecutableGateBinding {
		doc := `{"policy_id": "` + uuid.NewString() + `", "version": "1", "gates": [
		{"gate_id": "permission", "module": "permission", "level": "hard", "order": 1, "tool_ids": ["bash"], "config": {"preset": "allow_all"}},
		{"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 2, "tool_ids": ["bash"]}]}`
		snap, err := policyfile.Load([]byte(doc), "p.json", e.Gates.Resolver(dir))
		require.NoError(t, err)
		return snap.GateBindings()
	}
	open := func(opts govhost.Options) *govhost.Engine {
		opts.Dir, opts.WarmBuiltins = dir, true
		e, err := govhost.Open(ctx, opts)
		require.NoError(t, err)
		govhost.WaitPrefetch(e)
		return e
	}
	digest := func(name string) string { m, _ := builtin.Lookup(name); return m.Digest }
	want := []string{digest("permission"), digest("destructive")}
	slices.Sort(want)

	e := open(govhost.Options{})
	require.Zero(t, e.Host.Compiles(), "no list yet: nothing loaded before a gate asks")
	require.NoError(t, e.Gates.Prepare(ctx, bindings(e)))
	require.EqualValues(t, 2, e.Host.Compiles())
	require.NoError(t, e.Close(ctx))
	raw, err := os.ReadFile(list)
	require.NoError(t, err)
	require.Equal(t, strings.Join(want, "\n")+"\n", string(raw))

	e = open(govhost.Options{})
	require.EqualValues(t, 2, e.Host.Compiles(), "the listed modules load at Open")
	require.NoError(t, e.Gates.Prepare(ctx, bindings(e)))
	require.EqualValues(t, 2, e.Host.Compiles(), "the gates found their modules loaded")
	require.NoError(t, e.Close(ctx))

	e = open(govhost.Options{}) // a short command: no gate
	require.NoError(t, e.Close(ctx))
	after, err := os.ReadFile(list)
	require.NoError(t, err)
	require.Equal(t, raw, after, "a run without gates leaves the list")

	junk := "not a digest\n" + governance.SHA256Hex([]byte("not a module")) + "\n\n" + digest("pathguard") + "\n" + digest("pathguard") + "\n"
	require.NoError(t, os.WriteFile(list, []byte(junk), 0o600))
	e = open(govhost.Options{})
	require.EqualValues(t, 1, e.Host.Compiles(), "only the built-in named is loaded, once")
	require.NoError(t, e.Close(ctx))

	require.NoError(t, os.WriteFile(list, raw, 0o600))
	short, err := govhost.Open(ctx, govhost.Options{Dir: dir})
	require.NoError(t, err)
	govhost.WaitPrefetch(short)
	require.Zero(t, short.Host.Compiles(), "without WarmBuiltins: nothing loaded at Open")
	require.NoError(t, short.Close(ctx))

	cfg := host.NewConfig()
	e = open(govhost.Options{Host: &cfg})
	require.Zero(t, e.Host.Compiles(), "a host without a compilation cache directory: no list")
	require.NoError(t, e.Close(ctx))

	elsewhere := t.TempDir()
	cfg = host.NewConfig().WithCompilationCacheDir(elsewhere)
	e = open(govhost.Options{Host: &cfg})
	require.Zero(t, e.Host.Compiles(), "the list is the cache directory's: none there yet")
	require.NoError(t, e.Gates.Prepare(ctx, bindings(e)))
	require.NoError(t, e.Close(ctx))
	moved, err := os.ReadFile(filepath.Join(elsewhere, govhost.WarmBuiltinsFile))
	require.NoError(t, err)
	require.Equal(t, raw, moved)
}
