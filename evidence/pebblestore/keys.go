package pebblestore

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/google/uuid"
)

// Key layout (see doc.go). Every key starts with keyPrefix so the evidence
// keyspace can share a Pebble DB with other stores (the policy store uses
// "p/"). Fixed-width binary ids and big-endian sequences make Pebble's
// bytewise order equal chain order: one chain is one contiguous range.
const (
	keyPrefix = "e/"

	tagRecord   = 'r' // e/r<chain 16><seq 8 BE> -> record value (codec.go)
	tagHead     = 'h' // e/h<chain 16>            -> head value
	tagRecordID = 'i' // e/i<record id 16>        -> <chain 16><seq 8 BE>
	tagHash     = 'c' // e/c<chain hash 32>       -> <chain 16><seq 8 BE>
	tagFormat   = 'v' // e/v                      -> formatMarker
)

// formatMarker is stored under e/v when the keyspace is first used; a
// different value means an incompatible layout or codec.
const formatMarker = "govhost-evidence-pebble/1"

var formatKey = []byte{'e', '/', tagFormat}

func recordKey(chain uuid.UUID, seq int64) []byte {
	k := make([]byte, 0, 3+16+8)
	k = append(k, keyPrefix...)
	k = append(k, tagRecord)
	k = append(k, chain[:]...)
	return binary.BigEndian.AppendUint64(k, uint64(seq))
}

// chainBounds returns [lower, upper) covering the chain's records with
// sequence >= from.
func chainBounds(chain uuid.UUID, from int64) (lower, upper []byte) {
	if from < 0 {
		from = 0
	}
	lower = recordKey(chain, from)
	upper = make([]byte, 0, 3+16)
	upper = append(upper, keyPrefix...)
	upper = append(upper, tagRecord)
	upper = append(upper, chain[:]...)
	return lower, prefixEnd(upper)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

func headKey(chain uuid.UUID) []byte {
	return append([]byte{'e', '/', tagHead}, chain[:]...)
}

func recordIDKey(id uuid.UUID) []byte {
	return append([]byte{'e', '/', tagRecordID}, id[:]...)
}

// hashKey indexes a chain hash by its raw 32 bytes. Append only indexes
// records that passed CheckIntegrity, so the hash is 64 lowercase hex
// digits; ok is false otherwise.
func hashKey(chainHash string) (k []byte, ok bool) {
	k = make([]byte, 3+32)
	copy(k, []byte{'e', '/', tagHash})
	if len(chainHash) != 64 {
		return nil, false
	}
	if _, err := hex.Decode(k[3:], []byte(chainHash)); err != nil {
		return nil, false
	}
	return k, true
}

// locator is the value of both indexes: where the record lives.
func locator(chain uuid.UUID, seq int64) []byte {
	v := make([]byte, 0, 24)
	v = append(v, chain[:]...)
	return binary.BigEndian.AppendUint64(v, uint64(seq))
}
