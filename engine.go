package govhost

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/evidence/pgstore"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/pathfacts"
	"github.com/govhost/govhost/policy"
)

// DefaultDir is the data directory when Options.Dir is empty.
const DefaultDir = "govhost-data"

// ModulesDir is the data directory's folder of user gate modules, each
// <sha256>.wasm (Gates). Any number of processes may add to it at once:
// a module is linked into place whole, under the name of its bytes.
const ModulesDir = "modules"

// Options configures Open. The zero value works.
type Options struct {
	// Dir is the data directory: db/ (the Pebble database of the evidence
	// and policy stores), modules/ (user gate modules by sha256) and
	// wasm-cache/ live in it. Default DefaultDir.
	Dir string
	// Host configures the Wasm host. Default host.NewConfig() with the
	// compilation cache in <Dir>/wasm-cache.
	Host *host.Config
	// Logger receives the stores' messages (Pebble's among them). Default:
	// warnings and errors to stderr.
	Logger *slog.Logger
	// Store selects where evidence and policies live (see stores.go): ""
	// or "pebble" (default) for the Pebble database in <Dir>/db;
	// "postgres" for PostgreSQL through GOVHOST_DATABASE_URL or, unset,
	// the PG* environment variables; or a postgres:// URL (or key=value
	// connection string) itself. The connection string is never logged.
	Store string
	// Postgres configures the PostgreSQL pool when Store selects it; the
	// zero value's defaults suit one server (32 connections, 10s statement
	// timeout, 30m connection lifetime).
	Postgres pgstore.Options
	// CheckpointLog is the operator's checkpoint log (a file, or a
	// directory of one file per checkpoint; see checkpoint.Append) that
	// every checkpoint the engine signs is appended to: at every task's
	// close, and for every open chain when the engine closes (seal.go).
	// Default <Dir>/checkpoints/. A log outside the data directory (and
	// its backups) is what catches a data directory rolled back.
	CheckpointLog string
	// WarmBuiltins: Open loads, while the database opens, the built-in
	// modules the last such run's gates ran, and Close lists them for the
	// next (WarmBuiltinsFile, prefetch.go). For a process that will make
	// gates (serve, the MCP proxy); a short command that makes none would
	// spend their loads' CPU (~25–40 ms for three) and wait for them at
	// Close, so it is off by default.
	WarmBuiltins bool
}

// Engine is the embedded default, open on one data directory (and, when
// Options.Store says so, one PostgreSQL database). Close it.
type Engine struct {
	Evidence evidence.Store // *pebblestore.Store or *pgstore.Store
	Policies policy.Store   // the matching policy store
	// Sessions keeps the coding agents' open sessions in the same database
	// (Pebble keys "h/", or the PostgreSQL table hook_sessions).
	Sessions  SessionStore
	closers   []func() error     // the stores', policies first
	pebble    *pebblestore.Store // the database of the stores: one of these two
	pg        *pgstore.Store
	Host      *host.Host
	Gates     *Gates
	Projector *controller.ObservationProjector
	dir       string
	// checkpointLog, sealer, sealMu: seal.go.
	checkpointLog string
	sealer        *sealer
	sealMu        sync.Mutex
	// prefetch: the built-in modules Open loads beside the database's
	// open (prefetch.go); nil for a host without a compilation cache
	// directory, and without Options.WarmBuiltins (then Close leaves the
	// list as it is).
	prefetch *prefetch
}

// Open opens (creating if needed) the data directory and the stores. With
// Pebble, a directory already open in another process fails with
// pebblestore.ErrLocked; with PostgreSQL, any number of engines (in any
// number of processes) may share one database.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir
	}
	cfg := host.NewConfig().WithCompilationCacheDir(filepath.Join(dir, "wasm-cache"))
	if opts.Host != nil {
		cfg = *opts.Host
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	e := &Engine{dir: dir, Projector: controller.NewObservationProjector(), checkpointLog: opts.CheckpointLog}
	if e.checkpointLog == "" {
		e.checkpointLog = filepath.Join(dir, DefaultCheckpointLog) + string(filepath.Separator)
	}
	if err := e.open(ctx, cfg, opts, log); err != nil {
		// Close what was opened; a nil field was never opened.
		return nil, errors.Join(err, e.Close(ctx))
	}
	e.startSealing(log)
	return e, nil
}

// open starts the host and opens the database at once (the database's
// open waits on the disk, the host's start on the CPU), then opens the
// policy store, which needs the gates. Whatever failed, what was opened is
// in e for Close.
func (e *Engine) open(ctx context.Context, cfg host.Config, opts Options, log *slog.Logger) error {
	dbDone := make(chan error, 1)
	go func() { dbDone <- e.openDatabase(ctx, opts, log) }()
	herr := e.startHost(ctx, cfg)
	if cache := cfg.CompilationCacheDir(); herr == nil && cache != "" && opts.WarmBuiltins {
		// Load what the last run's gates ran while the database opens.
		e.prefetch = startPrefetch(e.Gates, filepath.Join(cache, WarmBuiltinsFile))
	}
	// NB: e's fields are written by the two sides apart (the host and
	// gates here, the database's there) and read only after both ended.
	switch dberr := <-dbDone; {
	case herr != nil && dberr != nil:
		return errors.Join(herr, dberr)
	case herr != nil:
		return herr
	case dberr != nil:
		return dberr
	}
	return e.openPolicies(ctx, log)
}

func (e *Engine) startHost(ctx context.Context, cfg host.Config) (err error) {
	if e.Host, err = host.New(ctx, cfg); err != nil {
		return err
	}
	e.Gates, err = NewGates(e.Host, filepath.Join(e.dir, ModulesDir))
	return err
}

// NewController returns a controller over the engine's stores and gates.
// Evidence, Policies, Gates, PathFacts and Projector are filled in when
// cfg leaves them nil; Approvals and Now are cfg's.
func (e *Engine) NewController(cfg controller.Config) (*controller.InvocationController, error) {
	if cfg.Evidence == nil {
		cfg.Evidence = e.Evidence
	}
	if cfg.Policies == nil {
		cfg.Policies = e.Policies
	}
	if cfg.Gates == nil {
		cfg.Gates = e.Gates
	}
	if cfg.PathFacts == nil {
		cfg.PathFacts = pathfacts.ResolveCall
	}
	if cfg.Projector == nil {
		cfg.Projector = e.Projector
	}
	return controller.New(cfg)
}

// Issuer returns a certificate issuer over the engine's stores.
func (e *Engine) Issuer() *controller.CertificateIssuer {
	return &controller.CertificateIssuer{Evidence: e.Evidence, Policies: e.Policies}
}

// Close seals what the engine saw (closed tasks not yet sealed, the heads
// of open chains: seal.go), then closes the stores and the host.
func (e *Engine) Close(ctx context.Context) error {
	var errs []error
	if e.sealer != nil {
		e.sealer.stop(ctx)
		e.sealer = nil
	}
	if e.prefetch != nil {
		e.prefetch.stop()
		// NB: the list is a hint; failing to write it (a read-only data
		// directory) costs the next start its head start, not its answers.
		_ = e.prefetch.save(e.Gates.builtinsMade())
		e.prefetch = nil
	}
	for _, c := range e.closers {
		errs = append(errs, c())
	}
	e.closers = nil
	if e.Host != nil {
		errs = append(errs, e.Host.Close(ctx))
	}
	return errors.Join(errs...)
}
