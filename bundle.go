package govhost

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// ErrNoTask: no chain of the data directory holds the task's TASK_CLOSED
// (unknown or still open).
var ErrNoTask = errors.New("govhost: no closed task with this id in the data directory")

// Keyring returns the engine's checkpoint signing keys (see OpenKeyring).
func (e *Engine) Keyring() (*checkpoint.Keyring, error) { return OpenKeyring(e.dir) }

// OpenKeyring opens the checkpoint signing keys of a data directory
// (<dir>/keys), creating the first key on first use, without opening its
// stores.
func OpenKeyring(dir string) (*checkpoint.Keyring, error) {
	if dir == "" {
		dir = DefaultDir
	}
	return checkpoint.OpenKeyring(filepath.Join(dir, "keys"))
}

// TaskChain finds the chain of a closed task: the chain whose records hold
// the task's TASK_CLOSED.
func (e *Engine) TaskChain(ctx context.Context, task uuid.UUID) (uuid.UUID, error) {
	lister, ok := e.Evidence.(evidence.ChainLister)
	if !ok {
		return uuid.Nil, fmt.Errorf("govhost: the evidence store (%T) cannot list its chains", e.Evidence)
	}
	after := uuid.Nil
	for {
		chains, err := lister.Chains(ctx, after, 256)
		if err != nil {
			return uuid.Nil, err
		}
		for _, chain := range chains {
			if _, ok, err := closedTask(ctx, e.Evidence, chain, task); err != nil {
				return uuid.Nil, err
			} else if ok {
				return chain, nil
			}
		}
		if len(chains) < 256 {
			return uuid.Nil, ErrNoTask
		}
		after = chains[len(chains)-1]
	}
}

// closedTask returns the boundary a chain's TASK_CLOSED of task records.
func closedTask(ctx context.Context, store evidence.Store, chain, task uuid.UUID) (governance.ClosedTaskBoundary, bool, error) {
	b, ok, err := closedBoundary(ctx, store, chain)
	if err != nil || !ok || b.TaskBoundaryID != task {
		return governance.ClosedTaskBoundary{}, false, err
	}
	return b, true, nil
}

// closedBoundary returns the boundary the chain's TASK_CLOSED records, if
// the chain is closed. Only corrections may follow a TASK_CLOSED, so it is
// among the last records: read backwards from the head.
func closedBoundary(ctx context.Context, store evidence.Store, chain uuid.UUID) (governance.ClosedTaskBoundary, bool, error) {
	head, err := store.Head(ctx, chain)
	if err != nil || head.IsEmpty() {
		return governance.ClosedTaskBoundary{}, false, err
	}
	for from := head.Sequence - 1; ; from -= 16 {
		recs, err := store.Read(ctx, chain, from)
		if err != nil {
			return governance.ClosedTaskBoundary{}, false, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			r := recs[i]
			if r.RecordType == governance.TaskClosed {
				b, err := boundaryOfRecord(r)
				if err != nil {
					return governance.ClosedTaskBoundary{}, false, nil
				}
				return b, true, nil
			}
			if r.RecordType != governance.RecordSuperseded {
				return governance.ClosedTaskBoundary{}, false, nil
			}
		}
		if from < 0 {
			return governance.ClosedTaskBoundary{}, false, nil
		}
	}
}

func boundaryOfRecord(r governance.EvidenceRecord) (governance.ClosedTaskBoundary, error) {
	v, err := governance.ParseJSON([]byte(r.PayloadJSON))
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	p, _ := v.(map[string]any)
	str := func(k string) string { s, _ := p[k].(string); return s }
	id, err := governance.ParseCanonicalUUID("task_boundary_id", str("task_boundary_id"))
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	opened, err := governance.ParseTime("opened_at", str("opened_at"))
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	closed, err := governance.ParseTime("closed_at", str("closed_at"))
	if err != nil {
		return governance.ClosedTaskBoundary{}, err
	}
	return governance.NewClosedTaskBoundary(governance.ClosedTaskBoundary{
		TaskBoundaryID: id, ChainID: r.ChainID, PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion,
		OpenedAt: opened, ClosedAt: closed,
	})
}

// SignCheckpoint signs the checkpoint of a chain's current head with the
// data directory's key and appends it to the engine's checkpoint log.
func (e *Engine) SignCheckpoint(ctx context.Context, chain uuid.UUID) ([]byte, error) {
	head, err := e.Evidence.Head(ctx, chain)
	if err != nil {
		return nil, err
	}
	if head.IsEmpty() {
		return nil, fmt.Errorf("govhost: chain %s has no records", chain)
	}
	note, err := e.signHead(chain, head)
	if err != nil {
		return nil, err
	}
	return note, e.appendCheckpoint(note)
}

func (e *Engine) signHead(chain uuid.UUID, head governance.ChainHead) ([]byte, error) {
	kr, err := e.Keyring()
	if err != nil {
		return nil, err
	}
	signer, err := kr.Signer()
	if err != nil {
		return nil, err
	}
	return checkpoint.Sign(checkpoint.For(chain, head.Sequence+1, head.Hash), signer)
}

// Bundle returns the certificate bundle of a closed task at its chain's
// current head: the chain, the exact policy snapshot, and a checkpoint of
// the head signed with the data directory's key. The bundle kept when the
// task closed is returned as it is while the chain has not grown; after a
// correction a new certificate is minted, signed, logged and kept. A task
// that cannot be certified is refused with the issuer's
// *governance.CertificateError.
func (e *Engine) Bundle(ctx context.Context, task uuid.UUID) (certify.Bundle, error) {
	var chain uuid.UUID
	// The kept bundle names the chain: no scan of every chain.
	if kept, err := certify.ReadBundle(certify.PartsOf(e.keptDir(task))); err == nil && len(kept.Records) > 0 {
		chain = kept.Records[0].ChainID
	} else if chain, err = e.TaskChain(ctx, task); err != nil {
		return certify.Bundle{}, err
	}
	boundary, ok, err := closedTask(ctx, e.Evidence, chain, task)
	if err == nil && !ok { // a kept bundle naming another chain: find the task's own
		if chain, err = e.TaskChain(ctx, task); err == nil {
			boundary, _, err = closedTask(ctx, e.Evidence, chain, task)
		}
	}
	if err != nil {
		return certify.Bundle{}, err
	}
	return e.bundleOf(ctx, chain, boundary)
}
