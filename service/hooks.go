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

// chainHeadHash is a chain's head hash, for the hook session's notice.
func (s *Service) chainHeadHash(ctx context.Context, chain uuid.UUID) (string, error) {
	h, err := s.eng.Evidence.Head(ctx, chain)
	return h.Hash, err
}
