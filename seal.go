package govhost

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/uuid"

	"github.com/govhost/govhost/certify"
	"github.com/govhost/govhost/checkpoint"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
)

// Sealing: every task the engine closes is certified, and its proof kept,
// without anyone asking. When a TASK_CLOSED is committed, the engine mints
// the task's certificate at the chain's head, signs a checkpoint of that
// head with the data directory's key, appends the checkpoint to the
// operator's checkpoint log and writes the bundle under
// <Dir>/certificates/<task_id>/ (certify's bundle layout). When the engine
// closes (serve's shutdown), the head of every chain it saw that is still
// open is checkpointed and logged too, so the log commits to what the
// store held when the process stopped.
//
// Why from the projector? Every front end (the HTTP API, hook sessions,
// the MCP proxy, in-process tasks) closes tasks through the controller,
// and every committed record passes the engine's projector: one place sees
// them all. The projector is lossy by design (a slow subscriber loses
// observations rather than slowing a governed call), so Close also seals
// every closed task that is not sealed yet: of the chains seen, or of
// every chain when an observation was dropped.

// CertificatesDir is the data directory's folder of kept certificate
// bundles, one folder per task id.
const CertificatesDir = "certificates"

// DefaultCheckpointLog is the checkpoint log's default place, a directory
// in the data directory. An operator who wants the log to catch a rolled
// back data directory points Options.CheckpointLog outside it.
const DefaultCheckpointLog = "checkpoints"

// sealer follows the projector and seals closed tasks.
type sealer struct {
	e      *Engine
	log    *slog.Logger
	cancel func()
	mu     sync.Mutex
	chains map[uuid.UUID]bool // chains seen this run
	// dropped is the projector's drop count when sealing started.
	dropped int64
}

func (e *Engine) startSealing(log *slog.Logger) {
	s := &sealer{e: e, log: log, chains: map[uuid.UUID]bool{}, dropped: e.Projector.Dropped()}
	s.cancel = e.Projector.Watch(s.wants, 4096, s.observe)
	e.sealer = s
}

// wants notes the chain of every committed record (the chains to
// checkpoint at close) and picks TASK_CLOSED, the one record that is
// sealed: the other records of a governed call cost a map lookup here,
// not an observation each (controller.ObservationProjector.Watch).
func (s *sealer) wants(r governance.EvidenceRecord) bool {
	s.mu.Lock()
	if !s.chains[r.ChainID] {
		s.chains[r.ChainID] = true
	}
	s.mu.Unlock()
	return r.RecordType == governance.TaskClosed
}

func (s *sealer) observe(o controller.Observation) {
	chain, err := uuid.Parse(o.ChainID)
	if err != nil {
		return
	}
	s.seal(context.Background(), chain)
}

// seal seals one chain and logs what failed: a task the rules refuse to
// certify is reported, not retried; anything else (a store or disk
// failure) is left for the next seal or govhost cert bundle.
func (s *sealer) seal(ctx context.Context, chain uuid.UUID) {
	_, err := s.e.sealChain(ctx, chain)
	var ce *governance.CertificateError
	switch {
	case err == nil:
	case errors.As(err, &ce):
		s.log.Info("govhost: a closed task cannot be certified", "chain_id", chain, "rule", ce.Rule, "reason", ce.Reason)
	default:
		s.log.Warn("govhost: sealing a chain failed; govhost cert bundle or cert checkpoint can sign it later", "chain_id", chain, "error", err)
	}
}

// stop ends sealing: it waits for the seal in progress, then seals what
// the projector may have lost and checkpoints every open chain it saw.
// Failures are logged: they must not keep the engine from closing.
func (s *sealer) stop(ctx context.Context) {
	s.cancel()
	s.mu.Lock()
	chains := make([]uuid.UUID, 0, len(s.chains))
	for c := range s.chains {
		chains = append(chains, c)
	}
	s.mu.Unlock()
	if s.e.Projector.Dropped() != s.dropped {
		all, err := allChains(ctx, s.e.Evidence)
		if err != nil {
			s.log.Warn("govhost: listing chains to seal at close failed", "error", err)
		}
		chains = append(chains, all...)
	}
	for _, chain := range chains {
		s.seal(ctx, chain)
	}
}

func allChains(ctx context.Context, store evidence.Store) ([]uuid.UUID, error) {
	lister, ok := store.(evidence.ChainLister)
	if !ok {
		return nil, nil
	}
	var out []uuid.UUID
	after := uuid.Nil
	for {
		page, err := lister.Chains(ctx, after, 256)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if len(page) < 256 {
			return out, nil
		}
		after = page[len(page)-1]
	}
}

// sealChain keeps the proof of a chain's current head: for a closed task
// its certificate bundle (minted unless the kept one is at this head),
// for an open chain a signed checkpoint; either way the checkpoint goes
// to the operator's log. It returns the closed task's bundle (zero for an
// open chain).
func (e *Engine) sealChain(ctx context.Context, chain uuid.UUID) (certify.Bundle, error) {
	boundary, closed, err := closedBoundary(ctx, e.Evidence, chain)
	if err != nil {
		return certify.Bundle{}, err
	}
	if !closed {
		head, err := e.Evidence.Head(ctx, chain)
		if err != nil || head.IsEmpty() {
			return certify.Bundle{}, err
		}
		note, err := e.signHead(chain, head)
		if err != nil {
			return certify.Bundle{}, err
		}
		return certify.Bundle{}, e.appendCheckpoint(note)
	}
	return e.bundleOf(ctx, chain, boundary)
}

// bundleOf returns the closed task's bundle at the chain's current head:
// the kept one when it is at that head, else a new one, minted, signed,
// logged and kept.
func (e *Engine) bundleOf(ctx context.Context, chain uuid.UUID, boundary governance.ClosedTaskBoundary) (certify.Bundle, error) {
	e.sealMu.Lock()
	defer e.sealMu.Unlock()
	head, err := e.Evidence.Head(ctx, chain)
	if err != nil {
		return certify.Bundle{}, err
	}
	dir := e.keptDir(boundary.TaskBoundaryID)
	if kept, err := certify.ReadBundle(certify.PartsOf(dir)); err == nil && kept.Certificate.EvidenceChainHead == head.Hash && kept.Checkpoint != nil {
		return kept, nil
	}
	cert, err := e.Issuer().Mint(ctx, boundary, head.Hash)
	if err != nil {
		return certify.Bundle{}, err
	}
	recs, err := e.Evidence.Read(ctx, chain, -1)
	if err != nil {
		return certify.Bundle{}, err
	}
	recs = recs[:head.Sequence+1] // the minted head, even if the chain grew since
	snap, err := e.Policies.Get(ctx, boundary.PolicyID, boundary.PolicyVersion)
	if err != nil {
		return certify.Bundle{}, err
	}
	note, err := e.signHead(chain, head)
	if err != nil {
		return certify.Bundle{}, err
	}
	b := certify.Bundle{Certificate: cert, Records: recs, Policy: &snap, Checkpoint: note}
	if err := e.appendCheckpoint(note); err != nil {
		return certify.Bundle{}, err
	}
	return b, keepBundle(dir, b)
}

// KeptBundleDir returns the folder where the engine keeps a closed task's
// certificate bundle (written when the task closed; it may not exist yet).
func (e *Engine) KeptBundleDir(task uuid.UUID) string { return e.keptDir(task) }

func (e *Engine) keptDir(task uuid.UUID) string {
	return filepath.Join(e.dir, CertificatesDir, task.String())
}

// keepBundle writes b into dir whole: into a fresh sibling folder first,
// then renamed into place, so a reader never sees half a bundle.
func keepBundle(dir string, b certify.Bundle) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-"+filepath.Base(dir)+"-")
	if err != nil {
		return err
	}
	if err := certify.WriteBundle(tmp, b); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, dir)
}

// CheckpointLog returns the operator's checkpoint log the engine appends
// every checkpoint it signs to (Options.CheckpointLog, default
// <Dir>/checkpoints/).
func (e *Engine) CheckpointLog() string { return e.checkpointLog }

func (e *Engine) appendCheckpoint(note []byte) error {
	return checkpoint.Append(e.checkpointLog, note)
}
