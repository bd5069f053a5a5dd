package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// SessionStore keeps each open session's task durably, so that a session
// continues its task after the server restarts (govhost.Engine.Sessions
// implements it over the engine's own database). Writes must be synced
// before they return.
type SessionStore interface {
	PutSession(ctx context.Context, key string, value []byte) error
	GetSession(ctx context.Context, key string) (value []byte, ok bool, err error)
	DeleteSession(ctx context.Context, key string) error
}

// keptSession is what a SessionStore keeps of an open session: enough to
// resume its task in another process.
type keptSession struct {
	Agent     agents.Agent             `json:"agent"`
	SessionID string                   `json:"session_id"`
	Task      controller.ResumeOptions `json:"task"`
}

// storeKey is a session's key in the SessionStore: agent names hold no
// "/", so the key is unambiguous.
func storeKey(ev agents.Event) string { return string(ev.Agent) + "/" + ev.SessionID }

// keep records the session's newly opened task.
func (s *Service) keep(ctx context.Context, ev agents.Event, t *controller.Task) error {
	if s.cfg.Sessions == nil {
		return nil
	}
	value, err := json.Marshal(keptSession{Agent: ev.Agent, SessionID: ev.SessionID, Task: t.ResumeOptions()})
	if err != nil {
		return err
	}
	return s.cfg.Sessions.PutSession(context.WithoutCancel(ctx), storeKey(ev), value)
}

// resume continues the task a previous process kept for the session; ok is
// false when there is none to continue (never kept, or already closed:
// then the stale entry is forgotten).
func (s *Service) resume(ctx context.Context, ev agents.Event) (*controller.Task, controller.Resumed, bool, error) {
	if s.cfg.Sessions == nil {
		return nil, controller.Resumed{}, false, nil
	}
	value, ok, err := s.cfg.Sessions.GetSession(ctx, storeKey(ev))
	if err != nil || !ok {
		return nil, controller.Resumed{}, false, err
	}
	var kept keptSession
	if err := json.Unmarshal(value, &kept); err != nil {
		return nil, controller.Resumed{}, false, s.cfg.Sessions.DeleteSession(context.WithoutCancel(ctx), storeKey(ev))
	}
	t, res, err := s.cfg.Controller.ResumeTask(ctx, kept.Task)
	var nf *governance.PolicyNotFoundError
	var ve *governance.ValidationError
	if errors.Is(err, controller.ErrTaskClosed) || errors.Is(err, controller.ErrResumeMismatch) || errors.As(err, &nf) || errors.As(err, &ve) {
		// Closed before the restart and forgotten too late, or a task that
		// cannot continue here (its policy or its chain is gone): the
		// session starts a new task rather than being refused forever.
		return nil, controller.Resumed{}, false, s.cfg.Sessions.DeleteSession(context.WithoutCancel(ctx), storeKey(ev))
	}
	if err != nil {
		return nil, controller.Resumed{}, false, fmt.Errorf("hooks: continue task %s of session %s: %w", kept.Task.TaskID, storeKey(ev), err)
	}
	return t, res, true, nil
}

// kept reports whether a previous process kept a task for the session.
func (s *Service) kept(ctx context.Context, ev agents.Event) (bool, error) {
	if s.cfg.Sessions == nil {
		return false, nil
	}
	_, ok, err := s.cfg.Sessions.GetSession(ctx, storeKey(ev))
	return ok, err
}

// forget drops an ended session's entry; a failure leaves an entry whose
// chain is closed, which the next resume forgets.
func (s *Service) forget(ctx context.Context, ev agents.Event) {
	if s.cfg.Sessions != nil {
		_ = s.cfg.Sessions.DeleteSession(context.WithoutCancel(ctx), storeKey(ev))
	}
}
