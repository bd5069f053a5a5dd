package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/internal/sse"
	"github.com/govhost/govhost/server/wire"
	"github.com/govhost/govhost/service"
)

// routes is every endpoint of the API; openapi.yaml documents exactly
// these (TestOpenAPI_MatchesRoutes).
var routes = []route{
	{method: "GET", pattern: "/healthz", public: true, handle: (*Server).healthz},
	{method: "GET", pattern: "/readyz", public: true, handle: (*Server).readyz},
	{method: "GET", pattern: "/v1/openapi.yaml", handle: (*Server).openapi},
	{method: "POST", pattern: "/v1/tasks", handle: (*Server).openTask},
	{method: "GET", pattern: "/v1/tasks", handle: (*Server).listTasks},
	{method: "POST", pattern: "/v1/tasks/{task_id}/close", handle: (*Server).closeTask},
	{method: "POST", pattern: "/v1/tasks/{task_id}/authorize", handle: (*Server).authorize},
	{method: "POST", pattern: "/v1/tasks/{task_id}/complete", handle: (*Server).complete},
	{method: "GET", pattern: "/v1/authorizations/{authorization_id}", handle: (*Server).waitAuthorization},
	{method: "GET", pattern: "/v1/approvals", handle: (*Server).listApprovals},
	{method: "GET", pattern: "/v1/approvals/events", handle: (*Server).approvalEvents},
	{method: "POST", pattern: "/v1/approvals/{approval_id}", handle: (*Server).resolveApproval},
	{method: "GET", pattern: "/v1/decisions/events", role: roleOperator, handle: (*Server).decisionEvents},
	{method: "POST", pattern: "/v1/chains/{chain_id}/certificate", handle: (*Server).mint},
	{method: "GET", pattern: "/v1/certificates/{certificate_id}", handle: (*Server).certificate},
	{method: "GET", pattern: "/v1/chains/{chain_id}", handle: (*Server).exportChain},
	{method: "GET", pattern: "/v1/chains/{chain_id}/head", handle: (*Server).chainHead},
	{method: "POST", pattern: "/v1/chains/{chain_id}/verify", handle: (*Server).verifyChain},
	{method: "POST", pattern: "/v1/policies", handle: (*Server).putPolicy, role: roleOperator},
	{method: "GET", pattern: "/v1/policies/resolve", handle: (*Server).resolvePolicy},
	{method: "GET", pattern: "/v1/policies/{policy_id}/versions/{version}", handle: (*Server).showPolicy},
	{method: "POST", pattern: "/v1/policies/{policy_id}/versions/{version}/activate", handle: (*Server).activatePolicy, role: roleOperator},
	{method: "POST", pattern: "/v1/policies/{policy_id}/versions/{version}/bind", handle: (*Server).bindPolicy, role: roleOperator},
	{method: "POST", pattern: "/v1/policies/{policy_id}/versions/{version}/unbind", handle: (*Server).unbindPolicy, role: roleOperator},
	{method: "GET", pattern: "/v1/bindings", handle: (*Server).listBindings},
	{method: "POST", pattern: "/v1/evaluate", handle: (*Server).evaluate},
	{method: "POST", pattern: "/v1/modules", handle: (*Server).uploadModule, role: roleOperator, bodyLimit: func(s *Server) int64 { return s.maxModule }},
	{method: "GET", pattern: "/v1/modules", handle: (*Server).listModules},
	{method: "GET", pattern: "/v1/modules/{digest}", handle: (*Server).showModule},
	{method: "GET", pattern: "/v1/policies", handle: (*Server).listPolicies},
	{method: "GET", pattern: "/v1/policies/{policy_id}", handle: (*Server).policyVersions},
	{method: "GET", pattern: "/v1/tasks/{task_id}/bundle", handle: (*Server).bundle},
	{method: "POST", pattern: "/v1/checkpoints", role: roleOperator, handle: (*Server).signCheckpoint},
	{method: "POST", pattern: "/v1/tasks/{task_id}/exceptions", role: roleOperator, handle: (*Server).grantException},
	{method: "POST", pattern: "/v1/tasks/{task_id}/break-glass", role: roleOperator, handle: (*Server).breakGlass},
	{method: "POST", pattern: "/v1/hooks/{agent}", handle: (*Server).hook, bodyLimit: func(*Server) int64 { return api.MaxHookBody }},
	{method: "GET", pattern: "/v1/hooks/{agent}/sessions/{session_id}", handle: (*Server).hookSession},
	{method: "GET", pattern: "/ui/{path...}", public: true, handle: (*Server).console},
	{method: "POST", pattern: "/ui/{path...}", public: true, handle: (*Server).console},
}

func pathID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		return uuid.Nil, refuse(string(service.CodeInvalidRequest), fmt.Sprintf("%s %q is not a UUID", name, r.PathValue(name)))
	}
	return id, nil
}

func bodyID(field, v string) (uuid.UUID, error) {
	if v == "" {
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil, refuse(string(service.CodeInvalidRequest), fmt.Sprintf("%s %q is not a UUID", field, v))
	}
	return id, nil
}

func waitOf(ms int64) (time.Duration, error) {
	if ms < 0 || ms > api.MaxWaitMS {
		return 0, refuse(string(service.CodeInvalidRequest), fmt.Sprintf("wait_ms must be 0..%d", api.MaxWaitMS))
	}
	return time.Duration(ms) * time.Millisecond, nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, api.Health{Status: "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) error {
	if !s.ready.Load() {
		return refuse(codeNotReady, "stores and gates are still loading")
	}
	writeJSON(w, http.StatusOK, api.Health{Status: "ready"})
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(OpenAPI)
	return err
}

func (s *Server) openTask(w http.ResponseWriter, r *http.Request) error {
	var req api.OpenTaskRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	pid, err := bodyID("policy_id", req.PolicyID)
	if err != nil {
		return err
	}
	info, err := s.svc.OpenTask(r.Context(), service.OpenTaskRequest{
		PolicyID: pid, Version: req.Version, Role: req.Role, Resource: req.Resource, Actor: req.Actor, Workspace: req.Workspace,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.TaskInfo(info))
	return nil
}

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, api.TaskList{Tasks: wire.TaskInfos(s.svc.ListTasks(r.Context()))})
	return nil
}

func (s *Server) closeTask(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "task_id")
	if err != nil {
		return err
	}
	if err := decode(r, &struct{}{}); err != nil {
		return err
	}
	out, err := s.svc.CloseTask(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.ClosedTask(out))
	return nil
}

// callOf is the governed call a wire request names: the one copy from the
// decoded body to what the controller governs.
func callOf(c *api.CallRequest) controller.Call {
	return controller.Call{
		Tool: c.Tool, Operation: c.Operation, Action: c.Action, Arguments: c.Arguments, Cwd: c.Cwd, PathArgs: c.PathArgs,
		RunID: c.RunID, AgentName: c.AgentName, ToolCallID: c.ToolCallID, Metadata: c.Metadata,
	}
}

func writeAuthorization(w http.ResponseWriter, res service.AuthorizeResult) {
	status := http.StatusOK
	if res.Decision == service.DecisionPending {
		status = http.StatusAccepted
	}
	writeJSON(w, status, wire.AuthorizeResult(res))
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "task_id")
	if err != nil {
		return err
	}
	var req api.AuthorizeRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	wait, err := waitOf(req.WaitMS)
	if err != nil {
		return err
	}
	res, err := s.svc.Authorize(r.Context(), id, callOf(&req.CallRequest), wait)
	if err != nil {
		return err
	}
	writeAuthorization(w, res)
	return nil
}

func (s *Server) waitAuthorization(w http.ResponseWriter, r *http.Request) error {
	var ms int64
	if v := r.URL.Query().Get("wait_ms"); v != "" {
		var err error
		if ms, err = strconv.ParseInt(v, 10, 64); err != nil {
			return refuse(string(service.CodeInvalidRequest), "wait_ms must be an integer")
		}
	}
	wait, err := waitOf(ms)
	if err != nil {
		return err
	}
	res, err := s.svc.Wait(r.Context(), r.PathValue("authorization_id"), wait)
	if err != nil {
		return err
	}
	writeAuthorization(w, res)
	return nil
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "task_id")
	if err != nil {
		return err
	}
	var req api.CompleteRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.DurationUS < 0 {
		return refuse(string(service.CodeInvalidRequest), "duration_us must not be negative")
	}
	err = s.svc.Complete(r.Context(), id, service.CompleteRequest{
		PermitID: req.PermitID, Failed: req.Failed, ErrorClass: req.ErrorClass, ResultDigest: req.ResultDigest,
		Duration: time.Duration(req.DurationUS) * time.Microsecond,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.Completed{PermitID: req.PermitID, Recorded: true})
	return nil
}

func (s *Server) listApprovals(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, api.ApprovalList{Approvals: wire.Approvals(s.svc.PendingApprovalList())})
	return nil
}

func (s *Server) resolveApproval(w http.ResponseWriter, r *http.Request) error {
	var req api.ResolveApprovalRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	id := r.PathValue("approval_id")
	if err := s.svc.Resolve(id, service.ApprovalResolution{
		Decision: abi.Decision(req.Decision), Approver: req.Approver, ArgumentDigest: req.ArgumentDigest, Reason: req.Reason,
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.Resolved{ApprovalID: id, Decision: req.Decision})
	return nil
}

// approvalEvents streams broker events as server-sent events ("pending"
// and "resolved", data: the approval) until the client leaves or the
// server shuts down.
func (s *Server) approvalEvents(w http.ResponseWriter, r *http.Request) error {
	events, cancel := s.svc.ApprovalEvents()
	defer cancel()
	sse.Stream(r.Context(), s.stop, w, events, func(ev controller.BrokerEvent) (string, []byte, bool) {
		data, err := json.Marshal(wire.Approval(service.ApprovalOf(ev.Approval)))
		return string(ev.Kind), data, err == nil
	})
	return nil
}

// decisionEvents streams verdicts as server-sent events ("decision", data:
// a DecisionEvent). A reader that falls behind is dropped by the service:
// its stream ends and it reconnects.
func (s *Server) decisionEvents(w http.ResponseWriter, r *http.Request) error {
	events, cancel, err := s.svc.DecisionEvents()
	if err != nil {
		return err
	}
	defer cancel()
	sse.Stream(r.Context(), s.stop, w, events, func(ev service.DecisionEvent) (string, []byte, bool) {
		data, err := json.Marshal(wire.DecisionEvent(ev))
		return "decision", data, err == nil
	})
	return nil
}

// console serves the web console (package console): public here, it
// signs people in with its own session cookie.
func (s *Server) console(w http.ResponseWriter, r *http.Request) error {
	if s.consoleUI == nil {
		return refuse(codeNotFound, "the console is off (serve --console=false)")
	}
	s.consoleUI.ServeHTTP(w, r)
	return nil
}

func (s *Server) mint(w http.ResponseWriter, r *http.Request) error {
	chain, err := pathID(r, "chain_id")
	if err != nil {
		return err
	}
	var req api.MintRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	cert, err := s.svc.Mint(r.Context(), chain, req.ExpectedHead)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.Certificate(cert))
	return nil
}

func (s *Server) certificate(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "certificate_id")
	if err != nil {
		return err
	}
	cert, err := s.svc.CertificateByID(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Certificate(cert))
	return nil
}

func (s *Server) exportChain(w http.ResponseWriter, r *http.Request) error {
	chain, err := pathID(r, "chain_id")
	if err != nil {
		return err
	}
	// Buffer so that a refusal (unknown chain) is still a proper error body.
	var buf jsonLines
	if err := s.svc.ExportChain(r.Context(), chain, &buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(buf.b)
	return err
}

// jsonLines collects an export.
type jsonLines struct{ b []byte }

func (j *jsonLines) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }

func (s *Server) chainHead(w http.ResponseWriter, r *http.Request) error {
	chain, err := pathID(r, "chain_id")
	if err != nil {
		return err
	}
	head, err := s.svc.ChainHead(r.Context(), chain)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.ChainHead(head))
	return nil
}

func (s *Server) verifyChain(w http.ResponseWriter, r *http.Request) error {
	chain, err := pathID(r, "chain_id")
	if err != nil {
		return err
	}
	var req api.VerifyRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	res, err := s.svc.VerifyChain(r.Context(), chain, req.ExpectedHead)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) putPolicy(w http.ResponseWriter, r *http.Request) error {
	// The body is a policy file: checked strictly by its own loader.
	var file json.RawMessage
	if err := decode(r, &file); err != nil {
		return err
	}
	sum, err := s.svc.PutPolicy(r.Context(), file)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.PolicySummary(sum))
	return nil
}

func (s *Server) policyPath(r *http.Request) (uuid.UUID, string, error) {
	id, err := pathID(r, "policy_id")
	return id, r.PathValue("version"), err
}

func (s *Server) showPolicy(w http.ResponseWriter, r *http.Request) error {
	id, version, err := s.policyPath(r)
	if err != nil {
		return err
	}
	snap, err := s.svc.ShowPolicy(r.Context(), id, version)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, snap)
	return nil
}

func (s *Server) activatePolicy(w http.ResponseWriter, r *http.Request) error {
	id, version, err := s.policyPath(r)
	if err != nil {
		return err
	}
	var req api.ActivateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	sum, err := s.svc.ActivatePolicy(r.Context(), id, version, req.Actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.PolicySummary(sum))
	return nil
}

func (s *Server) bindPolicy(w http.ResponseWriter, r *http.Request) error {
	id, version, err := s.policyPath(r)
	if err != nil {
		return err
	}
	var req api.BindRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	b, err := s.svc.BindPolicyBy(r.Context(), id, version, governance.PolicyScope(req.Scope), req.Selector, actorOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, b)
	return nil
}

// unbindPolicy removes the version's bindings at one scope: the way out of
// a binding that should not govern (and of a data directory whose
// resolution is ambiguous).
func (s *Server) unbindPolicy(w http.ResponseWriter, r *http.Request) error {
	id, version, err := s.policyPath(r)
	if err != nil {
		return err
	}
	var req api.UnbindRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.svc.UnbindPolicy(r.Context(), id, version, governance.PolicyScope(req.Scope), req.Selector, actorOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Unbound(out))
	return nil
}

// listBindings is GET /v1/bindings[?scope=&scope_id=]: every binding, or
// those at one scope (and selector).
func (s *Server) listBindings(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	bs, err := s.svc.Bindings(r.Context(), q.Get("scope"), q.Get("scope_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.BindingList{Bindings: bs})
	return nil
}

func (s *Server) resolvePolicy(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	sum, err := s.svc.ResolvePolicy(r.Context(), q.Get("role"), q.Get("resource"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.PolicySummary(sum))
	return nil
}

func (s *Server) evaluate(w http.ResponseWriter, r *http.Request) error {
	var req api.EvaluateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	pid, err := bodyID("policy_id", req.PolicyID)
	if err != nil {
		return err
	}
	res, err := s.svc.Evaluate(r.Context(), service.EvaluateRequest{
		PolicyID: pid, Version: req.Version, Role: req.Role, Resource: req.Resource, Workspace: req.Workspace, Call: callOf(&req.Call),
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.Evaluation(res))
	return nil
}
