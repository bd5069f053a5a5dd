package evidence_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/storetest"
	"github.com/govhost/govhost/governance"
)

func TestMemStore_Conformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(t *testing.T) evidence.Store { return evidence.NewMemStore() },
		Rewrite: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64, mutate func(*governance.EvidenceRecord)) {
			evidence.TamperMem(s.(*evidence.MemStore), chain, int(seq), mutate)
		},
		Delete: func(t *testing.T, s evidence.Store, chain uuid.UUID, seq int64) {
			evidence.RemoveMem(s.(*evidence.MemStore), chain, int(seq))
		},
	})
}

func TestMemStore_Chains(t *testing.T) {
	storetest.RunChainLister(t, storetest.Harness{New: func(t *testing.T) evidence.Store { return evidence.NewMemStore() }})
}
