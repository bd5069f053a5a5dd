package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/policy"
)

var errDiskFull = errors.New("disk full")

// failingStore fails its n-th append call (1-based, batches count once)
// and every one after it.
type failingStore struct {
	evidence.Store
	failAt int64
	calls  atomic.Int64
}

func (s *failingStore) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	if s.calls.Add(1) >= s.failAt {
		return governance.AppendReceipt{}, errDiskFull
	}
	return s.Store.Append(ctx, r)
}

func (s *failingStore) AppendBatch(ctx context.Context, recs []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if s.calls.Add(1) >= s.failAt {
		return nil, errDiskFull
	}
	return s.Store.(evidence.BatchAppender).AppendBatch(ctx, recs)
}

// TestInvoke_EvidenceFailureAtEachStep fails the store at each append of
// an allowed call (1: the pre-call batch, POLICY_BOUND, OPERATION_STARTED
// and GATE_EVALUATED; 2: CALLABLE_COMPLETED) and of a denied and a failing
// call.
func TestInvoke_EvidenceFailureAtEachStep(t *testing.T) {
	for _, c := range []struct {
		failAt   int64
		executed bool
	}{{1, false}, {2, true}} {
		store := &failingStore{Store: evidence.NewMemStore(), failAt: c.failAt}
		e := newEnvWithStore(t, store, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
		_, err := e.invoke("bash", `{"command":"ls"}`)
		var ge *governance.GovernanceEvidenceError
		require.ErrorAs(t, err, &ge, "fail at %d", c.failAt)
		require.Equal(t, c.executed, ge.CallExecuted)
		require.ErrorIs(t, err, errDiskFull)
		if c.executed {
			require.Equal(t, int64(1), e.calls.Load(), "never retried")
		} else {
			require.Zero(t, e.calls.Load(), "callable not reached")
		}
	}

	// A denial whose pre-call batch (with OPERATION_DENIED) cannot be written.
	store := &failingStore{Store: evidence.NewMemStore(), failAt: 1}
	e := newEnvWithStore(t, store, []binding{hard("g", answer(abi.DecisionDeny, "no"))})
	_, err := e.invoke("bash", `{}`)
	var ge *governance.GovernanceEvidenceError
	require.ErrorAs(t, err, &ge)
	require.False(t, ge.CallExecuted)

	// The callable fails and CALLABLE_FAILED cannot be written.
	store = &failingStore{Store: evidence.NewMemStore(), failAt: 2}
	e = newEnvWithStore(t, store, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	toolErr := errors.New("tool broke")
	require.NoError(t, e.m.Register(controller.Tool{ID: "fail", Fn: func(context.Context, map[string]any) (any, error) { return nil, toolErr }}))
	_, err = e.m.Invoke(context.Background(), controller.Call{Tool: "fail"}, e.opctx("fail"))
	var oe *governance.OutcomeEvidenceError
	require.ErrorAs(t, err, &oe)
	require.ErrorIs(t, err, toolErr)
	require.ErrorIs(t, err, errDiskFull)
}

// TestInvoke_ConcurrentOperations runs 64 operations at once on one task
// chain and 64 on chains of their own; every chain verifies and every
// operation has exactly one terminal record.
func TestInvoke_ConcurrentOperations(t *testing.T) {
	g := &fakeGate{fn: func(_ context.Context, in abi.GateInput) (abi.GateOutput, error) {
		var args map[string]any
		_ = json.Unmarshal(in.Arguments, &args)
		if args["n"].(float64) < 0 {
			return abi.GateOutput{Decision: abi.DecisionDeny, ReasonCode: "negative"}, nil
		}
		return abi.GateOutput{Decision: abi.DecisionAllow, ReasonCode: "ok"}, nil
	}}
	e := newEnv(t, []binding{hard("g", g)})
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := i
			if i%4 == 0 {
				n = -i - 1
			}
			args, _ := json.Marshal(map[string]int{"n": n})
			op := e.opctx("bash")
			if i%2 == 1 {
				op.ChainID = uuid.New()
			}
			res, err := e.m.Invoke(context.Background(), controller.Call{Tool: "bash", Arguments: args}, op)
			if n < 0 {
				var de *governance.GovernanceDeniedError
				if !errors.As(err, &de) || de.OperationID != op.OperationID.String() {
					t.Errorf("op %d: want its own denial, got %v", i, err)
				}
				return
			}
			if err != nil || res.(map[string]any)["n"].(float64) != float64(n) {
				t.Errorf("op %d: got %v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	e.requireVerifies()
	terminals := map[uuid.UUID]int{}
	startedOps := map[uuid.UUID]bool{}
	for _, r := range e.records() {
		switch r.RecordType {
		case governance.OperationStarted:
			startedOps[r.OperationID.UUID] = true
		case governance.OperationDenied, governance.CallableCompleted, governance.CallableFailed:
			terminals[r.OperationID.UUID]++
		}
	}
	require.Len(t, startedOps, 32)
	for op := range startedOps {
		require.Equal(t, 1, terminals[op])
	}
}

func TestObservationProjector_IdentifiersOnlyAndNeverBlocks(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	var mu sync.Mutex
	var seen []controller.Observation
	cancel := e.proj.Subscribe(64, func(o controller.Observation) {
		mu.Lock()
		seen = append(seen, o)
		mu.Unlock()
	})
	block := make(chan struct{})
	cancelSlow := e.proj.Subscribe(1, func(controller.Observation) { <-block })
	cancelPanic := e.proj.Subscribe(8, func(controller.Observation) { panic("subscriber bug") })

	for i := 0; i < 3; i++ {
		_, err := e.invoke("bash", `{"command":"ls","token":"s3cr3t"}`)
		require.NoError(t, err)
	}
	close(block)
	cancelSlow()
	cancelPanic()
	cancel()
	recs := e.records()
	require.Len(t, seen, len(recs), "every committed record is announced once")
	for i, o := range seen {
		require.Equal(t, recs[i].RecordID.String(), o.RecordID)
		require.Equal(t, recs[i].ChainHash, o.ChainHash)
		require.Equal(t, string(recs[i].RecordType), o.RecordType)
		require.Equal(t, e.snap.Version(), o.PolicyVersion)
		out, _ := json.Marshal(o)
		require.NotContains(t, string(out), "s3cr3t")
	}
	require.Positive(t, e.proj.Dropped(), "the slow subscriber lost observations instead of blocking")
	e.requireVerifies()
}

// A watcher is told only of the records it picks, while a plain
// subscriber on the same projector is still told of every one.
func TestObservationProjector_WatchPicksRecords(t *testing.T) {
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))})
	var mu sync.Mutex
	var picked, all []controller.Observation
	var asked int
	cancelWatch := e.proj.Watch(func(r governance.EvidenceRecord) bool {
		mu.Lock()
		asked++
		mu.Unlock()
		return r.RecordType == governance.CallableCompleted
	}, 64, func(o controller.Observation) {
		mu.Lock()
		picked = append(picked, o)
		mu.Unlock()
	})
	cancelAll := e.proj.Subscribe(64, func(o controller.Observation) {
		mu.Lock()
		all = append(all, o)
		mu.Unlock()
	})
	for i := 0; i < 2; i++ {
		_, err := e.invoke("bash", `{"command":"ls"}`)
		require.NoError(t, err)
	}
	cancelWatch()
	cancelAll()
	recs := e.records()
	require.Equal(t, len(recs), asked, "the watcher is asked about every committed record")
	require.Len(t, all, len(recs))
	var want []string
	for _, r := range recs {
		if r.RecordType == governance.CallableCompleted {
			want = append(want, r.RecordID.String())
		}
	}
	require.Len(t, want, 2)
	var got []string
	for _, o := range picked {
		require.Equal(t, string(governance.CallableCompleted), o.RecordType)
		got = append(got, o.RecordID)
	}
	require.Equal(t, want, got)
}

// downPolicies is a policy store whose database went away: Get fails with
// governance.ErrStoreUnavailable once down is set.
type downPolicies struct {
	policy.Store
	down *atomic.Bool
}

func (p downPolicies) Get(ctx context.Context, id uuid.UUID, version string) (governance.PolicySnapshot, error) {
	if p.down.Load() {
		return governance.PolicySnapshot{}, fmt.Errorf("pgstore: read %s@%s: %w: connection refused", id, version, governance.ErrStoreUnavailable)
	}
	return p.Store.Get(ctx, id, version)
}

// A policy lookup the store could not answer decided nothing: the call
// fails with GovernanceEvidenceError (not a policy.invalid denial), the
// callable is not reached and nothing is recorded.
func TestInvoke_PolicyStoreUnavailableIsNotADenial(t *testing.T) {
	var down atomic.Bool
	e := newEnv(t, []binding{hard("g", answer(abi.DecisionAllow, "ok"))}, func(c *controller.Config) {
		c.Policies = downPolicies{Store: c.Policies, down: &down}
	})
	down.Store(true)
	_, err := e.invoke("bash", `{"command":"ls"}`)
	var ge *governance.GovernanceEvidenceError
	require.ErrorAs(t, err, &ge)
	require.False(t, ge.CallExecuted)
	require.ErrorIs(t, err, governance.ErrStoreUnavailable)
	var de *governance.GovernanceDeniedError
	require.False(t, errors.As(err, &de), "an outage is not a denial")
	require.Zero(t, e.calls.Load(), "callable not reached")
	require.Empty(t, e.records(), "nothing decided, nothing recorded")

	down.Store(false)
	_, err = e.invoke("bash", `{"command":"ls"}`)
	require.NoError(t, err, "the next call works once the store is back")
}
