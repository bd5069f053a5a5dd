package storetest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Harness tells the suite how to make and, for the tamper cases, corrupt a
// backend. Tamper cases are skipped when Rewrite or Delete is nil.
type Harness struct {
	// New returns an empty store. The suite does not close it; register
	// cleanup with t.Cleanup.
	New func(t *testing.T) evidence.Store

	// Rewrite replaces the stored record at sequence seq of chain with the
	// record mutate leaves, bypassing every check (on disk for a durable
	// backend: encode it as the backend would and overwrite the value).
	Rewrite func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64, mutate func(*governance.EvidenceRecord))

	// Delete removes the stored record at sequence seq of chain, bypassing
	// every check; later records keep their keys.
	Delete func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64)
}
