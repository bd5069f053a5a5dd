package controller_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
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

// TestInvoke_PreCallRecordsOneBatch_ApproverSeesTheOperation: an allowed
// call's records before the callable reach the store in one batch (one
// commit), except when a gate waits on an approver: the records so far are
// applied first, so a chain read during the wait shows the operation, and
// the gate batch after it makes them durable.
func TestInvoke_PreCallRecordsOneBatch_ApproverSeesTheOperation(t *testing.T) {
	mem := vfs.NewCrashableMem()
	store, err := pebblestore.Open("db", pebblestore.Options{FS: mem, BallastSize: -1})
	require.NoError(t, err)
	defer store.Close()
	counted := &countingStore{Store: store}
	var seen []governance.EvidenceType
	var e *env
	approve := func(c *controller.Config) {
		c.Approvals = func(ctx context.Context, _ controller.ApprovalRequest) (controller.ApprovalDecision, error) {
			recs, err := store.Read(ctx, e.chain, -1)
			require.NoError(t, err)
			for _, r := range recs {
				seen = append(seen, r.RecordType)
			}
			return controller.ApprovalDecision{Decision: abi.DecisionAllow}, nil
		}
	}
	e = newEnvWithStore(t, counted, []binding{
		hard("a", answer(abi.DecisionAllow, "ok"), "bash", "ask"),
		hard("b", answer(abi.DecisionRequireApproval, "ask"), "ask"),
	}, approve)

	_, err = e.invoke("bash", `{}`)
	require.NoError(t, err)
	require.Equal(t, int64(2), counted.batches.Load(), "one batch before the callable, one after")
	require.Empty(t, seen, "no approver was asked")

	var image vfs.FS
	require.NoError(t, e.m.Register(controller.Tool{ID: "ask", Fn: func(context.Context, map[string]any) (any, error) {
		image = mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		return nil, nil
	}}))
	_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "ask", Arguments: json.RawMessage(`{}`)}, e.opctx("ask"))
	require.NoError(t, err)
	require.Equal(t, []governance.EvidenceType{
		governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated, governance.CallableCompleted, // the first call
		governance.PolicyBound, governance.OperationStarted, governance.GateEvaluated, // this one's, before b asked
	}, seen)

	crashed, err := pebblestore.Open("db", pebblestore.Options{FS: image, BallastSize: -1})
	require.NoError(t, err)
	recs, err := crashed.Read(context.Background(), e.chain, -1)
	require.NoError(t, err)
	require.NoError(t, crashed.Close())
	require.Len(t, recs, 8, "the image taken inside the callable holds every pre-call record")
	e.requireVerifies()
}

// countingStore counts the synced (plain or sealed) and unsynced batches
// appended.
type countingStore struct {
	*pebblestore.Store
	batches, unsynced atomic.Int64
}

func (s *countingStore) AppendBatch(ctx context.Context, recs []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	s.batches.Add(1)
	return s.Store.AppendBatch(ctx, recs)
}

func (s *countingStore) AppendSealed(ctx context.Context, b *governance.SealedBatch) ([]governance.AppendReceipt, error) {
	s.batches.Add(1)
	return s.Store.AppendSealed(ctx, b)
}

func (s *countingStore) AppendBatchUnsynced(ctx context.Context, recs []governance.EvidenceRecord) error {
	s.unsynced.Add(1)
	return s.Store.AppendBatchUnsynced(ctx, recs)
}
