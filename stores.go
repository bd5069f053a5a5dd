package govhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/evidence/pgstore"
	policypebble "github.com/govhost/govhost/policy/pebblestore"
	policypg "github.com/govhost/govhost/policy/pgstore"
)

// DatabaseURLEnv names the environment variable Options.Store "postgres"
// reads the connection string from; unset, the PG* variables apply.
const DatabaseURLEnv = "GOVHOST_DATABASE_URL"

// ErrStoreOption is matched by an Options.Store that names no backend. Its
// message never repeats the value: it may be a connection string with a
// password.
var ErrStoreOption = errors.New(`govhost: unknown store (want "pebble", "postgres", or a postgres:// URL)`)

// PostgresDSN resolves an Options.Store value to a PostgreSQL connection
// string: ok is false for the Pebble store. "postgres" (or "postgresql")
// takes $GOVHOST_DATABASE_URL, or "" so that the driver reads the PG*
// variables as libpq does.
func PostgresDSN(store string) (dsn string, ok bool, err error) {
	switch {
	case store == "" || store == "pebble":
		return "", false, nil
	case store == "postgres" || store == "postgresql":
		return os.Getenv(DatabaseURLEnv), true, nil
	case strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://") || strings.Contains(store, "="):
		return store, true, nil
	}
	return "", false, ErrStoreOption
}

// openDatabase opens the database Options.Store selects, and with it the
// evidence store: the part of opening the stores that needs no gates, so
// that Engine.open runs it beside the host's start (Pebble's open waits on
// a few fsyncs; the host's is CPU).
func (e *Engine) openDatabase(ctx context.Context, opts Options, log *slog.Logger) error {
	dsn, usePG, err := PostgresDSN(opts.Store)
	if err != nil {
		return err
	}
	if usePG {
		// One pool serves both stores: the evidence store owns it.
		ev, err := pgstore.Open(ctx, dsn, opts.Postgres)
		if err != nil {
			return fmt.Errorf("govhost: open the PostgreSQL evidence store: %w", err)
		}
		e.pg, e.Evidence, e.closers = ev, ev, append(e.closers, ev.Close)
		return nil
	}
	// One Pebble database holds both stores (evidence under "e/", policy
	// under "p/"): one lock, one WAL, and the evidence store's handling of
	// disk-full and fatal errors covers both.
	ev, err := pebblestore.Open(filepath.Join(e.dir, "db"), pebblestore.Options{Logger: log})
	if err != nil {
		return err
	}
	e.pebble, e.Evidence, e.closers = ev, ev, append(e.closers, ev.Close)
	return nil
}

// openPolicies opens the policy and session stores in the database
// openDatabase opened; the policy store checks modules through e.Gates.
func (e *Engine) openPolicies(ctx context.Context, log *slog.Logger) error {
	if e.pg != nil {
		ps, err := policypg.New(ctx, e.pg.Pool(), policypg.Options{Availability: e.Gates})
		if err != nil {
			return fmt.Errorf("govhost: open the PostgreSQL policy store: %w", err)
		}
		e.Policies, e.closers = ps, append([]func() error{ps.Close}, e.closers...)
		e.Sessions, err = newPGSessions(ctx, e.pg.Pool())
		return err
	}
	ps, err := policypebble.New(e.pebble.DB(), policypebble.Options{Availability: e.Gates, Logger: log})
	if err != nil {
		return err
	}
	e.Policies, e.closers = ps, append([]func() error{ps.Close}, e.closers...)
	e.Sessions = pebbleSessions{db: e.pebble.DB()}
	return nil
}
