package service

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hooks"
)

// Observer is told about gate evaluations and evidence appends (the
// server's metrics). Calls come from governed operations: keep them cheap.
type Observer interface {
	GateEvaluated(gateID string, decision abi.Decision, reasonCode string, took time.Duration, failed bool)
	Appended(records int, took time.Duration, failed bool)
}

// Options configures a Service; the zero value works.
type Options struct {
	// PermitLease bounds the time between authorize and complete (default
	// controller.DefaultPermitLease).
	PermitLease time.Duration
	// ApprovalTimeout bounds how long a held call waits for an approver:
	// then it is denied approval.required, recorded as decided by
	// system/timeout (TimeoutApprover). Default 10 minutes.
	ApprovalTimeout time.Duration
	// MaxOpenTasks bounds the tasks open at once (default 100000).
	MaxOpenTasks int
	// MaxCertificates bounds the minted certificates kept for fetching
	// (default 10000, most recent first).
	MaxCertificates int
	Observer        Observer
	Logger          *slog.Logger
	// HookApproval is what a gate's require_approval becomes for a coding
	// agent's hook: its own prompt (hooks.ApprovalAsk, the default) or a
	// hold on the broker (hooks.ApprovalHold).
	HookApproval hooks.ApprovalMode
	// HookExplicitAllow answers an allowed hook call with the agent's
	// "allow" instead of no opinion.
	HookExplicitAllow bool
	// HookSidecar is this server's URL and token file, for the commands a
	// coding agent's session-end notice prints.
	HookSidecar hooks.Sidecar
}

// Service is a running govhost's operations over one engine. Safe for
// concurrent use.
type Service struct {
	eng    *govhost.Engine
	ctl    *controller.InvocationController
	broker *controller.ApprovalBroker
	issuer *controller.CertificateIssuer
	opts   Options
	log    *slog.Logger

	mu    sync.Mutex
	tasks map[uuid.UUID]*controller.Task
	certs certBook
	authz authorizations

	decisions   decisionHub
	closedTasks closedBook
	timeouts    approvalTimers

	hooks      *hooks.Service
	stopEvents func()
	done       chan struct{}
}

// New wires a service over eng (which it does not close).
func New(eng *govhost.Engine, opts Options) (*Service, error) {
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 10 * time.Minute
	}
	if opts.MaxOpenTasks <= 0 {
		opts.MaxOpenTasks = 100000
	}
	if opts.MaxCertificates <= 0 {
		opts.MaxCertificates = 10000
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{
		eng: eng, opts: opts, log: log, broker: controller.NewApprovalBroker(false),
		tasks: map[uuid.UUID]*controller.Task{}, certs: certBook{max: opts.MaxCertificates},
		done: make(chan struct{}),
	}
	s.authz.init()
	// Hook calls in ask mode are answered by the agent's own prompt; every
	// other approval goes to the broker.
	cfg := controller.Config{Approvals: hooks.ApprovalCallback(s.approve, nil), PermitLease: opts.PermitLease, Decided: s.decided}
	if opts.Observer != nil {
		cfg.Gates = observedGates{inner: eng.Gates, obs: opts.Observer}
		cfg.Evidence = observedEvidence{Store: eng.Evidence, obs: opts.Observer}
	}
	ctl, err := eng.NewController(cfg)
	if err != nil {
		return nil, err
	}
	s.ctl = ctl
	s.issuer = eng.Issuer()
	if s.hooks, err = hooks.New(hooks.Config{
		Controller: ctl, TaskOptions: s.hookTask, Certify: s.certifyHook,
		Approval: opts.HookApproval, ExplicitAllow: opts.HookExplicitAllow, Sessions: eng.Sessions,
		Sidecar: opts.HookSidecar, Head: s.chainHeadHash,
	}); err != nil {
		return nil, err
	}
	events, stop := s.broker.Events()
	s.stopEvents = stop
	go s.routeApprovalEvents(events)
	return s, nil
}

// Close ends the approval event streams; pending approvals are denied as
// their waits end. It does not close the engine.
func (s *Service) Close() {
	s.stopEvents()
	s.broker.Close()
	<-s.done
	s.decisions.close()
}

// Controller is the service's controller (for in-process callers and
// benchmarks that compare against the same engine).
func (s *Service) Controller() *controller.InvocationController { return s.ctl }

// PendingApprovals counts approvals waiting for a decision.
func (s *Service) PendingApprovals() int { return len(s.broker.Pending()) }

// OpenTaskCount counts the open tasks.
func (s *Service) OpenTaskCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tasks)
}

// DroppedObservations counts projections lost to slow subscribers.
func (s *Service) DroppedObservations() int64 { return s.eng.Projector.Dropped() }

// observedGates reports every evaluation of the engine's gates.
type observedGates struct {
	inner controller.GateProvider
	obs   Observer
}

func (g observedGates) GateFor(ctx context.Context, b governance.ExecutableGateBinding) (controller.Gate, error) {
	gate, err := g.inner.GateFor(ctx, b)
	if err != nil {
		return nil, err
	}
	return observedGate{Gate: gate, id: b.GateID(), obs: g.obs}, nil
}

type observedGate struct {
	controller.Gate
	id  string
	obs Observer
}

func (g observedGate) Evaluate(ctx context.Context, in abi.GateInput) (abi.GateOutput, error) {
	start := time.Now()
	out, err := g.Gate.Evaluate(ctx, in)
	g.obs.GateEvaluated(g.id, out.Decision, out.ReasonCode, time.Since(start), err != nil)
	return out, err
}

// EvaluateChain keeps the inner gate's chain isolation (controller.ChainGate).
func (g observedGate) EvaluateChain(ctx context.Context, chain string, in abi.GateInput) (abi.GateOutput, error) {
	cg, ok := g.Gate.(controller.ChainGate)
	if !ok {
		return g.Evaluate(ctx, in)
	}
	start := time.Now()
	out, err := cg.EvaluateChain(ctx, chain, in)
	g.obs.GateEvaluated(g.id, out.Decision, out.ReasonCode, time.Since(start), err != nil)
	return out, err
}

var _ controller.ChainGate = observedGate{}

// observedEvidence times appends; it keeps the store's batch append.
type observedEvidence struct {
	evidence.Store
	obs Observer
}

func (e observedEvidence) AppendBatch(ctx context.Context, records []governance.EvidenceRecord) ([]governance.AppendReceipt, error) {
	start := time.Now()
	rc, err := evidence.AppendAll(ctx, e.Store, records)
	e.obs.Appended(len(records), time.Since(start), err != nil)
	return rc, err
}

func (e observedEvidence) Append(ctx context.Context, r governance.EvidenceRecord) (governance.AppendReceipt, error) {
	start := time.Now()
	rc, err := e.Store.Append(ctx, r)
	e.obs.Appended(1, time.Since(start), err != nil)
	return rc, err
}

// errUnavailable marks a failure to record evidence.
var errUnavailable = errors.New("evidence could not be recorded")

// GatePools returns the instance pools of the gates resolved so far, by
// gate id.
func (s *Service) GatePools() []govhost.GatePool { return s.eng.Gates.Pools() }
