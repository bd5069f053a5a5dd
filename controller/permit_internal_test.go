package controller

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestPermitBook_KeepsNothingOfACompletedOperation: once a permit is
// completed, the book still refuses it again (ErrPermitUsed, naming its
// operation) until usedRetention has passed, but no longer holds its
// operation (and what that holds: its records, its arguments), which a
// server would otherwise keep for two minutes after every call.
func TestPermitBook_KeepsNothingOfACompletedOperation(t *testing.T) {
	var b permitBook
	task, now := uuid.New(), time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC)
	op := &operation{}
	op.permit = issued{Permit: Permit{ID: "p1", OperationID: uuid.New(), TaskBoundaryID: task, IssuedAt: now}, op: op}
	opID := op.permit.OperationID
	b.add(&op.permit, time.Minute)
	held := weak.Make(op)

	taken, err := b.take("p1", task, now)
	require.NoError(t, err)
	require.True(t, taken == &op.permit)
	op, taken = nil, nil // the test's own references go
	runtime.GC()
	require.True(t, held.Value() == nil, "the book keeps nothing of the completed permit's operation")

	_, err = b.take("p1", task, now.Add(time.Second))
	require.ErrorIs(t, err, ErrPermitUsed)
	require.ErrorContains(t, err, opID.String())

	// The next sweep past usedRetention forgets it.
	later := now.Add(usedRetention + 2*time.Second)
	b.add(&issued{Permit: Permit{ID: "p2", TaskBoundaryID: task, IssuedAt: later}}, time.Minute)
	_, err = b.take("p1", task, later)
	require.ErrorIs(t, err, ErrPermitUnknown)
	p2, err := b.take("p2", task, later)
	require.NoError(t, err)
	require.Equal(t, "p2", p2.ID)
}
