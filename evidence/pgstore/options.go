package pgstore

import (
	"errors"
	"time"

	"github.com/govhost/govhost/internal/pgdb"
)

// Options configures Open. The zero value works: every field documents its
// default, applied by EnsureDefaults.
type Options struct {
	// MaxConns bounds the pool. Default 32. Each append holds a connection
	// for one round trip, so concurrent operations beyond it queue.
	MaxConns int32
	// StatementTimeout ends a statement the database has not answered in
	// time (an append then fails as unavailable). Default 10s; negative
	// disables it.
	StatementTimeout time.Duration
	// ConnMaxLifetime closes pooled connections older than this. Default 30m.
	ConnMaxLifetime time.Duration
	// ConnectTimeout bounds one connection attempt when the DSN does not
	// set connect_timeout. Default 5s.
	ConnectTimeout time.Duration
	// ReadBackTimeout bounds how long an append whose commit is ambiguous
	// keeps trying to read back its outcome before failing with
	// ErrCommitUnknown. Default 30s.
	ReadBackTimeout time.Duration
	// VerifyPage is how many records Verify fetches from its cursor at a
	// time. Default 512.
	VerifyPage int
}

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	p := o.pool()
	p.EnsureDefaults()
	o.MaxConns, o.StatementTimeout, o.ConnMaxLifetime, o.ConnectTimeout = p.MaxConns, p.StatementTimeout, p.ConnMaxLifetime, p.ConnectTimeout
	if o.ReadBackTimeout == 0 {
		o.ReadBackTimeout = 30 * time.Second
	}
	if o.VerifyPage == 0 {
		o.VerifyPage = 512
	}
}

// Validate refuses settings that cannot work.
func (o Options) Validate() error {
	if err := o.pool().Validate(); err != nil {
		return err
	}
	if o.ReadBackTimeout < 0 || o.VerifyPage < 0 {
		return errors.New("pgstore: ReadBackTimeout and VerifyPage must not be negative")
	}
	return nil
}

func (o Options) pool() pgdb.Pool {
	return pgdb.Pool{MaxConns: o.MaxConns, StatementTimeout: o.StatementTimeout, ConnMaxLifetime: o.ConnMaxLifetime, ConnectTimeout: o.ConnectTimeout}
}
