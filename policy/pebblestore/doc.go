// Package pebblestore is the durable policy.Store on Pebble: every policy
// version ever put, its activation, and the bindings, synced to disk before
// a call returns. It either opens a directory of its own (Open) or shares a
// *pebble.DB another store already uses (New), for example the evidence
// store's: every key it writes starts with KeyPrefix ("p/"), which no other
// govhost store uses.
//
// It does not own the rules (package policy) or the model (governance);
// it stores their JSON wire forms and re-checks them on every read.
//
// # Key layout (format version 1)
//
//	p/v                                  "1": the layout version, written once
//	p/s/<policy_id>/<version>            a snapshot: governance.PolicySnapshot's JSON
//	p/b/<binding_id>                     a binding: governance.PolicyBinding's JSON
//	p/l/<scope>/<len><selector><binding_id>
//	                                     the same binding JSON, indexed for Resolve
//
// <policy_id> and <binding_id> are the 36-character text form of the UUID,
// so the version after a policy id needs no escaping. <scope> is global,
// role or resource; <len> is the selector's length as 4 big-endian bytes
// (0 for global), so any selector text is unambiguous. Snapshot keys sort
// by policy then version; nothing is ever deleted.
//
// # Integrity
//
// Every read decodes strictly and recomputes the snapshot digest. A record
// that no longer decodes, whose digest no longer matches its content, or
// that sits under another policy id or version's key is a
// *policy.IntegrityError naming the field, and is never returned, resolved,
// activated, bound to or overwritten. Release state and activation data are
// outside the digest (ADR-0087 D5), so they are checked for consistency
// (an active snapshot has a time; a resolved one is active), not for
// authenticity: an attacker who can write the database can also recompute
// digests. Tamper evidence of what decided an operation is the evidence
// chain's job, which records the pinned digest.
//
// # Concurrency
//
// All methods are safe for concurrent use. Writes (Put, Activate, Bind) are
// serialized by a mutex so their read-check-write is atomic within a
// process; Pebble's directory lock keeps other processes out. Reads take no
// lock.
package pebblestore
