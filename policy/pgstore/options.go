package pgstore

import (
	"time"

	"github.com/govhost/govhost/internal/pgdb"
	"github.com/govhost/govhost/policy"
)

// Options configures Open and New. The zero value works (with nothing
// available to Activate).
type Options struct {
	// Availability answers Activate's "can this gate run here?". Nil
	// reports every adapter and module unavailable.
	Availability policy.Availability
	// MaxConns bounds the pool Open makes. Default 32.
	MaxConns int32
	// StatementTimeout ends a statement the database has not answered in
	// time. Default 10s; negative disables it.
	StatementTimeout time.Duration
	// ConnMaxLifetime closes pooled connections older than this. Default 30m.
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds one connection attempt when the DSN does not
	// set connect_timeout. Default 5s.
	ConnectTimeout time.Duration
}

func (o Options) pool() pgdb.Pool {
	return pgdb.Pool{MaxConns: o.MaxConns, StatementTimeout: o.StatementTimeout, ConnMaxLifetime: o.ConnMaxLifetime, ConnectTimeout: o.ConnectTimeout}
}

// ErrSchemaTooNew: the database's policy tables were written by a newer
// govhost; this build refuses to touch them.
var ErrSchemaTooNew = pgdb.ErrSchemaTooNew

// ErrDSN: the connection string does not parse (its text is not repeated).
var ErrDSN = pgdb.ErrDSN

// component names the policy tables' row in govhost_schema_versions.
const component = "policy"

// migrations take the schema from version i to i+1; append only.
var migrations = []string{
	// 1: snapshots and bindings.
	`CREATE TABLE policy_snapshots (
		policy_id uuid NOT NULL,
		version   text NOT NULL,
		snapshot  text NOT NULL,
		CONSTRAINT policy_snapshots_pkey PRIMARY KEY (policy_id, version)
	);
	CREATE TABLE policy_bindings (
		binding_id uuid PRIMARY KEY,
		scope      text NOT NULL,
		selector   text NOT NULL,
		binding    text NOT NULL
	);
	CREATE INDEX policy_bindings_label ON policy_bindings (scope, selector, binding_id)`,
}
