package pebblestore

import (
	"encoding/binary"

	"github.com/google/uuid"

	"github.com/govhost/govhost/governance"
)

// KeyPrefix starts every key this store writes.
const KeyPrefix = "p/"

const formatVersion = "1"

var formatKey = []byte(KeyPrefix + "v")

func snapshotKey(policyID uuid.UUID, version string) []byte {
	k := make([]byte, 0, len(KeyPrefix)+2+36+1+len(version))
	k = append(k, KeyPrefix+"s/"...)
	k = append(k, policyID.String()...)
	k = append(k, '/')
	return append(k, version...)
}

func bindingKey(id uuid.UUID) []byte {
	return append([]byte(KeyPrefix+"b/"), id.String()...)
}

// labelPrefix is the index prefix of every binding of (scope, selector).
func labelPrefix(scope governance.PolicyScope, selector string) []byte {
	k := make([]byte, 0, len(KeyPrefix)+2+len(scope)+1+4+len(selector)+36)
	k = append(k, KeyPrefix+"l/"...)
	k = append(k, scope...)
	k = append(k, '/')
	k = binary.BigEndian.AppendUint32(k, uint32(len(selector)))
	return append(k, selector...)
}

func labelKey(b governance.PolicyBinding) []byte {
	return append(labelPrefix(b.Scope, b.Selector), b.BindingID.String()...)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}
