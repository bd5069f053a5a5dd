package controller_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/governance"
)

// TestInvoke_PreCallRecordsDurableBeforeTheCallable takes a power-loss image
// of the disk (only synced data kept) from inside the callable: every
// record before the call — POLICY_BOUND and OPERATION_STARTED, applied
// without a sync of their own, and the gate records — is in it.
func TestInvoke_PreCallRecordsDurableBeforeTheCallable(t *testing.T) {
	mem := vfs.NewCrashableMem()
	store, err := pebblestore.Open("db", pebblestore.Options{FS: mem, BallastSize: -1})
	require.NoError(t, err)
	defer store.Close()
	e := newEnvWithStore(t, store, []binding{hard("a", answer(abi.DecisionAllow, "ok"), "snapshot"), hard("b", answer(abi.DecisionAllow, "ok"), "snapshot")})

	var image vfs.FS
	require.NoError(t, e.m.Register(controller.Tool{ID: "snapshot", Fn: func(context.Context, map[string]any) (any, error) {
		image = mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		return nil, nil
	}}))
	for range 3 { // the second and later operations find an existing chain
		_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "snapshot", Arguments: json.RawMessage(`{}`)}, e.opctx("snapshot"))
		require.NoError(t, err)

		crashed, err := pebblestore.Open("db", pebblestore.Options{FS: image, BallastSize: -1})
		require.NoError(t, err)
		recs, err := crashed.Read(context.Background(), e.chain, -1)
		require.NoError(t, err)
		require.NoError(t, crashed.Close())
		require.GreaterOrEqual(t, len(recs), 4)
		var tail []governance.EvidenceType
		for _, r := range recs[len(recs)-4:] {
			tail = append(tail, r.RecordType)
		}
		require.Equal(t, []governance.EvidenceType{governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated, governance.GateEvaluated}, tail,
			"the image taken inside the callable holds every pre-call record")
	}
	e.requireVerifies()
}
