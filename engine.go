package govhost

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence/pebblestore"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/pathfacts"
	policypebble "github.com/govhost/govhost/policy/pebblestore"
)

// DefaultDir is the data directory when Options.Dir is empty.
const DefaultDir = "govhost-data"

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
}

// Engine is the embedded default, open on one data directory. Close it.
type Engine struct {
	Evidence  *pebblestore.Store
	Policies  *policypebble.Store
	Host      *host.Host
	Gates     *Gates
	Projector *controller.ObservationProjector
	dir       string
}

// Open opens (creating if needed) the data directory. A directory already
// open in another process fails with pebblestore.ErrLocked.
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
	e := &Engine{dir: dir, Projector: controller.NewObservationProjector()}
	if err := e.open(ctx, cfg, log); err != nil {
		// Close what was opened; a nil field was never opened.
		return nil, errors.Join(err, e.Close(ctx))
	}
	return e, nil
}

func (e *Engine) open(ctx context.Context, cfg host.Config, log *slog.Logger) (err error) {
	if e.Host, err = host.New(ctx, cfg); err != nil {
		return err
	}
	if e.Gates, err = NewGates(e.Host, filepath.Join(e.dir, "modules")); err != nil {
		return err
	}
	// One Pebble database holds both stores (evidence under "e/", policy
	// under "p/"): one lock, one WAL, and the evidence store's handling of
	// disk-full and fatal errors covers both.
	if e.Evidence, err = pebblestore.Open(filepath.Join(e.dir, "db"), pebblestore.Options{Logger: log}); err != nil {
		return err
	}
	if e.Policies, err = policypebble.New(e.Evidence.DB(), policypebble.Options{Availability: e.Gates, Logger: log}); err != nil {
		return err
	}
	return nil
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

// Close closes the stores and the host.
func (e *Engine) Close(ctx context.Context) error {
	var errs []error
	if e.Policies != nil {
		errs = append(errs, e.Policies.Close())
	}
	if e.Evidence != nil {
		errs = append(errs, e.Evidence.Close())
	}
	if e.Host != nil {
		errs = append(errs, e.Host.Close(ctx))
	}
	return errors.Join(errs...)
}
