package certify

import (
	"fmt"

	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/governance"
)

// Consistency is govhost's checkpoint.Proof: the proof lines are the
// chain's records from oldSize to size (govhost chain export's format, one
// a line), and they must be that chain's records at those sequences, each
// intact (payload digest and chain hash recompute), the first linked to
// oldHead (or the first of the chain, for oldSize 0), each to the one
// before, the last ending at head.
func Consistency(origin string, oldSize int64, oldHead string, size int64, head string, proof [][]byte) error {
	want := checkpoint.Checkpoint{Origin: origin}
	chain, ok := want.Chain()
	if !ok {
		return fmt.Errorf("origin %q names no chain", origin)
	}
	if int64(len(proof)) != size-oldSize {
		return fmt.Errorf("%d proof records, from size %d to %d needs %d", len(proof), oldSize, size, size-oldSize)
	}
	prev := oldHead
	for i, line := range proof {
		if len(line) > 1<<20 {
			return fmt.Errorf("proof record %d is longer than a chain line may be", i+1)
		}
		r, err := governance.ParseRecordJSON(line)
		if err != nil {
			return fmt.Errorf("proof record %d: %w", i+1, err)
		}
		seq := oldSize + int64(i)
		switch {
		case r.ChainID != chain:
			return fmt.Errorf("proof record %d is of chain %s, not %s", i+1, r.ChainID, chain)
		case r.Sequence != seq:
			return fmt.Errorf("proof record %d has sequence %d, want %d", i+1, r.Sequence, seq)
		case r.PreviousChainHash != prev:
			return fmt.Errorf("proof record %d (sequence %d) does not link to %q: the chain forked or was rewritten", i+1, seq, prev)
		}
		if err := r.CheckIntegrity(); err != nil {
			return fmt.Errorf("proof record %d: %w", i+1, err)
		}
		prev = r.ChainHash
	}
	if prev != head {
		return fmt.Errorf("the proof ends at %s, the checkpoint's head is %s", prev, head)
	}
	return nil
}

// ProofFrom returns the consistency proof lines of a bundle's chain from
// old up to its end.
func ProofFrom(recs []governance.EvidenceRecord, old int64) ([][]byte, error) {
	if old < 0 || old > int64(len(recs)) {
		return nil, fmt.Errorf("certify: the witness holds size %d, the bundle's chain has %d records: a rollback", old, len(recs))
	}
	out := make([][]byte, 0, int64(len(recs))-old)
	for _, r := range recs[old:] {
		line, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, nil
}
