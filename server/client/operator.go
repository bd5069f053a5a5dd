package client

import (
	"context"
	"io"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// Policies lists every stored policy version, staged and active.
func (c *Client) Policies(ctx context.Context) ([]api.PolicySummary, error) {
	var out api.PolicyList
	return out.Policies, c.do(ctx, "GET", "/v1/policies", nil, &out)
}

// PolicyVersions lists the stored versions of one policy.
func (c *Client) PolicyVersions(ctx context.Context, id uuid.UUID) ([]api.PolicySummary, error) {
	var out api.PolicyList
	return out.Policies, c.do(ctx, "GET", "/v1/policies/"+id.String(), nil, &out)
}

// ShowPolicy returns a stored policy snapshot.
func (c *Client) ShowPolicy(ctx context.Context, id uuid.UUID, version string) (governance.PolicySnapshot, error) {
	var out governance.PolicySnapshot
	return out, c.do(ctx, "GET", "/v1/policies/"+id.String()+"/versions/"+url.PathEscape(version), nil, &out)
}

func bundlePath(task uuid.UUID, withCheckpoint bool, format string) string {
	q := url.Values{}
	if withCheckpoint {
		q.Set("checkpoint", "1")
	}
	if format != "" {
		q.Set("format", format)
	}
	path := "/v1/tasks/" + task.String() + "/bundle"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// Bundle mints a closed task's certificate at its chain's head and
// returns it with its proof (chain, policy snapshot; with withCheckpoint
// the head signed with the server's data directory key).
func (c *Client) Bundle(ctx context.Context, task uuid.UUID, withCheckpoint bool) (api.Bundle, error) {
	var out api.Bundle
	return out, c.do(ctx, "GET", bundlePath(task, withCheckpoint, ""), nil, &out)
}

// BundleTar copies the bundle folder of a closed task, as a tar archive, to w.
func (c *Client) BundleTar(ctx context.Context, task uuid.UUID, withCheckpoint bool, w io.Writer) error {
	answer, err := c.send(ctx, "GET", bundlePath(task, withCheckpoint, "tar"), nil)
	if err != nil {
		return err
	}
	defer answer.Close()
	_, err = io.Copy(w, answer)
	return err
}

// SignCheckpoint signs a chain's current head with the server's data
// directory key (operator token) and returns the signed note.
func (c *Client) SignCheckpoint(ctx context.Context, chain uuid.UUID) (api.Checkpoint, error) {
	var out api.Checkpoint
	return out, c.do(ctx, "POST", "/v1/checkpoints", api.CheckpointRequest{ChainID: chain.String()}, &out)
}

// GrantException records an exception for one soft gate's deny of one
// tool in an open task (operator token).
func (c *Client) GrantException(ctx context.Context, task uuid.UUID, req api.ExceptionRequest) (governance.ExceptionGrant, error) {
	var out governance.ExceptionGrant
	return out, c.do(ctx, "POST", "/v1/tasks/"+task.String()+"/exceptions", req, &out)
}

// BreakGlass records a break-glass grant, which also excuses a hard deny
// (operator token).
func (c *Client) BreakGlass(ctx context.Context, task uuid.UUID, req api.ExceptionRequest) (governance.ExceptionGrant, error) {
	var out governance.ExceptionGrant
	return out, c.do(ctx, "POST", "/v1/tasks/"+task.String()+"/break-glass", req, &out)
}

// probeTimeout bounds Discover's health check of a recorded server.
const probeTimeout = 2 * time.Second
