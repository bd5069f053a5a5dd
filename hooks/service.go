package hooks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/pathfacts"
)

// Config assembles a Service. Controller and TaskOptions are required.
type Config struct {
	// Controller authorizes and completes the calls. Its approval callback
	// should be wrapped with ApprovalCallback for ApprovalAsk to work.
	Controller *controller.InvocationController
	// TaskOptions chooses the policy pin (and actor) of a new session's
	// task from the session's first event. A Workspace left empty becomes
	// the session's workspace: pathfacts.Workspace of its cwd (the git top
	// level, else the cwd).
	TaskOptions func(ctx context.Context, ev agents.Event) (controller.TaskOptions, error)
	// Certify mints the certificate of a session's closed task; nil keeps
	// the closed boundary without a certificate.
	Certify func(ctx context.Context, boundary governance.ClosedTaskBoundary) (governance.TaskCertificate, error)
	// Approval is what require_approval becomes; default ApprovalAsk.
	// Agents that cannot ask (Codex, Gemini CLI) are always held.
	Approval ApprovalMode
	// ExplicitAllow answers an allow with the agent's "allow" instead of
	// no opinion ({}, the default: the agent's own permission rules still
	// apply).
	ExplicitAllow bool
	// Facts answers whether a path exists; default: the filesystem.
	Facts agents.HostFacts
	// Head returns a chain's head hash, for the session-end notice's
	// verify command when no certificate names it; nil leaves it out.
	Head func(ctx context.Context, chain uuid.UUID) (string, error)
	// Sidecar is how a person reaches this server; the session-end notice
	// prints commands that read the chain through it.
	Sidecar Sidecar
	// Sessions keeps each open session's task durably, so a session
	// continues its task after a restart; nil keeps them in memory only
	// (a restart then starts a new task and leaves the old one open).
	Sessions SessionStore
}

// Sidecar is the address and token file of the server the hooks run in.
type Sidecar struct {
	URL       string
	TokenFile string
}

// Service runs agent sessions as governed tasks. Safe for concurrent use.
type Service struct {
	cfg      Config
	mu       sync.Mutex
	sessions map[string]*session
	ended    map[string]*Ended
}

// session is one agent session's open task and its authorized calls.
type session struct {
	once    sync.Once
	openErr error
	task    *controller.Task
	pending *agents.Pending[[]controller.Permit]
	// lost counts the calls authorized before a restart whose outcome the
	// resumed task recorded as lost: their post-tool events are answered
	// without a pending permit, once each.
	lost atomic.Int64
}

// Ended is what a closed session left: its boundary and certificate.
type Ended struct {
	Agent       agents.Agent
	SessionID   string
	Boundary    governance.ClosedTaskBoundary
	Certificate *governance.TaskCertificate
	// Head is the chain's head after TASK_CLOSED, when Config.Head could
	// read it.
	Head string
	// Unreported counts authorized calls the agent never reported; they
	// were completed as failed ("no_outcome") before the task closed.
	Unreported int
	// CertifyError says why no certificate was minted.
	CertifyError string
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Controller == nil || cfg.TaskOptions == nil {
		return nil, errors.New("hooks: Config.Controller and Config.TaskOptions are required")
	}
	if cfg.Approval == "" {
		cfg.Approval = ApprovalAsk
	}
	if cfg.Approval != ApprovalAsk && cfg.Approval != ApprovalHold {
		return nil, fmt.Errorf("hooks: unknown approval mode %q (want ask or hold)", cfg.Approval)
	}
	if cfg.Facts == nil {
		cfg.Facts = osFacts{}
	}
	return &Service{cfg: cfg, sessions: map[string]*session{}, ended: map[string]*Ended{}}, nil
}

// Result is the answer to one hook event: Answer, or a refusal with Code
// and Err (the edge gives each code its status).
type Result struct {
	Answer agents.Answer
	// Code is a stable error code (the Code* constants) when the event is
	// refused; empty when Answer is the answer.
	Code  string
	Err   error
	Event agents.Event
	// Verdict is the decision on a pre-tool event.
	Verdict *agents.Verdict
	// Ended is set when the event closed its session.
	Ended *Ended
}

// Refused reports a refusal (Code and Err) rather than an answer.
func (r Result) Refused() bool { return r.Code != "" }

// The codes a hook event is refused with.
const (
	CodeMalformed      = "malformed_json"
	CodeAmbiguous      = "ambiguous_json"
	CodeUnknownAgent   = "hook.unknown_agent"
	CodeMissingField   = "hook.missing_field"
	CodeUntranslatable = "hook.untranslatable"
	CodeNoPendingCall  = "hook.no_pending_call"
	CodePermitRefused  = "hook.permit_refused"
	CodeUnknownSession = "hook.unknown_session"
	CodeTaskOpenFailed = "hook.task_open_failed"
	CodeAuthorizeFail  = "hook.authorize_failed"
	CodeCompleteFail   = "hook.complete_failed"
	CodeTaskCloseFail  = "hook.task_close_failed"
)

func refused(code string, err error, ev agents.Event) Result {
	return Result{Code: code, Err: err, Event: ev}
}

// Handle answers one hook event of agent: body is the hook input, event
// names the event when the payload does not (Copilot's camelCase format).
func (s *Service) Handle(ctx context.Context, agent agents.Agent, event string, body []byte) Result {
	d, err := agents.Lookup(agent)
	if err != nil {
		return refused(CodeUnknownAgent, err, agents.Event{})
	}
	ev, err := d.Decode(event, body)
	switch {
	case errors.Is(err, agents.ErrMissingField):
		return refused(CodeMissingField, err, ev)
	case errors.Is(err, agents.ErrAmbiguous):
		return refused(CodeAmbiguous, err, ev)
	case err != nil:
		return refused(CodeMalformed, err, ev)
	}
	switch ev.Kind {
	case agents.KindSessionEnd:
		return s.end(ctx, d, ev)
	case agents.KindObserve, agents.KindSessionStart:
		if ev.SessionID != "" {
			if _, err := s.open(ctx, ev); err != nil {
				return refused(CodeTaskOpenFailed, err, ev)
			}
		}
		return Result{Answer: d.NoOpinion(), Event: ev}
	case agents.KindPreTool:
		return s.pre(ctx, d, ev)
	default:
		return s.post(ctx, d, ev)
	}
}

func sessionKey(ev agents.Event) string { return string(ev.Agent) + "\x00" + ev.SessionID }

// open returns the session's task, opening it on the first event.
func (s *Service) open(ctx context.Context, ev agents.Event) (*session, error) {
	key := sessionKey(ev)
	s.mu.Lock()
	sess, ok := s.sessions[key]
	if !ok {
		sess = &session{pending: agents.NewPending[[]controller.Permit]()}
		s.sessions[key] = sess
	}
	s.mu.Unlock()
	sess.once.Do(func() {
		task, res, resumed, err := s.resume(ctx, ev)
		if resumed {
			sess.lost.Store(int64(len(res.OutcomeLost)))
		}
		if err == nil && !resumed {
			task, err = s.openNew(ctx, ev)
		}
		s.mu.Lock() // current and ChainOf read task under mu
		sess.task, sess.openErr = task, err
		s.mu.Unlock()
	})
	if sess.openErr != nil {
		s.mu.Lock()
		if s.sessions[key] == sess {
			delete(s.sessions, key) // let a later event try again
		}
		s.mu.Unlock()
		return nil, sess.openErr
	}
	return sess, nil
}

// openNew opens the session's task and keeps it durably.
func (s *Service) openNew(ctx context.Context, ev agents.Event) (*controller.Task, error) {
	opts, err := s.cfg.TaskOptions(ctx, ev)
	if err != nil {
		return nil, err
	}
	if opts.Workspace == "" && filepath.IsAbs(ev.Cwd) {
		// The session's workspace (its cwd's git top level, else the
		// cwd) is the task's: a policy naming $workspace serves every
		// project on the machine.
		opts.Workspace = pathfacts.Workspace(ev.Cwd)
	}
	task, err := s.cfg.Controller.OpenTask(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := s.keep(ctx, ev, task); err != nil {
		// A session that could not continue after a restart is refused
		// now, while nothing of it is recorded.
		return nil, fmt.Errorf("hooks: keep the session's task: %w", err)
	}
	return task, nil
}

// find returns the session's open task: held here, or kept by the process
// before a restart and resumed now; nil when the session has none.
func (s *Service) find(ctx context.Context, ev agents.Event) (*session, error) {
	if sess := s.current(ev); sess != nil {
		return sess, nil
	}
	if ok, err := s.kept(ctx, ev); err != nil || !ok {
		return nil, err
	}
	return s.open(ctx, ev)
}

// current returns the session's open task, if any.
func (s *Service) current(ev agents.Event) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[sessionKey(ev)]
	if sess == nil || sess.task == nil {
		return nil
	}
	return sess
}

// Session returns what an ended session left, by agent and session id.
func (s *Service) Session(agent agents.Agent, sessionID string) (*Ended, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ended[string(agent)+"\x00"+sessionID]
	return e, ok
}

// ChainOf returns the evidence chain of a session's open task, or of the
// task it last ended with.
func (s *Service) ChainOf(agent agents.Agent, sessionID string) (uuid.UUID, bool) {
	key := string(agent) + "\x00" + sessionID
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[key]; sess != nil && sess.task != nil {
		return sess.task.ChainID(), true
	}
	if e := s.ended[key]; e != nil {
		return e.Boundary.ChainID, true
	}
	return uuid.Nil, false
}

// Open reports the open sessions' count.
func (s *Service) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}
