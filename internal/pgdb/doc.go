// Package pgdb is the PostgreSQL plumbing the evidence and policy stores
// share: one connection pool from a DSN and options, versioned schema
// migrations, and the classification of database errors into
// "unavailable" (governance.ErrStoreUnavailable) and "certainly not
// committed". It holds no store logic.
package pgdb
