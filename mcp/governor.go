package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/governance"
)

// Governor decides the governed calls of one MCP session, which is one
// govhost task: Authorize is the first phase of a call (a permit or a
// recorded denial), Complete the second (the call's outcome), Close ends
// the task and mints its certificate. The embedded engine (TaskGovernor)
// and a running sidecar implement it.
type Governor interface {
	// Authorize returns a permit, or *governance.GovernanceDeniedError with
	// the gate's reason and model-facing message. Any other error means the
	// call could not be governed and must not be forwarded.
	Authorize(ctx context.Context, call controller.Call) (controller.Permit, error)
	// Complete records the outcome of a permitted call.
	Complete(ctx context.Context, p controller.Permit, out controller.Outcome) error
	// Close closes the task and mints its certificate; it returns where the
	// certificate is (a file path or a URL).
	Close(ctx context.Context) (string, error)
}

// ChainHeads is what a TaskGovernor reads of the evidence store: the head
// of a closed task's chain, to certify it (an evidence.Store has it).
type ChainHeads interface {
	Head(ctx context.Context, chainID uuid.UUID) (governance.ChainHead, error)
}

// PolicySnapshots is what PolicyBound reads of the policy store: one
// stored version (a policy.Store has it).
type PolicySnapshots interface {
	Get(ctx context.Context, policyID uuid.UUID, version string) (governance.PolicySnapshot, error)
}

// TaskGovernor governs a session in-process: one controller task, its
// certificate written as JSON into CertDir when the session closes.
type TaskGovernor struct {
	Ctl      *controller.InvocationController
	Task     *controller.Task
	Issuer   *controller.CertificateIssuer
	Evidence ChainHeads
	// CertDir receives <task id>.json; "" writes no file and Close returns
	// the certificate's id.
	CertDir string
}

var _ Governor = (*TaskGovernor)(nil)

// Authorize implements Governor.
func (g *TaskGovernor) Authorize(ctx context.Context, call controller.Call) (controller.Permit, error) {
	return g.Task.Authorize(ctx, call)
}

// Complete implements Governor.
func (g *TaskGovernor) Complete(ctx context.Context, p controller.Permit, out controller.Outcome) error {
	out.TaskBoundaryID = g.Task.ID()
	return g.Ctl.Complete(ctx, p.ID, out)
}

// Close implements Governor: TASK_CLOSED, then the certificate minted from
// the verified chain.
func (g *TaskGovernor) Close(ctx context.Context) (string, error) {
	boundary, err := g.Task.Close(ctx)
	if err != nil {
		return "", err
	}
	head, err := g.Evidence.Head(ctx, boundary.ChainID)
	if err != nil {
		return "", err
	}
	cert, err := g.Issuer.Mint(ctx, boundary, head.Hash)
	if err != nil {
		return "", err
	}
	// The chain id travels with the certificate: with it anyone holding the
	// evidence can verify the chain against the certified head.
	text, err := json.MarshalIndent(struct {
		ChainID     uuid.UUID                  `json:"chain_id"`
		Certificate governance.TaskCertificate `json:"certificate"`
	}{boundary.ChainID, cert}, "", "  ")
	if err != nil {
		return "", err
	}
	if g.CertDir == "" {
		return "certificate " + cert.CertificateID.String(), nil
	}
	if err := os.MkdirAll(g.CertDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(g.CertDir, boundary.TaskBoundaryID.String()+".json")
	if err := os.WriteFile(path, append(text, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("mcp: write certificate: %w", err)
	}
	return path, nil
}

// PolicyBound reports, for Proxy.Bound, which tool ids some gate binding
// of the pinned policy version names: a tool no binding names is denied on
// every call (policy.no_gate_binding).
func PolicyBound(store PolicySnapshots, id uuid.UUID, version string) func(context.Context, []string) (map[string]bool, error) {
	return func(ctx context.Context, toolIDs []string) (map[string]bool, error) {
		snap, err := store.Get(ctx, id, version)
		if err != nil {
			return nil, err
		}
		out := make(map[string]bool, len(toolIDs))
		for _, t := range toolIDs {
			for _, b := range snap.GateBindings() {
				if b.AppliesTo(t) {
					out[t] = true
					break
				}
			}
		}
		return out, nil
	}
}
