package governance

import (
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// nextRecordReference is NextRecord as it was before NextRecords (one
// record at a time: canonical payload through AppendCanonical, digests and
// chain hash through their own helpers, each text a string of its own),
// kept as the reference the batch builder is fuzzed against.
func nextRecordReference(head ChainHead, spec RecordSpec) (EvidenceRecord, error) {
	payload := spec.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	text, err := Canonical(payload)
	if err != nil {
		return EvidenceRecord{}, err
	}
	if len(text) == 0 || text[0] != '{' {
		return EvidenceRecord{}, &ValidationError{Field: "payload", Reason: "must be an object"}
	}
	r := EvidenceRecord{
		RecordID: spec.RecordID, RecordType: spec.Type, ChainID: spec.ChainID, OperationID: spec.OperationID,
		Sequence: head.Sequence + 1, PolicyID: spec.PolicyID, PolicyVersion: spec.PolicyVersion,
		PayloadJSON: string(text), PayloadDigest: SHA256Hex(text), PreviousChainHash: head.Hash,
		SupersedesRecordID: spec.SupersedesRecordID, CreatedAt: spec.CreatedAt.UTC().Truncate(time.Microsecond),
		HashAlgorithm: HashAlgorithm,
	}
	if head.IsEmpty() {
		r.Sequence, r.PreviousChainHash = 0, ""
	}
	input, err := chainInputReference(r)
	if err != nil {
		return EvidenceRecord{}, err
	}
	r.ChainHash = SHA256Hex(input)
	if err := r.validateFields(); err != nil {
		return EvidenceRecord{}, err
	}
	return r, checkOptionalDigest("previous_chain_hash", r.PreviousChainHash)
}

// chainInputReference is the chain input through the generic encoder: the
// canonical JSON of the thirteen hashed fields as a map.
func chainInputReference(r EvidenceRecord) ([]byte, error) {
	fields := map[string]any{
		"record_id": r.RecordID, "record_type": r.RecordType, "chain_id": r.ChainID,
		"operation_id": r.OperationID, "sequence": r.Sequence, "policy_id": r.PolicyID,
		"policy_version": r.PolicyVersion, "payload_json": r.PayloadJSON, "payload_digest": r.PayloadDigest,
		"previous_chain_hash": nil, "supersedes_record_id": r.SupersedesRecordID,
		"created_at": r.CreatedAt, "hash_algorithm": r.HashAlgorithm,
	}
	if r.PreviousChainHash != "" {
		fields["previous_chain_hash"] = r.PreviousChainHash
	}
	return Canonical(fields)
}

// FuzzNextRecords_SameAsTheReference builds a batch of records from fuzzed
// texts (payload strings with quotes, escapes, controls and non-ASCII,
// policy versions, payload sizes) with NextRecords and one at a time with
// the reference: the same records, the same errors, and each passes the
// store's integrity check.
func FuzzNextRecords_SameAsTheReference(f *testing.F) {
	f.Add("ls -la src", "v1", uint8(3), int64(-1))
	f.Add("\"quoted\" \\ back\nslash\t\x01\u00e9\u2028", "2026-01 \"rc\"", uint8(6), int64(41))
	f.Add("", "", uint8(1), int64(0))
	f.Add("\xff", "v", uint8(2), int64(-1))
	f.Add("x", "\xfe", uint8(2), int64(7))
	f.Fuzz(func(t *testing.T, text, version string, n uint8, headSeq int64) {
		n = n%8 + 1
		if headSeq < -1 {
			headSeq = -1
		}
		head := EmptyHead
		if headSeq >= 0 {
			head = ChainHead{Sequence: headSeq, Hash: SHA256Hex([]byte(text))}
		}
		chain, policy := uuid.NewSHA1(uuid.Nil, []byte(text)), uuid.NewSHA1(uuid.Nil, []byte(version))
		created := time.Date(2026, 12, 5, 23, 0, 0, 123456789, time.UTC)
		specs := make([]RecordSpec, n)
		for i := range specs {
			p := NewFields(4).String("tool_id", text).Int("i", int64(i)).String("v"+strconv.Itoa(i), text[:len(text)*i/int(n)])
			if i%2 == 1 {
				p.Value("fields", []string{text, version})
			}
			specs[i] = RecordSpec{
				RecordID: uuid.NewSHA1(chain, []byte{byte(i)}), Type: GateEvaluated, ChainID: chain,
				OperationID: uuid.NullUUID{UUID: policy, Valid: i%3 != 0}, PolicyID: policy, PolicyVersion: version,
				Payload: p, CreatedAt: created.Add(time.Duration(i) * time.Microsecond),
			}
		}
		var want []EvidenceRecord
		var wantErr error
		h := head
		for _, s := range specs {
			r, err := nextRecordReference(h, s)
			if err != nil {
				wantErr = err
				break
			}
			want = append(want, r)
			h = r.Head()
		}
		got, err := NextRecords(head, specs)
		sealed, sealErr := SealRecords(head, specs)
		require.Equal(t, err, sealErr)
		if sealErr == nil {
			require.Equal(t, got, sealed.Records())
			require.NoError(t, sealed.CheckIntegrity())
			sealed.Release()
		}
		if wantErr != nil {
			// The reference names a chain input field by its map path
			// ($["policy_version"]), the hand-written input by its name.
			require.Error(t, err)
			require.Equal(t, errors.Is(wantErr, ErrNotCanonical), errors.Is(err, ErrNotCanonical), "%v vs %v", wantErr, err)
			require.Equal(t, strings.ReplaceAll(strings.ReplaceAll(wantErr.Error(), `$["`, ""), `"]`, ""), strings.ReplaceAll(strings.ReplaceAll(err.Error(), `$["`, ""), `"]`, ""))
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
		for _, r := range got {
			require.NoError(t, r.CheckIntegrity())
			require.Len(t, r.ChainHash, 2*sha256.Size)
		}
	})
}

// FuzzSealedBatch_ChecksAsEveryRecord changes one field of one record of
// a sealed batch (or none) and requires the batch's integrity check to
// answer exactly as the records' own checks, in order: the sealed
// shortcut never accepts a record the full check refuses, and refuses
// with the full check's error.
func FuzzSealedBatch_ChecksAsEveryRecord(f *testing.F) {
	f.Add("ls -la src", uint8(3), uint8(0), uint8(0), "x")
	f.Add("a \"b\"", uint8(5), uint8(2), uint8(1), `{"a":1}`)
	f.Add("t", uint8(4), uint8(3), uint8(2), "0000000000000000000000000000000000000000000000000000000000000000")
	f.Add("t", uint8(4), uint8(1), uint8(7), "\xff")
	f.Fuzz(func(t *testing.T, text string, n, which, field uint8, value string) {
		n = n%6 + 1
		chain := uuid.NewSHA1(uuid.Nil, []byte(text))
		specs := make([]RecordSpec, n)
		for i := range specs {
			specs[i] = RecordSpec{
				Type: GateEvaluated, ChainID: chain, OperationID: uuid.NullUUID{UUID: chain, Valid: true},
				PolicyID: chain, PolicyVersion: "v1", Payload: NewFields(2).String("tool_id", text).Int("i", int64(i)),
				CreatedAt: time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC),
			}
		}
		b, err := SealRecords(EmptyHead, specs)
		if err != nil {
			return
		}
		defer b.Release()
		recs := b.Records()
		r := &recs[int(which)%len(recs)]
		switch field % 9 {
		case 1:
			r.PayloadJSON = value
		case 2:
			r.PayloadJSON = strings.Clone(r.PayloadJSON) // equal text, another string
		case 3:
			r.PayloadDigest = value
		case 4:
			r.ChainHash = value
		case 5:
			r.PreviousChainHash = value
		case 6:
			r.PolicyVersion = value
		case 7:
			r.RecordType = EvidenceType(value)
		case 8:
			r.Sequence += int64(len(value))
		}
		var want error
		for _, r := range recs {
			if want = r.CheckIntegrity(); want != nil {
				break
			}
		}
		require.Equal(t, want, b.CheckIntegrity())
	})
}
