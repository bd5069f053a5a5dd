// Package pgstore is the policy.Store on PostgreSQL (through pgx/v5): one
// policy history for every govhost server on the database. It passes
// policy/storetest unchanged.
//
// Open creates (versioned migrations, see internal/pgdb) two tables in the
// connection's current schema: policy_snapshots ((policy_id, version) PK,
// the snapshot's JSON) and policy_bindings (binding_id PK, scope and
// selector indexed, the binding's JSON). Rows are inserted and a
// snapshot's row is updated once, by activation; nothing is deleted.
//
// Every rule of policy.Store holds across servers: Put is one INSERT ... ON
// CONFLICT DO NOTHING followed by the re-put check, so two servers putting
// the same version agree and different content conflicts; Activate locks
// the version's row (SELECT ... FOR UPDATE) for its check-and-write, so two
// servers activating at once make one transition; Bind checks its target
// under a share lock in the same transaction as its insert.
//
// A database that is down or past the statement timeout fails the call
// with an error matching governance.ErrStoreUnavailable — never a policy
// verdict such as not found or invalid. Writes that fail so may or may not
// have been applied; every write is idempotent (same content → no-op), so
// repeating it is safe.
package pgstore
