package storetest

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// Harness tells the suite how to make and, for the tamper cases, corrupt a
// backend.
type Harness struct {
	// New returns an empty store whose Activate asks avail. The suite does
	// not close it; register cleanup with t.Cleanup.
	New func(t *testing.T, avail policy.Availability) policy.Store

	// RewriteSnapshot replaces the stored encoding of (policyID, version)
	// with edit(stored encoding), bypassing every check. Tamper cases are
	// skipped when it is nil (an in-memory store holds values, not bytes).
	RewriteSnapshot func(t *testing.T, s policy.Store, policyID uuid.UUID, version string, edit func([]byte) []byte)
}

// Module digests and adapters the suite's availability knows. MissingModule
// and "missing-adapter" are never available.
var (
	ModuleA       = strings.Repeat("a", 64)
	ModuleB       = strings.Repeat("b", 64)
	MissingModule = strings.Repeat("f", 64)
)

// Availability is what the suite passes to Harness.New: adapters "wasm" and
// "extism", modules ModuleA and ModuleB.
var Availability = policy.AvailabilityFuncs{
	Adapter: func(id string) bool { return id == "wasm" || id == "extism" },
	Module:  func(d string) bool { return d == ModuleA || d == ModuleB },
}

// Gate returns a valid binding spec: adapter wasm, level hard, module A,
// tools bash and write_file.
func Gate(gateID string, order int) governance.GateBindingSpec {
	return governance.GateBindingSpec{
		GateID: gateID, AdapterID: "wasm", Level: governance.LevelHard, Order: order,
		ToolIDs: []string{"bash", "write_file"}, ModuleDigest: ModuleA, Config: `{"mode":"default"}`,
	}
}

// Snapshot builds a staged snapshot; exported for backends' own tests and
// benchmarks.
func Snapshot(t testing.TB, policyID uuid.UUID, version string, gates ...governance.GateBindingSpec) governance.PolicySnapshot {
	t.Helper()
	bs := make([]governance.ExecutableGateBinding, len(gates))
	for i, g := range gates {
		b, err := governance.NewExecutableGateBinding(g)
		require.NoError(t, err)
		bs[i] = b
	}
	s, err := governance.NewPolicySnapshot(policyID, version, bs)
	require.NoError(t, err)
	return s
}

// Binding builds a binding of scope/selector to policyID@version.
func Binding(t testing.TB, scope governance.PolicyScope, selector string, policyID uuid.UUID, version string) governance.PolicyBinding {
	t.Helper()
	b, err := governance.NewPolicyBinding(governance.PolicyBinding{
		BindingID: uuid.New(), Scope: scope, Selector: selector,
		PolicyID: policyID, PolicyVersion: version, CreatedAt: T0,
	})
	require.NoError(t, err)
	return b
}
