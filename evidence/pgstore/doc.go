// Package pgstore is the evidence.Store on PostgreSQL (through pgx/v5), for
// teams that run govhost on several hosts against one database. It passes
// evidence/storetest unchanged and implements evidence.BatchAppender and
// evidence.ChainLister.
//
// # Tables
//
// Open creates (versioned migrations, see internal/pgdb) two tables in the
// connection's current schema:
//
//	evidence_chains  (chain_id PK, head_sequence, head_hash)  one row per chain
//	evidence_records (chain_id, sequence) PK, record_id UNIQUE, chain_hash UNIQUE,
//	                 record: the record's JSON exactly as governance encodes it
//
// Nothing is ever updated in evidence_records or deleted from either
// table; a build that finds a newer schema version refuses to run
// (ErrSchemaTooNew).
//
// # Compare-and-append
//
// An append (one record, or one operation's batch) is one SQL statement,
// hence one transaction: it moves the chain's head row from the head the
// first record names to the last record's (a conditional UPDATE, or an
// INSERT ... ON CONFLICT DO NOTHING for a new chain) and inserts the
// records only if the head moved; a stored record id or chain hash fails
// the insert on its UNIQUE index and rolls the head back with it.
// Another writer that moved the head first — another govhost server on
// the same database, or a replay — makes the head condition false: the
// append inserts nothing and fails with *governance.EvidenceConflictError
// (re-read to say which rule), never a fork and never a retry. Concurrent
// appends on different connections share PostgreSQL's WAL flushes (group
// commit).
//
// # Failures
//
// A database that is down, restarting, or past the statement timeout
// fails the call with an error matching governance.ErrStoreUnavailable;
// nothing was appended. When the connection is lost after the statement
// was sent (so the commit may have happened), the store settles the old
// backend and reads back whether the last record is stored before
// answering: stored → the receipts; not stored → ErrStoreUnavailable; the
// database unreachable for Options.ReadBackTimeout → ErrCommitUnknown. An
// acknowledged append is never lost, and an unacknowledged one is never
// reported as committed.
//
// Verify reads one snapshot (REPEATABLE READ) through a server-side cursor,
// a page of records at a time: memory stays bounded whatever the chain's
// length.
package pgstore
