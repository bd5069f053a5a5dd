package service

import (
	"context"

	"github.com/google/uuid"

	"github.com/govhost/govhost/agents"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/hooks"
)

// HookRole is the role label a coding agent's session resolves its policy
// with; the resource label is the agent's name (claude, codex, …), so a
// policy can be bound to all agents or to one.
const HookRole = "coding-agent"

// Hooks runs the coding agents' sessions (POST /v1/hooks/{agent}).
func (s *Service) Hooks() *hooks.Service { return s.hooks }

// hookAgent is the agent a hook route names: "claude-code" is Claude
// Code's HTTP hook, every other name is a dialect's.
func hookAgent(name string) agents.Agent {
	if name == "claude-code" {
		return agents.Claude
	}
	return agents.Agent(name)
}

// HandleHook answers one hook event of the agent named name: body is the
// agent's hook input, event names the event when the payload does not.
func (s *Service) HandleHook(ctx context.Context, name, event string, body []byte) hooks.Result {
	return s.hooks.Handle(ctx, hookAgent(name), event, body)
}

// HookSession says where an agent session is: ended (its task closed,
// certified or not), or open with its chain; ok false for a session this
// server does not know. agent is the dialect's name.
func (s *Service) HookSession(name, sessionID string) (agent string, ended *hooks.Ended, chain uuid.UUID, ok bool) {
	a := hookAgent(name)
	if e, found := s.hooks.Session(a, sessionID); found {
		return string(a), e, e.Boundary.ChainID, true
	}
	chain, open := s.hooks.ChainOf(a, sessionID)
	return string(a), nil, chain, open
}

// hookTask pins a new agent session's task to the policy its labels
// resolve to; the hooks service makes the session's cwd its workspace.
func (s *Service) hookTask(ctx context.Context, ev agents.Event) (controller.TaskOptions, error) {
	snap, err := s.eng.Policies.Resolve(ctx, HookRole, string(ev.Agent))
	if err != nil {
		return controller.TaskOptions{}, policyError(err)
	}
	return controller.TaskOptions{PolicyID: snap.PolicyID(), Version: snap.Version(),
		Actor: &governance.ActorRef{Kind: "agent", ID: string(ev.Agent) + ":" + ev.SessionID}}, nil
}

// certifyHook mints a closed agent session's certificate, kept for
// GET /v1/certificates/{id} like every other.
func (s *Service) certifyHook(ctx context.Context, b governance.ClosedTaskBoundary) (governance.TaskCertificate, error) {
	c, err := s.Mint(ctx, b.ChainID, "")
	if err != nil {
		return governance.TaskCertificate{}, err
	}
	return c.Certificate, nil
}

// The codes a hook event is refused with (package hooks), for the
// server's one code list.
const (
	CodeHookUnknownAgent   Code = hooks.CodeUnknownAgent
	CodeHookMissingField   Code = hooks.CodeMissingField
	CodeHookUntranslatable Code = hooks.CodeUntranslatable
	CodeHookNoPendingCall  Code = hooks.CodeNoPendingCall
	CodeHookPermitRefused  Code = hooks.CodePermitRefused
	CodeHookUnknownSession Code = hooks.CodeUnknownSession
	CodeHookTaskOpenFailed Code = hooks.CodeTaskOpenFailed
	CodeHookAuthorizeFail  Code = hooks.CodeAuthorizeFail
	CodeHookCompleteFail   Code = hooks.CodeCompleteFail
	CodeHookTaskCloseFail  Code = hooks.CodeTaskCloseFail
)

// chainHeadHash is a chain's head hash, for the hook session's notice.
func (s *Service) chainHeadHash(ctx context.Context, chain uuid.UUID) (string, error) {
	h, err := s.eng.Evidence.Head(ctx, chain)
	return h.Hash, err
}
