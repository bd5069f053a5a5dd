package evidence

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Store is an append-only evidence store. Every method is safe for
// concurrent use. Returned slices belong to the caller.
type Store interface {
	// Append commits r if it is the next record of its chain: sequence 0 with
	// no previous hash for a missing chain, otherwise head.Sequence+1 with
	// PreviousChainHash equal to the head's hash. The store recomputes both
	// digests first. Invalid content is a *governance.EvidenceIntegrityError;
	// a wrong sequence, stale previous hash, duplicate record id or duplicate
	// chain hash is a *governance.EvidenceConflictError. On any error nothing
	// was appended. A returned receipt means the record is committed (and, for
	// a durable store, durable).
	Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error)

	// Read returns the chain's records with sequence > afterSequence in
	// ascending order; afterSequence -1 returns the whole chain. A missing
	// chain yields an empty slice, not an error.
	Read(ctx context.Context, chainID uuid.UUID, afterSequence int64) ([]governance.EvidenceRecord, error)

	// Head returns the chain's last sequence and hash, or
	// governance.EmptyHead for a missing chain.
	Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error)

	// Verify checks the chain against a trusted expected head, as Verifier
	// does, over one consistent view of the chain. An error is returned only
	// when the store could not read (I/O): tampering is a result, never an
	// error.
	Verify(ctx context.Context, chainID uuid.UUID, expectedHead string) (governance.VerificationResult, error)
}

// BatchAppender is an optional capability: append several consecutive
// records of one chain atomically (all or none). The controller uses it for
// POLICY_BOUND + OPERATION_STARTED.
type BatchAppender interface {
	AppendBatch(ctx context.Context, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error)
}

// UnsyncedAppender is an optional capability of a durable store: apply a
// batch now, in chain order, without waiting for it to be durable. The
// batch is visible to Head and to the next append at once, and becomes
// durable with the next synced append to the store, on any chain: the
// store's log is a prefix on recovery, so a crash before that loses the
// batch together with every later record of its chain, never one without
// the other. Checks and errors are AppendBatch's.
//
// The controller applies an operation's POLICY_BOUND + OPERATION_STARTED
// this way and its gate records synced: one WAL sync makes both durable
// before any verdict is acted on, instead of two.
type UnsyncedAppender interface {
	AppendBatchUnsynced(ctx context.Context, records []governance.EvidenceRecord) error
}

// SealedAppender is an optional capability: AppendBatch for a batch that
// governance.SealRecords built. The store's integrity check (step 1,
// CheckSealed) recomputes both hashes of every record as for any batch,
// but over the text the builder wrote for each record still as built
// (its payload and chain input) instead of scanning and encoding the
// record again. Results and errors are AppendBatch's, but for the
// receipts, which may be the batch's own (SealedBatch.Receipts): valid
// until the batch is released.
type SealedAppender interface {
	AppendSealed(ctx context.Context, b *governance.SealedBatch) ([]governance.AppendReceipt, error)
}

// AppendSealed appends a sealed batch's records atomically: through
// SealedAppender when s has it, otherwise as AppendAll does. The caller
// releases b after, and reads the receipts before.
func AppendSealed(ctx context.Context, s Store, b *governance.SealedBatch) ([]governance.AppendReceipt, error) {
	if sa, ok := s.(SealedAppender); ok {
		return sa.AppendSealed(ctx, b)
	}
	return AppendAll(ctx, s, b.Records())
}

// ErrBatchChains refuses a batch whose records are not all on one chain.
var ErrBatchChains = errors.New("evidence: a batch must hold records of one chain")

// AppendAll appends records in order, atomically when s is a BatchAppender.
// Otherwise it appends one by one and stops at the first error: the records
// before it stay committed.
func AppendAll(ctx context.Context, s Store, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	if b, ok := s.(BatchAppender); ok {
		return b.AppendBatch(ctx, records)
	}
	receipts := make([]governance.AppendReceipt, 0, len(records))
	for _, r := range records {
		rc, err := s.Append(ctx, r)
		if err != nil {
			return receipts, err
		}
		receipts = append(receipts, rc)
	}
	return receipts, nil
}

// ChainLister is an optional capability: list the chains a store holds, so
// that a tool can find them without being told their ids (a certificate
// bundle of every chain, an audit sweep).
type ChainLister interface {
	// Chains returns up to limit chain ids greater than after (uuid.Nil:
	// from the start), in ascending byte order. Fewer than limit means
	// there are no more.
	Chains(ctx context.Context, after uuid.UUID, limit int) ([]uuid.UUID, error)
}
