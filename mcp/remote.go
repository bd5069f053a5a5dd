package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
	"github.com/govhost/govhost/server/client"
)

// RemoteGovernor governs a session through a running sidecar (govhost
// serve): one task there; approvals wait on the sidecar's approvals API,
// where a person (or any tool holding the token) resolves them.
type RemoteGovernor struct {
	Client *client.Client
	Task   api.TaskInfo
	// BaseURL is the sidecar's URL (for the certificate's location).
	BaseURL string
	// ApprovalTimeout bounds a call's wait for approval; then the proxy
	// resolves the approval as denied, so the sidecar records why. Zero
	// waits as long as the call does.
	ApprovalTimeout time.Duration
}

var _ Governor = (*RemoteGovernor)(nil)

// OpenRemote opens the session's task on the sidecar.
func OpenRemote(ctx context.Context, c *client.Client, baseURL string, req api.OpenTaskRequest, approvalTimeout time.Duration) (*RemoteGovernor, error) {
	task, err := c.OpenTask(ctx, req)
	if err != nil {
		return nil, err
	}
	return &RemoteGovernor{Client: c, Task: task, BaseURL: baseURL, ApprovalTimeout: approvalTimeout}, nil
}

// approvalTimeoutActor is who denies an approval nobody answered in time.
var approvalTimeoutActor = &governance.ActorRef{Kind: "system", ID: "govhost-mcp"}

// Authorize implements Governor: authorize, then long-poll a pending
// approval until it is resolved, the approval timeout passes or the call
// is cancelled (both resolve it as denied).
func (g *RemoteGovernor) Authorize(ctx context.Context, call controller.Call) (controller.Permit, error) {
	var deadline time.Time
	if g.ApprovalTimeout > 0 {
		deadline = time.Now().Add(g.ApprovalTimeout)
	}
	wait := func() time.Duration {
		w := time.Duration(api.MaxWaitMS) * time.Millisecond
		if !deadline.IsZero() {
			w = min(w, time.Until(deadline))
		}
		return max(w, 0)
	}
	res, err := g.Client.Authorize(ctx, g.Task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{
		Tool: call.Tool, Operation: call.Operation, Action: call.Action, Arguments: call.Arguments, Cwd: call.Cwd,
		PathArgs: call.PathArgs, RunID: call.RunID, AgentName: call.AgentName, ToolCallID: call.ToolCallID, Metadata: call.Metadata,
	}})
	// WaitMS 0: a pending answer comes back at once with its approval id,
	// so a call cancelled while it waits can still resolve its approval.
	for err == nil && res.Decision == api.DecisionPending {
		if ctx.Err() != nil || (!deadline.IsZero() && !time.Now().Before(deadline)) {
			// Nobody answered in time, or the client cancelled: deny it on the
			// sidecar so the operation ends recorded, then read the denial.
			bg := context.WithoutCancel(ctx)
			_ = g.Client.ResolveApproval(bg, res.ApprovalID, api.ResolveApprovalRequest{Decision: api.DecisionDeny, Approver: approvalTimeoutActor})
			res, err = g.Client.Wait(bg, res.AuthorizationID, 10*time.Second)
			if ctx.Err() != nil {
				return controller.Permit{}, ctx.Err()
			}
			break
		}
		next, werr := g.Client.Wait(ctx, res.AuthorizationID, wait())
		if werr != nil && ctx.Err() != nil {
			continue // cancelled mid-wait: the next turn resolves it as denied
		}
		res, err = next, werr
	}
	if err != nil {
		return controller.Permit{}, err
	}
	switch {
	case res.Decision == api.DecisionAllow && res.Permit != nil:
		p := res.Permit
		return controller.Permit{ID: p.PermitID, OperationID: p.OperationID, TaskBoundaryID: p.TaskID, ChainID: g.Task.ChainID,
			Tool: p.Tool, ArgumentDigest: p.ArgumentDigest, Arguments: p.Arguments, ExpiresAt: p.ExpiresAt}, nil
	case res.Decision == api.DecisionDeny && res.Denial != nil:
		d := res.Denial
		return controller.Permit{}, &governance.GovernanceDeniedError{Function: call.Tool, OperationID: d.OperationID, GateID: d.GateID, ReasonCode: d.ReasonCode, Message: d.Message}
	}
	return controller.Permit{}, fmt.Errorf("mcp: sidecar answered %q without a permit or denial", res.Decision)
}

// Complete implements Governor.
func (g *RemoteGovernor) Complete(ctx context.Context, p controller.Permit, out controller.Outcome) error {
	return g.Client.Complete(ctx, g.Task.TaskID, api.CompleteRequest{
		PermitID: p.ID, Failed: out.Failed, ErrorClass: out.ErrorClass, ResultDigest: out.ResultDigest, DurationUS: out.Duration.Microseconds(),
	})
}

// Close implements Governor: the task closed on the sidecar and its
// certificate minted there; the location is the sidecar's certificate URL.
func (g *RemoteGovernor) Close(ctx context.Context) (string, error) {
	closed, err := g.Client.CloseTask(ctx, g.Task.TaskID)
	if err != nil {
		return "", err
	}
	cert, err := g.Client.Mint(ctx, closed.ChainID, closed.Head)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s/v1/certificates/%s (chain %s)", g.BaseURL, cert.Certificate.CertificateID, cert.ChainID), nil
}

// TaskID returns the sidecar's task id.
func (g *RemoteGovernor) TaskID() uuid.UUID { return g.Task.TaskID }

// Bound reports, for --hide-denied, which tool ids a gate binding of the
// task's pinned policy names, through what the sidecar already has: a dry
// run (POST /v1/evaluate, nothing recorded, nobody asked) of each tool
// under the task's policy and version. A binding that applies answers,
// whatever it decides; a tool no binding names gets no gate answer (it
// would be denied policy.no_gate_binding on every call).
func (g *RemoteGovernor) Bound(ctx context.Context, toolIDs []string) (map[string]bool, error) {
	out := make(map[string]bool, len(toolIDs))
	for _, id := range toolIDs {
		ev, err := g.Client.Evaluate(ctx, api.EvaluateRequest{
			PolicyID: g.Task.PolicyID.String(), Version: g.Task.PolicyVersion,
			Call: api.CallRequest{Tool: id, Arguments: json.RawMessage("{}")},
		})
		if err != nil {
			return nil, err
		}
		out[id] = len(ev.Gates) > 0
	}
	return out, nil
}
