// Package pebblestore is the durable evidence.Store of ADR-0087 D3 on
// Pebble (github.com/cockroachdb/pebble/v2): compare-and-append in one
// atomic batch, group-committed WAL syncs, a persisted head per chain, and
// a streaming Verify over a snapshot. It passes evidence/storetest
// unchanged.
//
// It owns the keys starting with "e/" of its Pebble DB and nothing else:
// Open gives it a directory of its own (Store.DB lends that DB to a store
// keeping another keyspace beside it, such as the policy store's "p/");
// New runs it on a DB opened by someone else. It does not own the record
// model, the hashing or the verification rules (package governance and
// evidence.Verifier), nor any policy data.
//
// # Key layout
//
//	e/v                          format marker "govhost-evidence-pebble/3"
//	e/r <chain:16> <seq:8 BE>    record value (codec.go: codec 2; format 1 wrote codec 1), or
//	                             for a batch of two or more, one codec 12 value of its records
//	                             under its first record's key (format 3)
//	e/i <record id:16>           empty (duplicate-id index; older builds
//	                             stored <chain:16> <seq:8 BE>, which nothing reads)
//
// A chain's head is the last record of its last value (one reverse seek
// when a chain is first used, then cached). Format 1 also wrote e/h
// <chain:16> (a head value per chain, rewritten by every append: a fifth of
// an append's keys); format 2 wrote a value per record. Open upgrades a
// format 1 or 2 keyspace by rewriting the marker (and deleting format 1's
// heads), which an older build then refuses (keys.go). Stores before
// issue 25 also wrote e/c <chain hash:32 raw> (a duplicate-hash index);
// nothing reads it now. A duplicate chain hash is refused through its
// record id, which the hash covers (checkDuplicates).
//
// Ids are raw UUID bytes and sequences big-endian, so one chain's records
// are one contiguous key range in sequence order: Read, Verify and the
// head are a single bounded iteration or seek (Read from a sequence seeks
// to the value holding it). An append writes its records and their id
// index entries in one batch, so after any crash the index and the records
// agree, and the last record is the head.
//
// # Durability and group commit
//
// Append checks the record's integrity, encodes the batch, then, under a
// per-chain lock and the lock stripes of its record ids, checks that the
// store does not hold them (an in-memory filter of every stored id answers
// "certainly not" for nearly all of them, idfilter.go; a "maybe" is looked
// up in the id index), compares the record with the chain's
// cached head (read from its last record once, then kept; idle entries are
// evicted past 65536 chains), and applies the batch with ApplyNoSyncWait (WAL
// buffer and memtable, no fsync). It waits for the WAL sync with SyncWait
// after releasing the locks. Concurrent appends, to any chain, share one
// fsync; appends to one chain are applied in order, and the WAL recovers
// as a prefix, so a chain is never left with a hole. Append returns only
// once its record is durable. Reads see applied batches, which (as in
// Pebble itself) may include a batch whose sync is still pending; only a
// returned Append promises survival.
//
// Open tunes Pebble for this workload: 64 KiB blocks (Verify streams),
// bloom filters (the index lookups of an append almost always miss), and a
// 64 MiB block cache by default, because Pebble charges live memtables to
// the cache and its own 8 MiB default leaves no room for blocks.
//
// # Failures: what a user sees
//
//   - A failed WAL write or sync reported to SyncWait: that Append returns
//     an error matching ErrIO (or ErrDiskFull) and ErrFenced; the record's
//     durability is unknown (it sits in the WAL buffer and memtable), so
//     the store fences itself: every later call returns ErrFenced. Close
//     and reopen: WAL replay keeps every acknowledged record, and maybe the
//     unacknowledged one, whole or not at all.
//   - A fatal Pebble error (Pebble calls Logger.Fatalf: a failed commit
//     pipeline, MANIFEST write or sync): the message is logged at Error on
//     Options.Logger, the store is fenced, Options.OnFatal runs, then the
//     goroutine panics with a *FatalError naming the directory. The process
//     stops without acknowledging anything pending; a restart recovers.
//   - A full disk: Open reserves Options.BallastSize bytes in a ballast
//     file. On the first ENOSPC the ballast is deleted and the write
//     retried (vfs.OnDiskFull), so that append succeeds; later appends
//     return ErrDiskFull until the ballast can be re-created. Without room
//     to release, ENOSPC fences the store (ErrDiskFull) or is fatal, as
//     above.
//   - A read failing during Verify is an error wrapping ErrIO, never a
//     tamper result. A stored value that does not decode is tampering:
//     CONTENT_MISMATCH (UNSUPPORTED_ALGORITHM for an unknown format byte).
//   - Open: ErrLocked (directory held by another store), ErrForeignDirectory
//     (files but no Pebble DB), ErrCorrupt, ErrUnsupportedFormat.
package pebblestore
