package pgdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Pool configures Connect. Zero fields take the defaults below.
type Pool struct {
	MaxConns         int32         // default 32
	StatementTimeout time.Duration // default 10s; negative: none
	ConnMaxLifetime  time.Duration // default 30m
	ConnectTimeout   time.Duration // default 5s, unless the DSN sets connect_timeout
}

// Default pool settings.
const (
	DefaultMaxConns         = 32
	DefaultStatementTimeout = 10 * time.Second
	DefaultConnMaxLifetime  = 30 * time.Minute
	DefaultConnectTimeout   = 5 * time.Second
)

// EnsureDefaults fills zero fields with the defaults.
func (p *Pool) EnsureDefaults() {
	if p.MaxConns == 0 {
		p.MaxConns = DefaultMaxConns
	}
	if p.StatementTimeout == 0 {
		p.StatementTimeout = DefaultStatementTimeout
	}
	if p.ConnMaxLifetime == 0 {
		p.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	if p.ConnectTimeout == 0 {
		p.ConnectTimeout = DefaultConnectTimeout
	}
}

// Validate refuses settings that cannot work.
func (p Pool) Validate() error {
	switch {
	case p.MaxConns < 1:
		return errors.New("pgstore: MaxConns must be at least 1")
	case p.ConnMaxLifetime < 0:
		return errors.New("pgstore: ConnMaxLifetime must not be negative")
	case p.ConnectTimeout < 0:
		return errors.New("pgstore: ConnectTimeout must not be negative")
	}
	return nil
}

// ErrDSN is matched by a connection string that does not parse. Its
// message never repeats the string (it may hold a password).
var ErrDSN = errors.New("pgstore: malformed PostgreSQL connection string")

// Connect opens a pool on dsn (a postgres:// URL or key=value string; ""
// takes everything from the PG* environment variables, as libpq does) and
// checks that the database answers.
//
// A setting the caller leaves zero may come from the DSN instead
// (pool_max_conns, pool_max_conn_lifetime, statement_timeout in ms,
// connect_timeout), so a command line can tune the pool through the
// connection string alone; otherwise the defaults apply.
func Connect(ctx context.Context, dsn string, p Pool) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// NB: pgx's parse errors quote the string, password included.
		return nil, ErrDSN
	}
	inDSN := func(key string) bool { return strings.Contains(dsn, key+"=") }
	if p.MaxConns == 0 && inDSN("pool_max_conns") {
		p.MaxConns = cfg.MaxConns
	}
	if p.ConnMaxLifetime == 0 && inDSN("pool_max_conn_lifetime") {
		p.ConnMaxLifetime = cfg.MaxConnLifetime
	}
	_, stmtInDSN := cfg.ConnConfig.RuntimeParams["statement_timeout"]
	p.EnsureDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cfg.MaxConns = p.MaxConns
	cfg.MaxConnLifetime = p.ConnMaxLifetime
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = p.ConnectTimeout
	}
	if p.StatementTimeout > 0 && !(stmtInDSN && p.StatementTimeout == DefaultStatementTimeout) {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(p.StatementTimeout.Milliseconds(), 10)
	}
	prefix := cfg.ConnConfig.RuntimeParams["application_name"]
	if prefix == "" {
		prefix = "govhost"
	}
	// Every connection gets a unique application_name, so that an
	// ambiguous commit can find and settle the backend that ran it (see
	// Settle).
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.RuntimeParams["application_name"] = prefix + "/" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgstore: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, Wrap("connect", err)
	}
	return pool, nil
}
