package pebblestore

import (
	"encoding/binary"

	"github.com/google/uuid"
)

// Key layout (see doc.go). Every key starts with keyPrefix so the evidence
// keyspace can share a Pebble DB with other stores (the policy store uses
// "p/"). Fixed-width binary ids and big-endian sequences make Pebble's
// bytewise order equal chain order: one chain is one contiguous range.
const (
	keyPrefix = "e/"

	tagRecord   = 'r' // e/r<chain 16><seq 8 BE> -> record value (codec.go)
	tagRecordID = 'i' // e/i<record id 16>        -> empty (earlier builds wrote <chain 16><seq 8 BE>, which nothing reads: same format)
	// 'h' (e/h<chain 16> -> head value) was a persisted head per chain,
	// rewritten by every append; format 1 wrote it. Format 2 reads a
	// chain's head from its last record instead, and the upgrade deletes
	// the range.
	tagHead = 'h'
	// 'c' (e/c<chain hash 32> -> locator) was a duplicate-hash index;
	// stores before issue 25 wrote it. Nothing reads it, so a keyspace
	// with or without it is the same format.
	tagFormat = 'v' // e/v                      -> formatMarker

	keyLenRecord = 3 + 16 + 8
	keyLenID     = 3 + 16
)

// formatMarker is stored under e/v when the keyspace is first used; a
// different value means an incompatible layout or codec.
//
// Format 1 (formatMarkerV1) kept a head key per chain that every append
// rewrote, and wrote every record value in codec 1. Format 2
// (formatMarkerV2) wrote no head keys and wrote values in codec 2 (raw
// digests, codec.go). Format 3 is format 2 with the records of a batch of
// two or more in one codec 12 value under the batch's first key. This build
// reads every older keyspace correctly (a format 2 value is a format 3
// value of one record; format 1's heads are its last records, written in
// the same batches; codec 1 values decode as before) and upgrades it on
// open by rewriting the marker (and deleting format 1's heads); an older
// build refuses format 3 (ErrUnsupportedFormat) instead of misreading a
// batch value.
const (
	formatMarker   = "govhost-evidence-pebble/3"
	formatMarkerV2 = "govhost-evidence-pebble/2"
	formatMarkerV1 = "govhost-evidence-pebble/1"
)

var formatKey = []byte{'e', '/', tagFormat}

// The put* functions append to dst (usually a batch's deferred buffer or a
// stack array, to keep appends allocation-light) and return it.

func putRecordKey(dst []byte, chain uuid.UUID, seq int64) []byte {
	dst = append(dst, 'e', '/', tagRecord)
	dst = append(dst, chain[:]...)
	return binary.BigEndian.AppendUint64(dst, uint64(seq))
}

func recordKey(chain uuid.UUID, seq int64) []byte {
	return putRecordKey(make([]byte, 0, keyLenRecord), chain, seq)
}

// chainPrefix is the prefix of every record key of chain.
func chainPrefix(chain uuid.UUID) []byte {
	return append([]byte{'e', '/', tagRecord}, chain[:]...)
}

// chainBounds returns [lower, upper) covering the chain's records with
// sequence >= from.
func chainBounds(chain uuid.UUID, from int64) (lower, upper []byte) {
	if from < 0 {
		from = 0
	}
	lower = recordKey(chain, from)
	return lower, prefixEnd(lower[:keyLenRecord-8])
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

func putRecordIDKey(dst []byte, id uuid.UUID) []byte {
	return append(append(dst, 'e', '/', tagRecordID), id[:]...)
}
