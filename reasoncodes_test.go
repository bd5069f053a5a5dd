package govhost_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/internal/wasmfixtures"
	"github.com/govhost/govhost/plugins/builtin"
)

// TestGates_ReasonCodesComeFromTheDeclaredVocabulary: a module that
// declares its reason codes (gate_describe) and answers another one — the
// channel a spy gate used to write its input into evidence and metrics — is
// denied gate.bad_output; answering a declared code passes; the metrics'
// question "declared?" knows the module's codes and the built-ins'
// namespaces, and nothing else.
func TestGates_ReasonCodesComeFromTheDeclaredVocabulary(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	describe := `{"name":"vocab","reason_codes":["vocab.ok","vocab.no"]}`
	gateOf := func(id string, wasm []byte) controller.Gate {
		digest, err := gates.Add(wasm)
		require.NoError(t, err)
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: id, AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
		})
		require.NoError(t, err)
		g, err := gates.GateFor(ctx, b)
		require.NoError(t, err)
		return g
	}
	in := abi.GateInput{GateID: "x", Phase: abi.PhaseCheck, Tool: "bash", Arguments: []byte(`{"command":"ls"}`)}

	spy := gateOf("spy", wasmfixtures.AnswerGate(`{"decision":"allow","reason_code":"vocab.6c73"}`, describe))
	out, err := spy.Evaluate(ctx, in)
	var ge *host.GuestError
	require.ErrorAs(t, err, &ge)
	require.Equal(t, host.CodeBadOutput, ge.Code)
	require.Equal(t, abi.DecisionDeny, out.Decision)
	require.Equal(t, host.CodeBadOutput, out.ReasonCode)

	honest := gateOf("honest", wasmfixtures.AnswerGate(`{"decision":"deny","reason_code":"vocab.no"}`, describe))
	out, err = honest.Evaluate(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "vocab.no", out.ReasonCode)

	destructive, _ := builtin.Lookup("destructive")
	b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
		GateID: "destructive", AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: destructive.Digest, Config: "{}",
	})
	require.NoError(t, err)
	_, err = gates.GateFor(ctx, b)
	require.NoError(t, err)

	require.True(t, gates.ReasonCodeDeclared("vocab.ok"))
	require.True(t, gates.ReasonCodeDeclared("destructive.rm_recursive_force"))
	require.False(t, gates.ReasonCodeDeclared("vocab.6c73"))
	require.False(t, gates.ReasonCodeDeclared("x.6c73"))
}

// TestGates_UploadQuota: the module folder takes MaxStoredModules modules;
// the next upload of new bytes is refused before anything is compiled or
// stored, while uploading stored bytes again still answers.
func TestGates_UploadQuota(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	dir := t.TempDir()
	gates, err := govhost.NewGates(h, dir)
	require.NoError(t, err)
	module := func(i int) []byte {
		return wasmfixtures.AnswerGate(fmt.Sprintf(`{"decision":"allow","reason_code":"q.n%d"}`, i), "")
	}
	for i := 0; i < govhost.MaxStoredModules; i++ {
		_, created, err := gates.Upload(ctx, module(i))
		require.NoError(t, err)
		require.True(t, created)
	}
	_, _, err = gates.Upload(ctx, module(govhost.MaxStoredModules))
	var quota *govhost.ModuleQuotaError
	require.ErrorAs(t, err, &quota)
	require.EqualValues(t, govhost.MaxStoredModules, quota.Stored)
	stored, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	require.NoError(t, err)
	require.Len(t, stored, govhost.MaxStoredModules, "nothing stored for the refused upload")
	_, created, err := gates.Upload(ctx, module(3))
	require.NoError(t, err, "stored bytes again pass")
	require.False(t, created)
}

// TestGates_AUserModuleNeverAnswersInAReservedNamespace: a user module,
// declaring its codes or not, that answers a code govhost writes itself
// (gate.*, policy.*, a built-in gate's namespace) is denied gate.bad_output,
// also when it declared that code; a module declaring nothing may answer
// any other code.
func TestGates_AUserModuleNeverAnswersInAReservedNamespace(t *testing.T) {
	ctx := context.Background()
	h, err := host.New(ctx, host.NewConfig())
	require.NoError(t, err)
	defer h.Close(ctx)
	gates, err := govhost.NewGates(h, "")
	require.NoError(t, err)
	in := abi.GateInput{GateID: "x", Phase: abi.PhaseCheck, Tool: "bash", Arguments: []byte(`{"command":"ls"}`)}
	answer := func(id, code, describe string) (abi.GateOutput, error) {
		digest, err := gates.Add(wasmfixtures.AnswerGate(`{"decision":"allow","reason_code":"`+code+`"}`, describe))
		require.NoError(t, err)
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: id, AdapterID: govhost.AdapterWasm, Level: governance.LevelHard, ToolIDs: []string{"bash"}, ModuleDigest: digest, Config: "{}",
		})
		require.NoError(t, err)
		g, err := gates.GateFor(ctx, b)
		require.NoError(t, err)
		return g.Evaluate(ctx, in)
	}
	for i, c := range []struct{ code, describe string }{
		{"gate.timeout", ""},
		{"destructive.rm_recursive_force", ""},
		{"policy.not_found", ""},
		{"gate.timeout", `{"name":"liar","reason_codes":["gate.timeout","liar.ok"]}`},
	} {
		out, err := answer(fmt.Sprintf("reserved-%d", i), c.code, c.describe)
		var ge *host.GuestError
		require.ErrorAs(t, err, &ge, c.code)
		require.Equal(t, host.CodeBadOutput, ge.Code)
		require.Equal(t, abi.DecisionDeny, out.Decision, c.code)
	}
	out, err := answer("undeclared", "egress.blocked_host", "")
	require.NoError(t, err)
	require.Equal(t, "egress.blocked_host", out.ReasonCode)
	require.False(t, gates.ReasonCodeDeclared("gate.timeout"), "a reserved code a module declared is not its")
}
