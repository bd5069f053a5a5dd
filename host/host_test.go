package host_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
)

// One host for the whole test binary: modules compile once, and the on-disk
// cache makes the Go-built fixtures cheap on later runs.
var (
	sharedOnce sync.Once
	shared     *host.Host
	strictOnce sync.Once
	strict     *host.Host
)

// testTimeout bounds calls on the shared host: generous, so that a loaded
// machine (or -race) cannot turn a slow call into a timeout. Tests that
// expect gate.timeout use strictHost, whose bound is still a second: its
// benign bystanders instantiate under it on the same loaded machine.
const (
	testTimeout     = 3 * time.Second
	strictTimeout   = time.Second
	testMemoryPages = 256
)

func cacheDir() string { return filepath.Join(os.TempDir(), "govhost-test-wazero-cache") }

func testConfig() host.Config {
	return host.NewConfig().
		WithCompilationCacheDir(cacheDir()).
		WithCallTimeout(testTimeout).
		WithMemoryLimitPages(testMemoryPages).
		WithPoolSize(2)
}

func sharedHost(t testing.TB) *host.Host {
	sharedOnce.Do(func() {
		h, err := host.New(context.Background(), testConfig())
		if err != nil {
			panic(err)
		}
		shared = h
	})
	return shared
}

// strictHost is like sharedHost with a short call timeout, for the guests
// that never return.
func strictHost(t testing.TB) *host.Host {
	strictOnce.Do(func() {
		h, err := host.New(context.Background(), testConfig().WithCallTimeout(strictTimeout).WithMaxCallDepth(2000))
		if err != nil {
			panic(err)
		}
		strict = h
	})
	return strict
}

func load(t testing.TB, h *host.Host, name string) *host.Module {
	t.Helper()
	m, err := h.Load(context.Background(), wasmfixtures.Bytes(name), host.AnyDigest)
	require.NoError(t, err, name)
	return m
}

func gate(t testing.TB, h *host.Host, name, config string) *host.Gate {
	t.Helper()
	g, err := h.Gate(context.Background(), load(t, h, name), []byte(config))
	require.NoError(t, err, name)
	return g
}

func input(tool string) abi.GateInput {
	return abi.GateInput{GateID: "test", Phase: abi.PhaseCheck, Tool: tool, Arguments: []byte(`{"command":"ls"}`)}
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, h := range []*host.Host{shared, strict} {
		if h != nil {
			_ = h.Close(context.Background())
		}
	}
	os.Exit(code)
}

func TestHost_Load_Digest(t *testing.T) {
	h := sharedHost(t)
	wasm := wasmfixtures.Bytes("allow.wasm")
	ctx := context.Background()

	_, err := h.Load(ctx, wasm, "")
	require.ErrorIs(t, err, host.ErrDigestRequired)

	_, err = h.Load(ctx, wasm, "00"+string(make([]byte, 0)))
	var mismatch *host.DigestMismatchError
	require.ErrorAs(t, err, &mismatch)

	m, err := h.Load(ctx, wasm, host.AnyDigest)
	require.NoError(t, err)
	require.Len(t, m.Digest(), 64)
	require.Equal(t, host.KindNative, m.Kind())
	require.Contains(t, m.Exports(), abi.ExportEvaluate)

	again, err := h.Load(ctx, wasm, "sha256:"+m.Digest())
	require.NoError(t, err)
	require.Same(t, m, again, "the same digest compiles once")
}

func TestHost_Load_NotWasm(t *testing.T) {
	_, err := sharedHost(t).Load(context.Background(), []byte("GUEST-TEXT not wasm"), host.AnyDigest)
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeInvalidModule, ge.Code)
}

func TestNew_InvalidConfig(t *testing.T) {
	ctx := context.Background()
	for _, cfg := range []host.Config{
		host.NewConfig().WithPoolSize(0),
		host.NewConfig().WithMemoryLimitPages(0),
		host.NewConfig().WithMemoryLimitPages(70000),
		host.NewConfig().WithCallTimeout(-time.Second),
		host.NewConfig().WithMaxOutputBytes(1),
	} {
		_, err := host.New(ctx, cfg)
		require.ErrorIs(t, err, host.ErrInvalidConfig)
	}
}

func TestConfig_IsImmutable(t *testing.T) {
	base := host.NewConfig()
	_ = base.WithPoolSize(0)
	h, err := host.New(context.Background(), base)
	require.NoError(t, err, "With must not modify the receiver")
	require.NoError(t, h.Close(context.Background()))
}

func TestGate_Evaluate_Toolgate(t *testing.T) {
	h := sharedHost(t)
	g := gate(t, h, "toolgate.wasm", `{"deny_tools":["web_fetch"],"approve_tools":["bash"],"allowed_roots":["/work"]}`)
	ctx := context.Background()

	out, err := g.Evaluate(ctx, input("web_fetch"))
	require.NoError(t, err)
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, "toolgate.tool_denied", out.ReasonCode)

	out, err = g.Evaluate(ctx, input("bash"))
	require.NoError(t, err)
	require.Equal(t, abi.DecisionRequireApproval, out.Decision)

	in := input("read")
	in.Paths = []abi.PathFact{{Arg: "path", Raw: "../etc/passwd", Resolved: "/etc/passwd", Exists: true, Kind: abi.PathKindFile}}
	out, err = g.Evaluate(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "toolgate.path_outside_roots", out.ReasonCode)
	require.Equal(t, "allowed_roots", out.MatchedRule)

	d, ok, err := g.Describe(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "toolgate", d.Name)
}

func TestHost_Gate_SameKeySharesPool(t *testing.T) {
	h := sharedHost(t)
	a := gate(t, h, "toolgate.wasm", `{"deny_tools":["x"]}`)
	b := gate(t, h, "toolgate.wasm", ` { "deny_tools" : ["x"] } `)
	c := gate(t, h, "toolgate.wasm", `{"deny_tools":["y"]}`)
	require.Same(t, a, b)
	require.NotSame(t, a, c)
	require.NotEqual(t, a.ConfigDigest(), c.ConfigDigest())
}

func TestHost_Gate_BadConfig(t *testing.T) {
	h := sharedHost(t)
	m := load(t, h, "toolgate.wasm")
	_, err := h.Gate(context.Background(), m, []byte(`{"deny_tools":`))
	require.ErrorIs(t, err, host.ErrBadGateConfig)

	_, err = h.Gate(context.Background(), m, []byte(`{"allowed_roots":["relative"]}`))
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeConfigRejected, ge.Code)
}

func TestGate_Evaluate_Concurrent(t *testing.T) {
	h := sharedHost(t)
	g := gate(t, h, "toolgate.wasm", `{"deny_tools":["web_fetch"]}`)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				tool := "read"
				if (i+j)%2 == 0 {
					tool = "web_fetch"
				}
				out, err := g.Evaluate(context.Background(), input(tool))
				if err != nil {
					t.Error(err)
					return
				}
				if want := tool == "web_fetch"; want != (out.Decision == abi.DecisionDeny) {
					t.Errorf("tool %s: %v", tool, out)
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestHost_Close(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, testConfig())
	require.NoError(t, err)
	g := gate(t, h, "allow.wasm", "")
	_, err = g.Evaluate(ctx, input("x"))
	require.NoError(t, err)
	require.NoError(t, h.Close(ctx))
	require.NoError(t, h.Close(ctx), "Close is idempotent")
	out, err := g.Evaluate(ctx, input("x"))
	require.ErrorIs(t, err, host.ErrClosed)
	require.Equal(t, abi.DecisionDeny, out.Decision)
	_, err = h.Load(ctx, wasmfixtures.Bytes("allow.wasm"), host.AnyDigest)
	require.ErrorIs(t, err, host.ErrClosed)
}

func TestHost_Gate_ForeignModule(t *testing.T) {
	ctx := context.Background()
	other, err := host.New(ctx, testConfig())
	require.NoError(t, err)
	defer other.Close(ctx)
	m := load(t, other, "allow.wasm")
	_, err = sharedHost(t).Gate(ctx, m, nil)
	require.ErrorIs(t, err, host.ErrForeignModule)
}

// TestGate_Evaluate_CGate: a gate written in C from abi/README.md alone.
func TestGate_Evaluate_CGate(t *testing.T) {
	h := sharedHost(t)
	ctx := context.Background()
	g := gate(t, h, "c_gate.wasm", `{"deny_tool":"bash"}`)
	out, err := g.Evaluate(ctx, input("bash"))
	require.NoError(t, err)
	require.Equal(t, abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "cgate.tool_denied", MatchedRule: "deny_tool"}, out)
	out, err = g.Evaluate(ctx, input("read"))
	require.NoError(t, err)
	require.Equal(t, "cgate.allowed", out.ReasonCode)

	def := gate(t, h, "c_gate.wasm", "")
	require.Same(t, def, gate(t, h, "c_gate.wasm", " null "), "null is no configuration, like {}")
	out, err = def.Evaluate(ctx, input("web_fetch"))
	require.NoError(t, err)
	require.Equal(t, "cgate.tool_denied", out.ReasonCode)

	_, err = h.Gate(ctx, load(t, h, "c_gate.wasm"), []byte(`[1]`))
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeConfigRejected, ge.Code)
}

// TestGate_Evaluate_CHeaderGate: a gate written with sdk/c/govhost_gate.h.
func TestGate_Evaluate_CHeaderGate(t *testing.T) {
	g := gate(t, sharedHost(t), "c_header_gate.wasm", "")
	out, err := g.Evaluate(context.Background(), input("bash"))
	require.NoError(t, err)
	require.Equal(t, abi.GateOutput{Decision: abi.DecisionRequireApproval, ReasonCode: "cheader.bash_needs_approval"}, out)
	out, err = g.Evaluate(context.Background(), input("read"))
	require.NoError(t, err)
	require.Equal(t, "cheader.allowed", out.ReasonCode)
}
