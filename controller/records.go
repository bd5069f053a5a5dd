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
	free  []*chainLock
}

type chainLock struct {
	sync.Mutex
	users int
}

// lock takes chain's lock; the caller passes the result to unlock. A lock
// lives in the map only while someone holds or waits for it, and returns
// to a free list after, so a governed call allocates no lock.
func (c *chainLocks) lock(chain uuid.UUID) *chainLock {
	c.mu.Lock()
	if c.locks == nil {
		c.locks = map[uuid.UUID]*chainLock{}
	}
	l := c.locks[chain]
	if l == nil {
		if n := len(c.free); n > 0 {
			l, c.free = c.free[n-1], c.free[:n-1]
		} else {
			l = &chainLock{}
		}
		c.locks[chain] = l
	}
	l.users++
	c.mu.Unlock()
	l.Lock()
	return l
}

func (c *chainLocks) unlock(chain uuid.UUID, l *chainLock) {
	l.Unlock()
	c.mu.Lock()
	if l.users--; l.users == 0 {
		delete(c.locks, chain)
		if len(c.free) < maxFreeChainLocks {
			c.free = append(c.free, l)
		}
	}
	c.mu.Unlock()
}

// maxFreeChainLocks bounds the free list at about the number of chains
// appending at once.
const maxFreeChainLocks = 256

// recordSpec is one record to append: its type, operation and approved
// payload. Everything else comes from the chain and the pin.
type recordSpec struct {
	typ       governance.EvidenceType
	operation uuid.NullUUID
	// payload is a *governance.Fields on the hot path, or a
	// map[string]any: both encode canonically alike. A *governance.Fields
	// is released (reused by the next payload) once applyRecords has
	// encoded it, whatever the outcome: a spec is appended once.
	payload any
	// supersedes is set on RECORD_SUPERSEDED only.
	supersedes uuid.NullUUID
}

// appendRecords builds and appends specs, in order and atomically when the
// store can, on chain under its lock, then projects what was committed:
// first pending, the records applied unsynced before on this chain that
// this synced append makes durable, then its own. The records are written
// into into's storage when it has room (an operation's buffer), otherwise
// into a new slice.
func (c *InvocationController) appendRecords(ctx context.Context, chain, policyID uuid.UUID, version string, into, pending []governance.EvidenceRecord, specs ...recordSpec) ([]governance.EvidenceRecord, error) {
	recs, err := c.applyRecords(ctx, chain, policyID, version, false, into, specs)
	if err != nil {
		return nil, err
	}
	c.project(pending)
	c.project(recs)
	return recs, nil
}

// appendRecordsUnsynced applies specs like appendRecords without waiting
// for durability when the store is an evidence.UnsyncedAppender, and then
// projects nothing: the caller passes the records as pending to its next
// (synced) appendRecords on the chain. It reports whether the records wait
// for that; otherwise they are durable and projected already.
func (c *InvocationController) appendRecordsUnsynced(ctx context.Context, chain, policyID uuid.UUID, version string, specs []recordSpec) (recs []governance.EvidenceRecord, unsynced bool, err error) {
	if _, ok := c.cfg.Evidence.(evidence.UnsyncedAppender); !ok {
		recs, err = c.appendRecords(ctx, chain, policyID, version, nil, nil, specs...)
		return recs, false, err
	}
	recs, err = c.applyRecords(ctx, chain, policyID, version, true, nil, specs)
	return recs, err == nil, err
}

// applyRecords builds the records of specs on the chain's head and appends
// them under the chain's lock (into appendRecords' into); unsynced asks an
// UnsyncedAppender for no sync.
func (c *InvocationController) applyRecords(ctx context.Context, chain, policyID uuid.UUID, version string, unsynced bool, into []governance.EvidenceRecord, specs []recordSpec) ([]governance.EvidenceRecord, error) {
	defer releasePayloads(specs)
	l := c.locks.lock(chain)
	defer c.locks.unlock(chain, l)
	head, err := c.cfg.Evidence.Head(ctx, chain)
	if err != nil {
		return nil, err
	}
	var small [8]governance.RecordSpec
	batch := small[:0]
	now := c.now()
	for _, s := range specs {
		batch = append(batch, governance.RecordSpec{
			Type: s.typ, ChainID: chain, OperationID: s.operation,
			PolicyID: policyID, PolicyVersion: version, Payload: s.payload, CreatedAt: now,
			SupersedesRecordID: s.supersedes,
		})
	}
	// One pass over one buffer for the whole batch (governance.SealRecords),
	// which the store's integrity check reads again instead of re-encoding
	// (evidence.AppendSealed).
	sealed, err := governance.SealRecordsInto(into, head, batch)
	if err != nil {
		return nil, err
	}
	defer sealed.Release()
	recs := sealed.Records()
	if unsynced {
		return recs, c.cfg.Evidence.(evidence.UnsyncedAppender).AppendBatchUnsynced(ctx, recs)
	}
	_, err = evidence.AppendSealed(ctx, c.cfg.Evidence, sealed)
	return recs, err
}

// releasePayloads hands the specs' *governance.Fields payloads back for
// reuse.
func releasePayloads(specs []recordSpec) {
	for i := range specs {
		if f, ok := specs[i].payload.(*governance.Fields); ok {
			f.Release()
			specs[i].payload = nil
		}
	}
}

func (c *InvocationController) project(recs []governance.EvidenceRecord) {
	for _, r := range recs {
		c.cfg.Projector.Project(r)
	}
}
