package certify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

// task is a real task run through the controller with Go gates: the
// chain, boundary, policy and minted certificate every test starts from.
type task struct {
	store    *evidence.MemStore
	policies policy.Store
	snap     governance.PolicySnapshot
	ctl      *controller.InvocationController
	boundary governance.ClosedTaskBoundary
	recs     []governance.EvidenceRecord
	head     string
	cert     governance.TaskCertificate
}

type gateFunc func(in abi.GateInput) (abi.Decision, string)

func (f gateFunc) Evaluate(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
	d, reason := f(in)
	return abi.GateOutput{Decision: d, ReasonCode: reason}, nil
}

func gate(fn func(in abi.GateInput) (abi.Decision, string)) controller.Gate { return gateFunc(fn) }

// The policy: guard (hard, bash) denies rm; perm (soft, bash and read)
// denies paths under /etc; audit (advisory, read) always denies.
var gates = map[string]controller.Gate{
	"guard": gate(func(in abi.GateInput) (abi.Decision, string) {
		if strings.Contains(string(in.Arguments), "rm ") {
			return abi.DecisionDeny, "guard.rm"
		}
		return abi.DecisionAllow, "guard.ok"
	}),
	"perm": gate(func(in abi.GateInput) (abi.Decision, string) {
		if strings.Contains(string(in.Arguments), "/etc") {
			return abi.DecisionDeny, "perm.etc"
		}
		return abi.DecisionAllow, "perm.ok"
	}),
	"audit": gate(func(abi.GateInput) (abi.Decision, string) { return abi.DecisionDeny, "audit.noted" }),
}

var actor = governance.ActorRef{Kind: "agent", ID: "coder"}

// runTask runs: bash ls (completed), bash rm (hard deny), bash fail
// (callable failure), read /etc/passwd (soft deny), read notes (advisory
// deny, completed); with grant, the soft deny of /etc/passwd is excused
// by an exception recorded first.
func runTask(t testing.TB, grant bool) *task {
	t.Helper()
	if !grant {
		return runTaskWith(t, nil)
	}
	return runTaskWith(t, func(ctx context.Context, tk *task, chain uuid.UUID) {
		now := time.Now()
		_, err := tk.ctl.GrantException(ctx, chain, governance.ExceptionGrant{
			Actor: actor, GateID: "perm", ToolID: "read", PolicyID: tk.snap.PolicyID(), PolicyVersion: tk.snap.Version(),
			ReasonCode: "incident.4711", IssuedAt: now.Add(-time.Second), ExpiresAt: now.Add(time.Hour),
		})
		require.NoError(t, err)
	})
}

// runTaskWith runs the task of runTask; before records grants on the
// task's chain before the first operation.
func runTaskWith(t testing.TB, before func(ctx context.Context, tk *task, chain uuid.UUID)) *task {
	t.Helper()
	ctx := context.Background()
	levels := []struct {
		id    string
		level governance.GateLevel
		tools []string
	}{{"guard", governance.LevelHard, []string{"bash"}}, {"perm", governance.LevelSoft, []string{"bash", "read"}}, {"audit", governance.LevelAdvisory, []string{"read"}}}
	var bindings []governance.ExecutableGateBinding
	for i, l := range levels {
		b, err := governance.NewExecutableGateBinding(governance.GateBindingSpec{
			GateID: l.id, AdapterID: "wasm", Level: l.level, Order: i, ToolIDs: l.tools,
			ModuleDigest: governance.SHA256Hex([]byte(l.id)),
		})
		require.NoError(t, err)
		bindings = append(bindings, b)
	}
	ps := policy.NewMemStore(policy.AvailabilityFuncs{Adapter: func(string) bool { return true }, Module: func(string) bool { return true }})
	snap, err := governance.NewPolicySnapshot(uuid.New(), "2026.12.1", bindings)
	require.NoError(t, err)
	require.NoError(t, ps.Put(ctx, snap))
	snap, err = ps.Activate(ctx, snap.PolicyID(), snap.Version(), nil, time.Now())
	require.NoError(t, err)

	tk := &task{store: evidence.NewMemStore(), policies: ps, snap: snap}
	tk.ctl, err = controller.New(controller.Config{
		Evidence: tk.store, Policies: ps,
		Gates: controller.GateProviderFunc(func(_ context.Context, b governance.ExecutableGateBinding) (controller.Gate, error) {
			return gates[b.GateID()], nil
		}),
	})
	require.NoError(t, err)
	m := controller.NewManager()
	tool := func(_ context.Context, args map[string]any) (any, error) {
		if args["command"] == "fail" {
			return nil, errors.New("tool failed")
		}
		return "ok", nil
	}
	require.NoError(t, m.Register(controller.Tool{ID: "bash", Fn: tool}))
	require.NoError(t, m.Register(controller.Tool{ID: "read", Fn: tool}))
	require.NoError(t, m.Govern(tk.ctl, controller.PolicyPin{PolicyID: snap.PolicyID(), Version: snap.Version()}))

	a := actor
	tk.boundary, err = controller.RunTask(ctx, tk.ctl, controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(), Actor: &a}, func(tt *controller.Task) error {
		if before != nil {
			before(ctx, tk, tt.ChainID())
		}
		for _, c := range []struct{ tool, args string }{
			{"bash", `{"command":"ls"}`}, {"bash", `{"command":"rm -rf /"}`}, {"bash", `{"command":"fail"}`},
			{"read", `{"path":"/etc/passwd"}`}, {"read", `{"path":"notes"}`},
		} {
			opctx, err := tt.Context(c.tool)
			require.NoError(t, err)
			_, _ = m.Invoke(ctx, controller.Call{Tool: c.tool, Arguments: json.RawMessage(c.args)}, &opctx)
		}
		return nil
	})
	require.NoError(t, err)
	h, err := tk.store.Head(ctx, tk.boundary.ChainID)
	require.NoError(t, err)
	tk.head = h.Hash
	tk.recs, err = tk.store.Read(ctx, tk.boundary.ChainID, -1)
	require.NoError(t, err)
	issuer := &controller.CertificateIssuer{Evidence: tk.store, Policies: ps}
	tk.cert, err = issuer.Mint(ctx, tk.boundary, tk.head)
	require.NoError(t, err)
	return tk
}

func (tk *task) evidence() certify.Evidence {
	snap := tk.snap
	return certify.Evidence{Boundary: tk.boundary, Records: tk.recs, ExpectedHead: tk.head, Policy: &snap}
}

// rechain rebuilds recs as a consistently hashed chain (every digest and
// link recomputed), as a forger holding the store would: only the semantic
// rules can catch what was changed.
func rechain(t testing.TB, recs []governance.EvidenceRecord) ([]governance.EvidenceRecord, string) {
	t.Helper()
	out := make([]governance.EvidenceRecord, 0, len(recs))
	head := governance.EmptyHead
	for _, r := range recs {
		p, err := governance.ParseJSON([]byte(r.PayloadJSON))
		require.NoError(t, err)
		n, err := governance.NextRecord(head, governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: p,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		})
		require.NoError(t, err)
		out = append(out, n)
		head = n.Head()
	}
	return out, head.Hash
}

func setPayload(t testing.TB, r *governance.EvidenceRecord, edit func(map[string]any)) {
	t.Helper()
	v, err := governance.ParseJSON([]byte(r.PayloadJSON))
	require.NoError(t, err)
	m := v.(map[string]any)
	edit(m)
	text, err := governance.Canonical(m)
	require.NoError(t, err)
	r.PayloadJSON = string(text)
}

func indexOf(recs []governance.EvidenceRecord, typ governance.EvidenceType, nth int) int {
	for i, r := range recs {
		if r.RecordType == typ {
			if nth == 0 {
				return i
			}
			nth--
		}
	}
	return -1
}

func controllerIssuer(tk *task) *controller.CertificateIssuer {
	return &controller.CertificateIssuer{Evidence: tk.store, Policies: tk.policies}
}
