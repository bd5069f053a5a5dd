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

// openStores opens the evidence and policy stores Options.Store selects.
func (e *Engine) openStores(ctx context.Context, opts Options, log *slog.Logger) error {
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
		e.Evidence, e.closers = ev, append(e.closers, ev.Close)
		ps, err := policypg.New(ctx, ev.Pool(), policypg.Options{Availability: e.Gates})
		if err != nil {
			return fmt.Errorf("govhost: open the PostgreSQL policy store: %w", err)
		}
		e.Policies, e.closers = ps, append([]func() error{ps.Close}, e.closers...)
		e.Sessions, err = newPGSessions(ctx, ev.Pool())
		return err
	}
	// One Pebble database holds both stores (evidence under "e/", policy
	// under "p/"): one lock, one WAL, and the evidence store's handling of
	// disk-full and fatal errors covers both.
	ev, err := pebblestore.Open(filepath.Join(e.dir, "db"), pebblestore.Options{Logger: log})
	if err != nil {
		return err
	}
	e.Evidence, e.closers = ev, append(e.closers, ev.Close)
	ps, err := policypebble.New(ev.DB(), policypebble.Options{Availability: e.Gates, Logger: log})
	if err != nil {
		return err
	}
	e.Policies, e.closers = ps, append([]func() error{ps.Close}, e.closers...)
	e.Sessions = pebbleSessions{db: ev.DB()}
	return nil
}
