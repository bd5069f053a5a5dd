package governance

import (
	"encoding/json"

	"github.com/google/uuid"
)

// AppendReceipt acknowledges a committed record: once returned, the record
// is part of the chain and HeadHash is the chain's new head.
type AppendReceipt struct {
	ChainID  uuid.UUID `json:"chain_id"`
	RecordID uuid.UUID `json:"record_id"`
	Sequence int64     `json:"sequence"`
	HeadHash string    `json:"head_hash"`
}

// ReceiptFor returns the receipt of r once committed.
func ReceiptFor(r EvidenceRecord) AppendReceipt {
	return AppendReceipt{ChainID: r.ChainID, RecordID: r.RecordID, Sequence: r.Sequence, HeadHash: r.ChainHash}
}

// VerificationResult is the outcome of verifying a chain against a trusted
// expected head (ADR-0087 D3). CheckedRecords counts records fully verified
// before the failure (the whole chain on success); VerifiedHead is the last
// verified chain hash, "" (null) when the first record fails.
type VerificationResult struct {
	Valid          bool
	VerifiedHead   string
	CheckedRecords int64
	FailureCode    VerificationFailureCode
	FailedRecordID uuid.NullUUID
}

type verificationJSON struct {
	Valid          bool                     `json:"valid"`
	VerifiedHead   *string                  `json:"verified_head"`
	CheckedRecords int64                    `json:"checked_records"`
	FailureCode    *VerificationFailureCode `json:"failure_code"`
	FailedRecordID uuid.NullUUID            `json:"failed_record_id"`
}

// MarshalJSON writes absent values as null, in ADR-0087's field order.
func (v VerificationResult) MarshalJSON() ([]byte, error) {
	w := verificationJSON{Valid: v.Valid, CheckedRecords: v.CheckedRecords, FailedRecordID: v.FailedRecordID}
	if v.VerifiedHead != "" {
		h := v.VerifiedHead
		w.VerifiedHead = &h
	}
	if v.FailureCode != "" {
		c := v.FailureCode
		w.FailureCode = &c
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (v *VerificationResult) UnmarshalJSON(b []byte) error {
	var w verificationJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	out := VerificationResult{Valid: w.Valid, CheckedRecords: w.CheckedRecords, FailedRecordID: w.FailedRecordID}
	if w.VerifiedHead != nil {
		if err := checkDigest("verified_head", *w.VerifiedHead); err != nil {
			return err
		}
		out.VerifiedHead = *w.VerifiedHead
	}
	if w.FailureCode != nil {
		out.FailureCode = *w.FailureCode
	}
	if out.CheckedRecords < 0 {
		return &ValidationError{Field: "checked_records", Reason: "must be >= 0"}
	}
	*v = out
	return nil
}
