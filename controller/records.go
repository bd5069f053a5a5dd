package controller

import (
	"context"
	"sync"

	"github.com/google/uuid"

	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// chainLocks hands out one append lock per chain: head lookup, record
// construction and append run under it; gates and callables never do.
type chainLocks struct {
	mu    sync.Mutex
	locks map[uuid.UUID]*chainLock
}

type chainLock struct {
	sync.Mutex
	users int
}

func (c *chainLocks) lock(chain uuid.UUID) func() {
	c.mu.Lock()
	if c.locks == nil {
		c.locks = map[uuid.UUID]*chainLock{}
	}
	l := c.locks[chain]
	if l == nil {
		l = &chainLock{}
		c.locks[chain] = l
	}
	l.users++
	c.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		c.mu.Lock()
		if l.users--; l.users == 0 {
			delete(c.locks, chain)
		}
		c.mu.Unlock()
	}
}

// recordSpec is one record to append: its type, operation and approved
// payload. Everything else comes from the chain and the pin.
type recordSpec struct {
	typ       governance.EvidenceType
	operation uuid.NullUUID
	payload   map[string]any
}

// appendRecords builds and appends specs, in order and atomically when the
// store can, on chain under its lock, then projects what was committed.
func (c *InvocationController) appendRecords(ctx context.Context, chain, policyID uuid.UUID, version string, specs ...recordSpec) ([]governance.EvidenceRecord, error) {
	unlock := c.locks.lock(chain)
	head, err := c.cfg.Evidence.Head(ctx, chain)
	if err != nil {
		unlock()
		return nil, err
	}
	recs := make([]governance.EvidenceRecord, 0, len(specs))
	now := c.now()
	for _, s := range specs {
		r, err := governance.NextRecord(head, governance.RecordSpec{
			Type: s.typ, ChainID: chain, OperationID: s.operation,
			PolicyID: policyID, PolicyVersion: version, Payload: s.payload, CreatedAt: now,
		})
		if err != nil {
			unlock()
			return nil, err
		}
		recs = append(recs, r)
		head = r.Head()
	}
	_, err = evidence.AppendAll(ctx, c.cfg.Evidence, recs)
	unlock()
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		c.cfg.Projector.Project(r)
	}
	return recs, nil
}
