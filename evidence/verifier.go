package evidence

import (
	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Verifier checks a chain one record at a time, so a backend can stream
// records from disk with bounded memory. Feed records in stored order with
// Add until it returns false, then call Result.
//
// Rules (ADR-0087 D3), applied to each record in this order, stopping at the
// first failure:
//   - hash_algorithm other than sha256-v1: UNSUPPORTED_ALGORITHM;
//   - a sequence other than the record's position (nonzero first sequence,
//     gap, repeat) or a previous hash other than the last verified hash:
//     BROKEN_LINK;
//   - payload digest or chain hash not reproducible: CONTENT_MISMATCH.
//
// Then an empty chain, or a last hash other than the expected head, is
// BROKEN_LINK.
type Verifier struct {
	head    governance.ChainHead
	checked int64
	lastID  uuid.NullUUID
	failure governance.VerificationFailureCode
	failed  uuid.NullUUID
}

// NewVerifier returns a verifier for a chain starting from its genesis.
func NewVerifier() *Verifier { return &Verifier{head: governance.EmptyHead} }

// Add checks the next record and reports whether verification may go on.
func (v *Verifier) Add(r governance.EvidenceRecord) bool {
	if v.failure != "" {
		return false
	}
	if code := v.check(r); code != "" {
		v.failure = code
		v.failed = uuid.NullUUID{UUID: r.RecordID, Valid: true}
		return false
	}
	v.head = r.Head()
	v.checked++
	v.lastID = uuid.NullUUID{UUID: r.RecordID, Valid: true}
	return true
}

func (v *Verifier) check(r governance.EvidenceRecord) governance.VerificationFailureCode {
	if r.HashAlgorithm != governance.HashAlgorithm {
		return governance.UnsupportedAlgorithm
	}
	if r.Sequence != v.head.Sequence+1 || r.PreviousChainHash != v.head.Hash {
		return governance.BrokenLink
	}
	if payloadOK, chainOK := r.DigestsMatch(); !payloadOK || !chainOK {
		return governance.ContentMismatch
	}
	return ""
}

// Result returns the verification result against the trusted expected head.
func (v *Verifier) Result(expectedHead string) governance.VerificationResult {
	res := governance.VerificationResult{CheckedRecords: v.checked, VerifiedHead: v.head.Hash}
	switch {
	case v.failure != "":
		res.FailureCode, res.FailedRecordID = v.failure, v.failed
	case v.checked == 0:
		res.FailureCode = governance.BrokenLink
	case v.head.Hash != expectedHead:
		// Every record verified, but the chain does not end where the trusted
		// head says: truncated, extended or swapped. The last record is the
		// one that does not match.
		res.FailureCode, res.FailedRecordID = governance.BrokenLink, v.lastID
	default:
		res.Valid = true
	}
	return res
}

// VerifyRecords verifies a whole chain held in memory.
func VerifyRecords(records []governance.EvidenceRecord, expectedHead string) governance.VerificationResult {
	v := NewVerifier()
	for _, r := range records {
		if !v.Add(r) {
			break
		}
	}
	return v.Result(expectedHead)
}
