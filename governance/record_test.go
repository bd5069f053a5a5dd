package governance_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost/governance"
)

func readChainVector(t testing.TB) ([]governance.EvidenceRecord, [][]byte) {
	t.Helper()
	f, err := os.Open("testdata/chain.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var recs []governance.EvidenceRecord
	var lines [][]byte
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r governance.EvidenceRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		recs = append(recs, r)
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	require.Len(t, recs, 6)
	return recs, lines
}

// TestEvidenceRecord_ChainVector recomputes every digest of the reference
// chain and rebuilds it with NextRecord.
func TestEvidenceRecord_ChainVector(t *testing.T) {
	recs, _ := readChainVector(t)
	head := governance.EmptyHead
	var specs []governance.RecordSpec
	for _, r := range recs {
		require.NoError(t, r.CheckIntegrity())
		require.Equal(t, r.PayloadDigest, r.ComputePayloadDigest())
		h, err := r.ComputeChainHash()
		require.NoError(t, err)
		require.Equal(t, r.ChainHash, h)

		payload, err := governance.ParseJSON([]byte(r.PayloadJSON))
		require.NoError(t, err)
		rebuilt, err := governance.NextRecord(head, governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: payload,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		})
		require.NoError(t, err)
		require.Equal(t, r, rebuilt)
		head = r.Head()
		specs = append(specs, governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: payload,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		})
	}
	// The whole chain as one sealed batch, the store's path: the same
	// records, and the batch's own integrity check passes.
	sealed, err := governance.SealRecords(governance.EmptyHead, specs)
	require.NoError(t, err)
	defer sealed.Release()
	require.Equal(t, recs, sealed.Records())
	require.NoError(t, sealed.CheckIntegrity())
}

// TestNextRecords_ChainVectorInOneBatch rebuilds the whole reference chain
// in one NextRecords batch (one buffer, one string): byte for byte the
// Python reference.
func TestNextRecords_ChainVectorInOneBatch(t *testing.T) {
	recs, _ := readChainVector(t)
	specs := make([]governance.RecordSpec, len(recs))
	for i, r := range recs {
		payload, err := governance.ParseJSON([]byte(r.PayloadJSON))
		require.NoError(t, err)
		specs[i] = governance.RecordSpec{
			RecordID: r.RecordID, Type: r.RecordType, ChainID: r.ChainID, OperationID: r.OperationID,
			PolicyID: r.PolicyID, PolicyVersion: r.PolicyVersion, Payload: payload,
			SupersedesRecordID: r.SupersedesRecordID, CreatedAt: r.CreatedAt,
		}
	}
	for split := range len(recs) {
		// Every split of the chain into a first record or batch and the rest.
		first, err := governance.NextRecords(governance.EmptyHead, specs[:split+1])
		require.NoError(t, err)
		rest, err := governance.NextRecords(first[len(first)-1].Head(), specs[split+1:])
		require.NoError(t, err)
		require.Equal(t, recs, append(first, rest...))
	}
	sealed, err := governance.SealRecords(governance.EmptyHead, specs)
	require.NoError(t, err)
	defer sealed.Release()
	require.Equal(t, recs, sealed.Records())
	require.NoError(t, sealed.CheckIntegrity())
}

// TestEvidenceRecord_ChainHashInputIsCanonical proves the hand-written hot
// path equals the generic canonical encoding of the thirteen fields.
func TestEvidenceRecord_ChainHashInputIsCanonical(t *testing.T) {
	recs, _ := readChainVector(t)
	for _, r := range recs {
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
		want, err := governance.Canonical(fields)
		require.NoError(t, err)
		got, err := r.ChainHashInput()
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	}
}

func TestEvidenceRecord_JSONRoundTrip(t *testing.T) {
	recs, lines := readChainVector(t)
	for i, r := range recs {
		out, err := json.Marshal(r)
		require.NoError(t, err)
		var back governance.EvidenceRecord
		require.NoError(t, json.Unmarshal(out, &back))
		require.Equal(t, r, back)
		// Same fields and values as the reference line (Python writes
		// non-ASCII escaped; the decoded values are what count).
		var a, b map[string]any
		require.NoError(t, json.Unmarshal(out, &a))
		require.NoError(t, json.Unmarshal(lines[i], &b))
		require.Equal(t, b, a)
	}
}

func TestEvidenceRecord_UnmarshalRefuses(t *testing.T) {
	recs, _ := readChainVector(t)
	base, err := json.Marshal(recs[1])
	require.NoError(t, err)
	mutate := func(f func(m map[string]any)) []byte {
		var m map[string]any
		require.NoError(t, json.Unmarshal(base, &m))
		f(m)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return out
	}
	cases := map[string]struct {
		in    []byte
		field string
	}{
		"hash not hex":       {mutate(func(m map[string]any) { m["chain_hash"] = "XYZ" }), "chain_hash"},
		"hash uppercase":     {mutate(func(m map[string]any) { m["payload_digest"] = strings.Repeat("AB", 32) }), "payload_digest"},
		"negative sequence":  {mutate(func(m map[string]any) { m["sequence"] = -1 }), "sequence"},
		"missing sequence":   {mutate(func(m map[string]any) { delete(m, "sequence") }), "sequence"},
		"unknown field":      {mutate(func(m map[string]any) { m["extra"] = 1 }), "record.extra"},
		"unknown type":       {mutate(func(m map[string]any) { m["record_type"] = "policy_changed" }), "record_type"},
		"naive time":         {mutate(func(m map[string]any) { m["created_at"] = "2026-11-29T12:00:00.505989" }), "created_at"},
		"nanosecond time":    {mutate(func(m map[string]any) { m["created_at"] = "2026-11-29T12:00:00.505989001Z" }), "created_at"},
		"empty previous":     {mutate(func(m map[string]any) { m["previous_chain_hash"] = "" }), "previous_chain_hash"},
		"float sequence":     {mutate(func(m map[string]any) { m["sequence"] = 1.5 }), "sequence"},
		"missing record id":  {mutate(func(m map[string]any) { delete(m, "record_id") }), "record_id"},
		"missing created_at": {mutate(func(m map[string]any) { delete(m, "created_at") }), "created_at"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			var r governance.EvidenceRecord
			err := json.Unmarshal(c.in, &r)
			var ve *governance.ValidationError
			require.ErrorAs(t, err, &ve, "got %v", err)
			require.ErrorIs(t, err, governance.ErrInvalid)
			require.Equal(t, c.field, ve.Field)
		})
	}
}

func TestNextRecord_Builds(t *testing.T) {
	chain, pid := uuid.New(), uuid.New()
	r0, err := governance.NextRecord(governance.EmptyHead, governance.RecordSpec{
		Type: governance.PolicyBound, ChainID: chain, PolicyID: pid, PolicyVersion: "v1",
		Payload: map[string]any{"digest": governance.SHA256Hex(nil)},
	})
	require.NoError(t, err)
	require.Equal(t, int64(0), r0.Sequence)
	require.Empty(t, r0.PreviousChainHash)
	require.NoError(t, r0.CheckIntegrity())
	require.Equal(t, time.UTC, r0.CreatedAt.Location())

	r1, err := governance.NextRecord(r0.Head(), governance.RecordSpec{Type: governance.TaskClosed, ChainID: chain, PolicyID: pid, PolicyVersion: "v1"})
	require.NoError(t, err)
	require.Equal(t, int64(1), r1.Sequence)
	require.Equal(t, r0.ChainHash, r1.PreviousChainHash)
	require.Equal(t, "{}", r1.PayloadJSON)

	_, err = governance.NextRecord(r1.Head(), governance.RecordSpec{Type: governance.GateEvaluated, ChainID: chain, PolicyID: pid, PolicyVersion: "v1", Payload: map[string]any{"ms": 1.5}})
	require.ErrorIs(t, err, governance.ErrNotCanonical)
	_, err = governance.NextRecord(r1.Head(), governance.RecordSpec{Type: "made_up", ChainID: chain, PolicyID: pid, PolicyVersion: "v1"})
	require.ErrorIs(t, err, governance.ErrInvalid)
	_, err = governance.NextRecord(r1.Head(), governance.RecordSpec{Type: governance.GateEvaluated, ChainID: chain, PolicyID: pid, PolicyVersion: "v1", Payload: []string{"a"}})
	require.ErrorIs(t, err, governance.ErrInvalid)
}

func TestErrors_MatchAfterWrapping(t *testing.T) {
	errs := []error{
		&governance.EvidenceIntegrityError{}, &governance.EvidenceConflictError{}, &governance.GovernanceEvidenceError{Err: errors.New("x")},
		&governance.OutcomeEvidenceError{CallErr: errors.New("a"), StoreErr: errors.New("b")}, &governance.GovernanceDeniedError{},
		&governance.GovernanceBypassError{}, &governance.PolicyConflictError{}, &governance.PolicyNotFoundError{},
		&governance.AmbiguousPolicyError{}, &governance.CertificateError{}, &governance.ValidationError{}, &governance.CanonicalError{},
		&governance.JSONError{},
	}
	for _, e := range errs {
		wrapped := fmt.Errorf("outer: %w", e)
		require.ErrorIs(t, wrapped, e, "%T", e)
		require.NotEmpty(t, e.Error())
	}
	var ce *governance.EvidenceConflictError
	require.ErrorAs(t, fmt.Errorf("x: %w", &governance.EvidenceConflictError{Kind: governance.ConflictStaleHead}), &ce)
	require.Equal(t, governance.ConflictStaleHead, ce.Kind)
	var pe *governance.PolicyNotFoundError
	require.ErrorAs(t, fmt.Errorf("x: %w", &governance.PolicyNotFoundError{PolicyID: "p"}), &pe)
	store := errors.New("disk full")
	oe := fmt.Errorf("ctx: %w", &governance.OutcomeEvidenceError{CallErr: errors.New("tool failed"), StoreErr: store})
	require.ErrorIs(t, oe, store)
	ge := fmt.Errorf("ctx: %w", &governance.GovernanceEvidenceError{CallExecuted: true, Err: store})
	var gee *governance.GovernanceEvidenceError
	require.ErrorAs(t, ge, &gee)
	require.True(t, gee.CallExecuted)
	require.ErrorIs(t, ge, store)
}

func TestVerificationResult_JSON(t *testing.T) {
	res := governance.VerificationResult{CheckedRecords: 0, FailureCode: governance.BrokenLink}
	out, err := json.Marshal(res)
	require.NoError(t, err)
	require.JSONEq(t, `{"valid":false,"verified_head":null,"checked_records":0,"failure_code":"broken_link","failed_record_id":null}`, string(out))
	var back governance.VerificationResult
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, res, back)
}
