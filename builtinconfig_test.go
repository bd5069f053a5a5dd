package govhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestResolvePathguardConfig: the host's step of a pathguard configuration
// resolves roots, scopes and absolute denied entries ("~" expanded with
// the configured home), keeps "$workspace" paths, globs and texts, and
// leaves the virtual kind alone.
func TestResolvePathguardConfig(t *testing.T) {
	resolve := func(p string) (string, error) {
		if p == "/broken" {
			return "", os.ErrPermission
		}
		return "/real" + p, nil
	}
	for _, tc := range []struct{ in, want string }{
		{`{"kind":"guard_paths","home":"/h","allowed_paths":["~/w","$workspace"],"denied_paths":[".env","/w/s","$workspace/k"],"refuse_symlinks":false}`,
			`{"kind":"guard_paths","home":"/h","allowed_paths":["/real/h/w","$workspace"],"denied_paths":[".env","/w/s","/real/w/s","$workspace/k"],"refuse_symlinks":false}`},
		{`{"kind":"path_scope","paths":["/a","/b/c.md"]}`, `{"kind":"path_scope","paths":["/real/a","/real/b/c.md"]}`},
		{`{"kind":"workspace","root":"/w/"}`, `{"kind":"workspace","root":"/real/w"}`},
		{`{"kind":"path_scope","paths":["$workspace/docs/./x/","/s"]}`, `{"kind":"path_scope","paths":["$workspace/docs/x","/real/s"]}`},
		{`{"kind":"guard_paths","denied_paths":["*.key","~"],"home":"/u/"}`, `{"kind":"guard_paths","denied_paths":["*.key","~","/real/u"],"home":"/u/"}`},
		{`{"kind":"guard_paths"}`, `{"kind":"guard_paths"}`},
	} {
		out, readable, err := govhost.ResolvePathguardConfig([]byte(tc.in), resolve)
		require.NoError(t, err, tc.in)
		require.True(t, readable, tc.in)
		require.JSONEq(t, tc.want, string(out), tc.in)
	}
	virtual := `{"kind":"virtual","mounts":[{"name":"t"}],"roots":["/t/a"],"cwd":"/t/a"}`
	out, readable, err := govhost.ResolvePathguardConfig([]byte(virtual), resolve)
	require.NoError(t, err)
	require.True(t, readable)
	require.Equal(t, virtual, string(out), "a storage namespace, not the host's paths")

	out, readable, err = govhost.ResolvePathguardConfig([]byte(`{"kind":"workspace","root":"rel"}`), resolve)
	require.NoError(t, err)
	require.False(t, readable)
	require.Equal(t, `{"kind":"workspace","root":"rel"}`, string(out), "left to the module to refuse")

	_, _, err = govhost.ResolvePathguardConfig([]byte(`{"kind":"workspace","root":"/broken"}`), resolve)
	require.ErrorIs(t, err, os.ErrPermission)
	require.Contains(t, err.Error(), `root: resolving "/broken"`)
}

// TestPathguardConfig_UnreadableIsRefused: a configuration the host's step
// cannot read goes to the module unchanged, so the module must refuse it;
// every configuration of the case table (all accepted) is read, so none
// reaches the module with its roots unresolved.
func TestPathguardConfig_UnreadableIsRefused(t *testing.T) {
	identity := func(p string) (string, error) { return p, nil }
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig().WithPoolSize(1))
	require.NoError(t, err)
	defer h.Close(ctx)
	m, _ := builtin.Lookup("pathguard")
	mod, err := h.LoadTrusted(ctx, m.Wasm, m.Digest)
	require.NoError(t, err)
	for _, cfg := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"kind":1}`, `{"kind":""}`, `{"kind":"allow_all"}`, `{"kind":"workspace"}`, `{"kind":"workspace","root":""}`,
		`{"kind":"workspace","root":"ws"}`, `{"kind":"workspace","root":"~/ws"}`, `{"kind":"workspace","root":"~bob/ws","home":"/home/u"}`,
		`{"kind":"workspace","root":"/ws","home":"home"}`, `{"kind":"workspace","root":"/ws","home":1}`, `{"kind":"workspace","root":"/ws\u0000x"}`,
		`{"kind":"workspace","root":"$workspace/../x"}`, `{"kind":"workspace","root":"$workspaces"}`, `{"kind":"workspace","root":5}`,
		`{"kind":"path_scope"}`, `{"kind":"path_scope","paths":null}`, `{"kind":"path_scope","paths":["/ws","brief.md"]}`, `{"kind":"path_scope","paths":[1]}`,
		`{"kind":"path_scope","paths":["/a","$workspace/a/../.."]}`, `{"kind":"path_scope","paths":"/a"}`,
		`{"kind":"guard_paths","allowed_paths":["/ok","project"]}`, `{"kind":"guard_paths","allowed_paths":[""]}`, `{"kind":"guard_paths","allowed_paths":[null]}`,
		`{"kind":"guard_paths","denied_paths":["~/.ssh"]}`, `{"kind":"guard_paths","denied_paths":[null]}`, `{"kind":"guard_paths","denied_paths":["a\u0000"]}`,
		`{"kind":"guard_paths","denied_paths":["$workspace/.."]}`, `{"kind":"guard_paths","denied_paths":"*.key"}`, `{"kind":"guard_paths","denied_paths":["~x"],"home":"/h"}`,
	} {
		out, readable, err := govhost.ResolvePathguardConfig([]byte(cfg), identity)
		require.NoError(t, err, cfg)
		require.False(t, readable, cfg)
		require.Equal(t, cfg, string(out), cfg)
		_, err = h.Gate(ctx, mod, []byte(cfg))
		var ge *host.GuestError
		require.True(t, errors.As(err, &ge) && ge.Code == host.CodeConfigRejected, "%s: the module must refuse it: %v", cfg, err)
	}

	raw, err := os.ReadFile("plugins/pathguard/testdata/cases.json")
	require.NoError(t, err)
	var table struct {
		Cases []struct {
			Name   string          `json:"name"`
			Config json.RawMessage `json:"config"`
		} `json:"cases"`
	}
	require.NoError(t, json.Unmarshal(raw, &table))
	require.NotEmpty(t, table.Cases)
	for _, c := range table.Cases {
		_, readable, err := govhost.ResolvePathguardConfig(c.Config, identity)
		require.NoError(t, err, c.Name)
		require.True(t, readable, "%s: %s", c.Name, c.Config)
	}
}

// FuzzPathguardConfig_HostStepAgreesWithTheModule: for any configuration
// (canonical JSON, as a binding carries), the host's step either reads it
// or leaves it to a module that refuses it; and a configuration it read
// (paths resolved as themselves) is accepted by the module exactly when
// the original is.
func FuzzPathguardConfig_HostStepAgreesWithTheModule(f *testing.F) {
	for _, s := range []string{
		`{"kind":"guard_paths","home":"/h","allowed_paths":["~/w","$workspace"],"denied_paths":[".env","/w/s","$workspace/k","*.key",""]}`,
		`{"kind":"path_scope","paths":["/a","/b/c.md","$workspace/docs/./x/"]}`, `{"kind":"workspace","root":"/w/","allowed_operations":["read_file"]}`,
		`{"kind":"workspace","root":"rel"}`, `{"kind":"guard_paths","denied_paths":["~x"],"home":"/h"}`, `{"kind":"guard_paths","denied_paths":["$workspace/.."]}`,
		`{"kind":"virtual","mounts":[{"name":"t"}],"roots":["/t/a"],"cwd":"/t/a"}`, `{"kind":"path_scope","paths":[null]}`, `{"kind":"x"}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	identity := func(p string) (string, error) { return p, nil }
	ctx := context.Background()
	var h *host.Host
	var mod *host.Module
	configured := 0
	f.Cleanup(func() {
		if h != nil {
			h.Close(ctx)
		}
	})
	accepts := func(t *testing.T, config []byte) bool {
		if h == nil || configured >= 48 {
			if h != nil {
				h.Close(ctx)
			}
			var err error
			h, err = host.New(ctx, host.NewConfig().WithPoolSize(1).WithCompilationCacheDir(filepath.Join(os.TempDir(), "govhost-pathguard-config-fuzz")))
			require.NoError(t, err)
			m, _ := builtin.Lookup("pathguard")
			mod, err = h.LoadTrusted(ctx, m.Wasm, m.Digest)
			require.NoError(t, err)
			configured = 0
		}
		configured++
		_, err := h.Gate(ctx, mod, config)
		var ge *host.GuestError
		if err != nil && !(errors.As(err, &ge) && ge.Code == host.CodeConfigRejected) && !errors.Is(err, host.ErrBadGateConfig) {
			t.Fatalf("%s: %v, not a refusal", config, err)
		}
		return err == nil
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		config, err := governance.Canonical(v)
		if err != nil {
			return
		}
		out, readable, err := govhost.ResolvePathguardConfig(config, identity)
		require.NoError(t, err)
		ok := accepts(t, config)
		if !readable {
			require.Equal(t, string(config), string(out))
			require.False(t, ok, "%s: the host's step left it, the module accepts it", config)
			return
		}
		require.Equal(t, ok, accepts(t, out), "%s → %s", config, out)
	})
}
