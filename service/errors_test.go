package service

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

// A conflict with another writer (another server on the same database)
// keeps its own code through the controller's GovernanceEvidenceError;
// every other evidence failure is unavailable.
func TestEvidenceFailure_ConflictHasItsOwnCode(t *testing.T) {
	conflict := &governance.GovernanceEvidenceError{OperationID: "op", Err: fmt.Errorf("append: %w",
		&governance.EvidenceConflictError{ChainID: "c", Kind: governance.ConflictSequence, Reason: "sequence 4, want 5"})}
	require.Equal(t, CodeEvidenceConflict, CodeOf(evidenceFailure(conflict)))
	down := &governance.GovernanceEvidenceError{OperationID: "op", Err: fmt.Errorf("pgstore: %w", governance.ErrStoreUnavailable)}
	require.Equal(t, CodeUnavailable, CodeOf(evidenceFailure(down)))
	require.Equal(t, CodeUnavailable, CodeOf(evidenceFailure(errors.New("disk full"))))
}
