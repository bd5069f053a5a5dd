// Package wire maps the service's answers (package service, which knows
// nothing of HTTP) onto the wire bodies of /v1 (package api). It is the
// one mapping the two HTTP edges (the API in package server and the web
// console) and the command line's local mode share, so that a body reads
// the same whichever of them wrote it.
package wire

import (
	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/service"
)

// TaskInfo is a task's wire form.
func TaskInfo(t service.TaskInfo) api.TaskInfo {
	return api.TaskInfo{
		TaskID: t.TaskID, ChainID: t.ChainID, PolicyID: t.PolicyID, PolicyVersion: t.PolicyVersion,
		PolicyDigest: t.PolicyDigest, Workspace: t.Workspace,
	}
}

// TaskInfos is a list of tasks' wire form (never nil).
func TaskInfos(ts []service.TaskInfo) []api.TaskInfo { return each(ts, TaskInfo) }

// ClosedTask is a closed task's wire form.
func ClosedTask(c service.ClosedTask) api.ClosedTask {
	unfinished := c.UnfinishedOperations
	if unfinished == nil {
		unfinished = []uuid.UUID{}
	}
	return api.ClosedTask{
		TaskInfo: TaskInfo(c.TaskInfo), Head: c.Head, OpenedAt: c.OpenedAt, ClosedAt: c.ClosedAt,
		UnfinishedOperations: unfinished,
	}
}

// TaskStates is the console's task list.
func TaskStates(ts []service.TaskState) []api.TaskState {
	return each(ts, func(t service.TaskState) api.TaskState {
		return api.TaskState{
			TaskInfo: TaskInfo(t.TaskInfo), State: t.State, Head: t.Head, OpenedAt: t.OpenedAt, ClosedAt: t.ClosedAt,
			CertificateID: t.CertificateID,
		}
	})
}

// AuthorizeResult is an authorization's wire form.
func AuthorizeResult(r service.AuthorizeResult) api.AuthorizeResult {
	out := api.AuthorizeResult{Decision: string(r.Decision), AuthorizationID: r.AuthorizationID, ApprovalID: r.ApprovalID}
	if p := r.Permit; p != nil {
		out.Permit = &api.PermitInfo{
			PermitID: p.ID, OperationID: p.OperationID, TaskID: p.TaskBoundaryID, Tool: p.Tool,
			ArgumentDigest: p.ArgumentDigest, Arguments: p.Arguments, ExpiresAt: p.ExpiresAt,
		}
	}
	if d := r.Denial; d != nil {
		out.Denial = &api.Denial{OperationID: d.OperationID, GateID: d.GateID, ReasonCode: d.ReasonCode, Message: d.Message}
	}
	return out
}

// Approval is a held call's wire form, as an approver sees it.
func Approval(a service.Approval) api.Approval {
	out := api.Approval{
		ApprovalID: a.ApprovalID, OperationID: a.OperationID, Tool: a.Tool, Operation: a.Operation, GateID: a.GateID,
		ReasonCode: a.ReasonCode, Message: a.Message, Actor: a.Actor, Arguments: a.Arguments, Status: a.Status,
		Decision: a.Decision, DecidedAt: a.DecidedAt, Approver: a.Approver, ArgumentDigest: a.ArgumentDigest,
		Action: a.Action, MatchedRule: a.MatchedRule, AgentName: a.AgentName, RunID: a.RunID, ToolCallID: a.ToolCallID,
		Cwd: a.Cwd, Since: a.Since,
	}
	for _, f := range a.PathFacts {
		out.PathFacts = append(out.PathFacts, api.PathFact{
			Arg: f.Arg, Raw: f.Raw, Resolved: f.Resolved, Exists: f.Exists, Kind: string(f.Kind), NearestExisting: f.NearestExisting,
		})
	}
	return out
}

// Approvals is a list of held calls' wire form (never nil).
func Approvals(as []service.Approval) []api.Approval { return each(as, Approval) }

// DecisionEvent is one verdict of the live decision stream.
func DecisionEvent(ev service.DecisionEvent) api.DecisionEvent {
	return api.DecisionEvent{
		At: ev.At, Verdict: string(ev.Verdict), TaskID: ev.TaskID, ChainID: ev.ChainID, OperationID: ev.OperationID,
		Tool: ev.Tool, Operation: ev.Operation, AgentName: ev.AgentName, RunID: ev.RunID, ToolCallID: ev.ToolCallID,
		ArgumentDigest: ev.ArgumentDigest, GateID: ev.GateID, ReasonCode: ev.ReasonCode, Message: ev.Message,
		ApprovalID: ev.ApprovalID,
	}
}

// Certificate is a minted certificate's wire form.
func Certificate(c service.Certificate) api.Certificate {
	return api.Certificate{ChainID: c.ChainID, Certificate: c.Certificate}
}

// ChainHead is a chain head's wire form.
func ChainHead(h service.ChainHead) api.ChainHead {
	return api.ChainHead{ChainID: h.ChainID, Sequence: h.Sequence, Hash: h.Hash}
}

// PolicySummary is a stored policy version's wire form.
func PolicySummary(p service.PolicySummary) api.PolicySummary {
	return api.PolicySummary{PolicyID: p.PolicyID, Version: p.Version, Digest: p.Digest, ReleaseState: p.ReleaseState, GateCount: p.GateCount}
}

// PolicySummaries is a list of policy versions' wire form (never nil).
func PolicySummaries(ps []service.PolicySummary) []api.PolicySummary { return each(ps, PolicySummary) }

// Unbound is an unbind's wire form.
func Unbound(u service.Unbound) api.Unbound {
	return api.Unbound{PolicyID: u.PolicyID.String(), Version: u.Version, Scope: string(u.Scope), Selector: u.Selector, Removed: u.Removed}
}

// GoverningPolicy is the wire form of what governs an unlabelled call.
func GoverningPolicy(g service.GoverningPolicy) api.GoverningPolicy {
	return api.GoverningPolicy{Policy: PolicySummary(g.Policy), Bindings: each(g.Bindings, func(b service.GoverningBinding) api.GoverningBinding {
		out := api.GoverningBinding{
			GateID: b.GateID, Order: b.Order, Level: b.Level, ToolIDs: b.ToolIDs, ModuleDigest: b.ModuleDigest,
			ABIKind: b.ABIKind, Builtin: b.Builtin, Transform: b.Transform, Config: b.Config,
		}
		if p := b.Pool; p != nil {
			out.Pool = &api.PoolSize{Live: p.Live, Idle: p.Idle, Size: p.Size}
		}
		return out
	})}
}

// Evaluation is a dry run's wire form.
func Evaluation(e service.Evaluation) api.Evaluation {
	return api.Evaluation{
		PolicyID: e.PolicyID, PolicyVersion: e.PolicyVersion, Decision: e.Decision, ReasonCode: e.ReasonCode,
		Message: e.Message, MatchedRule: e.MatchedRule, Gates: each(e.Gates, func(g service.GateAnswer) api.GateAnswer {
			return api.GateAnswer{GateID: g.GateID, Level: g.Level, Decision: g.Decision, ReasonCode: g.ReasonCode,
				Message: g.Message, MatchedRule: g.MatchedRule, Error: g.Error}
		}),
	}
}

// Module is a gate module's wire form.
func Module(m service.Module) api.Module {
	exports := m.Exports
	if exports == nil {
		exports = []string{}
	}
	return api.Module{SHA256: m.SHA256, ABIKind: m.ABIKind, Exports: exports, Size: m.Size, Builtin: m.Builtin}
}

// ModuleUpload is an upload's wire form.
func ModuleUpload(u service.ModuleUpload) api.ModuleUpload {
	return api.ModuleUpload{Module: Module(u.Module), Created: u.Created}
}

// StoredModules is a module listing's wire form (never nil).
func StoredModules(ms []service.StoredModule) []api.StoredModule {
	return each(ms, func(m service.StoredModule) api.StoredModule {
		out := api.StoredModule{Module: Module(m.Module)}
		if m.Refused != nil {
			out.Refused = &api.ErrorDetail{Code: string(m.Refused.Code), Message: m.Refused.Message}
		}
		return out
	})
}

// Bundle is a closed task's certificate and proof as one document.
func Bundle(b service.Bundle) api.Bundle {
	return api.Bundle{Certificate: b.Certificate, Chain: b.Records, Policy: b.Policy, Checkpoint: string(b.Checkpoint)}
}

// each maps a list, giving an empty list (JSON []) for none.
func each[S, W any](in []S, f func(S) W) []W {
	out := make([]W, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
