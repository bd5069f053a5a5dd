package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// Durable stores keep snapshots and bindings as their JSON encodings; these
// helpers read them back for every backend the same way.

// SnapshotCache decodes stored snapshot encodings, checking each
// (digest recomputed, stored under its own id and version) once.
//
// NB: the result is kept with the exact bytes it came from, and every
// later Decode compares the bytes now stored with those before reusing it.
// An edit of the stored bytes therefore fails the next read, as it would
// without the cache; the cache only skips re-verifying identical bytes.
// The zero value is ready; it is safe for concurrent use.
type SnapshotCache struct {
	m sync.Map // key → *verifiedSnapshot
}

type verifiedSnapshot struct {
	raw  []byte
	snap governance.PolicySnapshot
}

// Decode returns the snapshot raw encodes, or an *IntegrityError naming
// key when it does not decode or is not (policyID, version). raw is not
// retained: the cache copies it.
func (c *SnapshotCache) Decode(key string, policyID uuid.UUID, version string, raw []byte) (governance.PolicySnapshot, error) {
	if v, ok := c.m.Load(key); ok && bytes.Equal(v.(*verifiedSnapshot).raw, raw) {
		return v.(*verifiedSnapshot).snap, nil
	}
	own := append([]byte(nil), raw...)
	snap, err := DecodeSnapshot(key, policyID, version, own)
	if err != nil {
		c.m.Delete(key)
		return governance.PolicySnapshot{}, err
	}
	c.m.Store(key, &verifiedSnapshot{raw: own, snap: snap})
	return snap, nil
}

// DecodeSnapshot decodes and checks one stored snapshot: digest
// recomputed, stored under its own id and version. A failure is an
// *IntegrityError naming key.
func DecodeSnapshot(key string, policyID uuid.UUID, version string, raw []byte) (governance.PolicySnapshot, error) {
	ie := &IntegrityError{Key: key, PolicyID: policyID.String(), Version: version}
	var snap governance.PolicySnapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		ie.Err = err
		var ve *governance.ValidationError
		if errors.As(err, &ve) {
			ie.Field, ie.Reason = ve.Field, ve.Reason
		} else {
			ie.Field, ie.Reason = "policy_snapshot", err.Error()
		}
		return governance.PolicySnapshot{}, ie
	}
	switch {
	case snap.PolicyID() != policyID:
		ie.Field, ie.Reason = "policy_id", fmt.Sprintf("record of policy %s stored under %s", snap.PolicyID(), policyID)
	case snap.Version() != version:
		ie.Field, ie.Reason = "version", fmt.Sprintf("record of version %q stored under %q", snap.Version(), version)
	default:
		return snap, nil
	}
	return governance.PolicySnapshot{}, ie
}

// DecodeBinding decodes one stored binding; a failure is an
// *IntegrityError naming key.
func DecodeBinding(key string, raw []byte) (governance.PolicyBinding, error) {
	var b governance.PolicyBinding
	if err := json.Unmarshal(raw, &b); err != nil {
		ie := &IntegrityError{Key: key, Field: "policy_binding", Reason: err.Error(), Err: err}
		var ve *governance.ValidationError
		if errors.As(err, &ve) {
			ie.Field, ie.Reason = ve.Field, ve.Reason
		}
		return governance.PolicyBinding{}, ie
	}
	return b, nil
}

// NotActiveBound is the *IntegrityError for a bound version that is not
// active. Bind refuses staged targets and activation is one-way, so it
// means the stored release state was edited.
func NotActiveBound(key string, ref governance.PolicySnapshot) error {
	return &IntegrityError{
		Key: key, PolicyID: ref.PolicyID().String(), Version: ref.Version(),
		Field: "release_state", Reason: "a bound version is not active",
	}
}
