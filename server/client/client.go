// Package client is the Go client of govhost's HTTP API /v1, for agents,
// hooks and proxies that talk to a running `govhost serve`. It imports
// only the wire vocabulary (api), not the engine.
//
//	c, err := client.New("http://127.0.0.1:8181", client.TokenFromFile("govhost-data/token"))
//	task, err := c.OpenTask(ctx, api.OpenTaskRequest{Actor: &governance.ActorRef{Kind: "agent", ID: "coder"}})
//	res, err := c.Authorize(ctx, task.TaskID, api.AuthorizeRequest{CallRequest: api.CallRequest{Tool: "bash", Arguments: args}})
//	// res.Decision: allow (res.Permit), deny (res.Denial), pending_approval (c.Wait)
//	err = c.Complete(ctx, task.TaskID, api.CompleteRequest{PermitID: res.Permit.PermitID})
//	closed, err := c.CloseTask(ctx, task.TaskID)
//	cert, err := c.Mint(ctx, closed.ChainID, closed.Head)
//
// Gate modules: c.UploadModule(ctx, wasm) checks and stores a .wasm by its
// sha256 (bind it in a policy file by that digest); c.Modules lists them.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/governance"
)

// Error is a refusal by the server: its HTTP status and stable code.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("govhost: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// ErrUnreachable wraps every failure to get an answer from the server (it
// is down, the connection broke, the answer was not the API's): a caller
// that governs tool calls must then fail closed.
var ErrUnreachable = errors.New("govhost: server unreachable")

// Client talks to one server. Safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
	// direct is the client's own HTTP/1.1 transport (direct.go), used
	// when the caller gave no http.Client (HTTPClient) and the server is
	// reached in plain HTTP without a proxy; else, when the caller gave
	// none, transport is the one of the client's own http.Client: a
	// request goes straight to it, bounded by timeout through its context,
	// without http.Client's per-request machinery (a deadline timer, a
	// copy of the headers for redirects, which the API never answers).
	// Both nil: the caller's http.Client.
	direct    *direct
	transport http.RoundTripper
	timeout   time.Duration
	// auth is the Authorization header's value, built once from token
	// (shared by every request: the transport only reads it).
	auth []string
}

// Option configures a Client.
type Option func(*Client) error

// Token sets the bearer token.
func Token(token string) Option {
	return func(c *Client) error { c.token = strings.TrimSpace(token); return nil }
}

// TokenFromFile reads the bearer token from a file (the server's
// DATA/token).
func TokenFromFile(path string) Option {
	return func(c *Client) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("govhost: token file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
		return nil
	}
}

// HTTPClient replaces the default http.Client (which has a 90 s timeout,
// above the longest long poll, and keeps up to MaxIdleConnsPerHost
// connections open).
func HTTPClient(h *http.Client) Option { return func(c *Client) error { c.http = h; return nil } }

// New returns a client of the server at baseURL ("http://127.0.0.1:8181").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("govhost: base URL %q: want http(s)://host:port", baseURL)
	}
	timeout, transport := time.Duration(api.MaxWaitMS)*time.Millisecond+30*time.Second, newTransport()
	own := &http.Client{Timeout: timeout, Transport: transport}
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: own}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.http == own {
		c.timeout = timeout
		if c.direct = newDirect(u, c.token); c.direct == nil {
			c.transport = transport
		}
	}
	if c.token != "" {
		c.auth = []string{"Bearer " + c.token}
	}
	return c, nil
}

// MaxIdleConnsPerHost is how many idle keep-alive connections the default
// client keeps to its server: an agent's concurrent calls each keep theirs
// (http.DefaultTransport keeps two, so 64 concurrent callers opened a new
// TCP connection for most calls).
const MaxIdleConnsPerHost = 256

func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = MaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	// The server does not compress its answers (small JSON): asking for
	// gzip would only add a header to every request.
	t.DisableCompression = true
	return t
}

// jsonContentType is the Content-Type header of a JSON request (shared,
// read-only).
var jsonContentType = []string{"application/json"}

// do sends one request; body nil sends none. out nil discards the answer.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	answer, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer answer.Close()
	if out == nil {
		return discard(answer)
	}
	// Read to the end (so the connection goes back to the pool), then
	// decode from the bytes.
	buf := answers.Get().(*bytes.Buffer)
	defer putAnswer(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(answer); err != nil {
		return fmt.Errorf("%w: reading the answer to %s %s: %v", ErrUnreachable, method, path, err)
	}
	if err := governance.DecodeJSON(buf.Bytes(), out); err != nil {
		return fmt.Errorf("%w: reading the answer to %s %s: %v", ErrUnreachable, method, path, err)
	}
	return nil
}

// discard reads an answer's body to its end.
func discard(body io.Reader) error {
	if c, ok := body.(*conn); ok {
		return c.discardBody()
	}
	_, err := io.Copy(io.Discard, body)
	return err
}

// answers recycles the buffers answers are read into (encoding/json
// copies what it keeps).
var answers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putAnswer(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		answers.Put(b)
	}
}

// send returns a 2xx answer's body, open, or the server's *Error.
func (c *Client) send(ctx context.Context, method, path string, body any) (io.ReadCloser, error) {
	if c.direct != nil {
		return c.sendDirect(ctx, method, path, body)
	}
	var rd io.Reader
	contentType := ""
	switch b := body.(type) {
	case nil:
	case moduleBytes:
		rd, contentType = bytes.NewReader(b), "application/octet-stream"
	default:
		j, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd, contentType = bytes.NewReader(j), "application/json"
	}
	cancel := context.CancelFunc(nil)
	if c.transport != nil {
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		return nil, err
	}
	switch contentType {
	case "":
	case "application/json":
		req.Header["Content-Type"] = jsonContentType
	default:
		req.Header.Set("Content-Type", contentType)
	}
	if req.ContentLength > maxInlineBody {
		// As the own transport does (maxInlineBody): a busy server refuses
		// an upload before it reads the body (upload_busy), so a large body
		// asks first and a refusal arrives before it is sent, not as a
		// broken pipe halfway through it.
		req.Header.Set("Expect", "100-continue")
	}
	switch {
	case c.auth != nil && strings.TrimPrefix(c.auth[0], "Bearer ") == c.token:
		req.Header["Authorization"] = c.auth
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.roundTrip(req, cancel)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	return nil, refusal(resp.StatusCode, resp.Body, method, path)
}

// sendDirect is send through the client's own transport (direct.go).
func (c *Client) sendDirect(ctx context.Context, method, path string, body any) (io.ReadCloser, error) {
	var payload []byte
	contentType := ""
	switch b := body.(type) {
	case nil:
	case moduleBytes:
		payload, contentType = b, "application/octet-stream"
	default:
		// What json.Marshal writes (HTML escaped, raw values compacted),
		// without its copy and the encoder's newline.
		req := governance.GetJSONBuffer(true)
		defer req.Release()
		if err := req.Encode(body); err != nil {
			return nil, err
		}
		payload, contentType = bytes.TrimSuffix(req.Bytes(), []byte("\n")), "application/json"
	}
	answer, err := c.direct.exchange(ctx, c.timeout, method, path, contentType, payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrUnreachable, method, c.base+path, err)
	}
	if answer.status/100 == 2 {
		return answer, nil
	}
	defer answer.Close()
	return nil, refusal(answer.status, answer, method, path)
}

// refusal reads a non-2xx answer's error body: the server's *Error, or
// ErrUnreachable when it has none (not the API answering).
func refusal(status int, body io.Reader, method, path string) error {
	var eb api.ErrorBody
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&eb); err != nil || eb.Error.Code == "" {
		return fmt.Errorf("%w: HTTP %d from %s %s without an error body", ErrUnreachable, status, method, path)
	}
	return &Error{Status: status, Code: eb.Error.Code, Message: eb.Error.Message}
}

// roundTrip sends req through the caller's http.Client or, when cancel is
// set (req's context carries the client's timeout), straight to the
// client's own transport: the answer's body then ends the timeout when it
// is closed.
func (c *Client) roundTrip(req *http.Request, cancel context.CancelFunc) (*http.Response, error) {
	if cancel == nil {
		return c.http.Do(req)
	}
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose is an answer's body that ends its request's timeout when
// closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// taskPath is "/v1/tasks/<task>/<action>", built in one allocation.
func taskPath(task uuid.UUID, action string) string {
	var buf [64]byte
	b := append(buf[:0], "/v1/tasks/"...)
	b = governance.AppendUUID(b, task)
	b = append(b, '/')
	return string(append(b, action...))
}

// Ready reports whether the server is ready (stores and gates loaded).
func (c *Client) Ready(ctx context.Context) error { return c.do(ctx, "GET", "/readyz", nil, nil) }

// OpenTask opens a task.
func (c *Client) OpenTask(ctx context.Context, req api.OpenTaskRequest) (api.TaskInfo, error) {
	var out api.TaskInfo
	return out, c.do(ctx, "POST", "/v1/tasks", req, &out)
}

// Tasks lists the open tasks.
func (c *Client) Tasks(ctx context.Context) ([]api.TaskInfo, error) {
	var out api.TaskList
	return out.Tasks, c.do(ctx, "GET", "/v1/tasks", nil, &out)
}

// CloseTask closes a task; the answer carries the head to mint against
// and the operations left unfinished.
func (c *Client) CloseTask(ctx context.Context, task uuid.UUID) (api.ClosedTask, error) {
	var out api.ClosedTask
	return out, c.do(ctx, "POST", taskPath(task, "close"), struct{}{}, &out)
}

// Authorize asks before a tool call. The answer's Decision is allow
// (Permit: run the tool with Permit.Arguments, then Complete), deny
// (Denial) or pending_approval (Wait on AuthorizationID).
func (c *Client) Authorize(ctx context.Context, task uuid.UUID, req api.AuthorizeRequest) (api.AuthorizeResult, error) {
	var out api.AuthorizeResult
	return out, c.do(ctx, "POST", taskPath(task, "authorize"), req, &out)
}

// Wait long-polls a pending authorization for up to wait (at most
// api.MaxWaitMS).
func (c *Client) Wait(ctx context.Context, authorizationID string, wait time.Duration) (api.AuthorizeResult, error) {
	var out api.AuthorizeResult
	path := "/v1/authorizations/" + url.PathEscape(authorizationID) + "?wait_ms=" + strconv.FormatInt(wait.Milliseconds(), 10)
	return out, c.do(ctx, "GET", path, nil, &out)
}

// Complete reports the outcome of a permitted call.
func (c *Client) Complete(ctx context.Context, task uuid.UUID, req api.CompleteRequest) error {
	return c.do(ctx, "POST", taskPath(task, "complete"), req, nil)
}

// Approvals lists the approvals waiting for a decision.
func (c *Client) Approvals(ctx context.Context) ([]api.Approval, error) {
	var out api.ApprovalList
	return out.Approvals, c.do(ctx, "GET", "/v1/approvals", nil, &out)
}

// ResolveApproval answers a pending approval with "allow" or "deny".
func (c *Client) ResolveApproval(ctx context.Context, id string, req api.ResolveApprovalRequest) error {
	return c.do(ctx, "POST", "/v1/approvals/"+url.PathEscape(id), req, nil)
}

// Mint certifies a closed task's chain against the head the caller trusts
// (empty: the stored head).
func (c *Client) Mint(ctx context.Context, chain uuid.UUID, expectedHead string) (api.Certificate, error) {
	var out api.Certificate
	return out, c.do(ctx, "POST", "/v1/chains/"+chain.String()+"/certificate", api.MintRequest{ExpectedHead: expectedHead}, &out)
}

// Certificate fetches a certificate the server minted.
func (c *Client) Certificate(ctx context.Context, id uuid.UUID) (api.Certificate, error) {
	var out api.Certificate
	return out, c.do(ctx, "GET", "/v1/certificates/"+id.String(), nil, &out)
}

// ExportChain copies a chain as JSON Lines (what chain verify reads) to w.
func (c *Client) ExportChain(ctx context.Context, chain uuid.UUID, w io.Writer) error {
	answer, err := c.send(ctx, "GET", "/v1/chains/"+chain.String(), nil)
	if err != nil {
		return err
	}
	defer answer.Close()
	_, err = io.Copy(w, answer)
	return err
}

// ChainHead returns a chain's head.
func (c *Client) ChainHead(ctx context.Context, chain uuid.UUID) (api.ChainHead, error) {
	var out api.ChainHead
	return out, c.do(ctx, "GET", "/v1/chains/"+chain.String()+"/head", nil, &out)
}

// VerifyChain verifies a stored chain against a trusted head.
func (c *Client) VerifyChain(ctx context.Context, chain uuid.UUID, expectedHead string) (governance.VerificationResult, error) {
	var out governance.VerificationResult
	return out, c.do(ctx, "POST", "/v1/chains/"+chain.String()+"/verify", api.VerifyRequest{ExpectedHead: expectedHead}, &out)
}

// PutPolicy stores a policy file (JSON) as a staged version.
func (c *Client) PutPolicy(ctx context.Context, file json.RawMessage) (api.PolicySummary, error) {
	var out api.PolicySummary
	return out, c.do(ctx, "POST", "/v1/policies", file, &out)
}

// ActivatePolicy activates a staged version.
func (c *Client) ActivatePolicy(ctx context.Context, id uuid.UUID, version string, actor *governance.ActorRef) (api.PolicySummary, error) {
	var out api.PolicySummary
	return out, c.do(ctx, "POST", "/v1/policies/"+id.String()+"/versions/"+url.PathEscape(version)+"/activate", api.ActivateRequest{Actor: actor}, &out)
}

// BindPolicy binds an active version to a scope and returns the binding.
func (c *Client) BindPolicy(ctx context.Context, id uuid.UUID, version string, req api.BindRequest) (governance.PolicyBinding, error) {
	var out governance.PolicyBinding
	return out, c.do(ctx, "POST", "/v1/policies/"+id.String()+"/versions/"+url.PathEscape(version)+"/bind", req, &out)
}

// ResolvePolicy returns the version role / resource resolve to.
func (c *Client) ResolvePolicy(ctx context.Context, role, resource string) (api.PolicySummary, error) {
	var out api.PolicySummary
	q := url.Values{}
	if role != "" {
		q.Set("role", role)
	}
	if resource != "" {
		q.Set("resource", resource)
	}
	path := "/v1/policies/resolve"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return out, c.do(ctx, "GET", path, nil, &out)
}

// Evaluate asks what a policy's gates would answer, recording nothing.
func (c *Client) Evaluate(ctx context.Context, req api.EvaluateRequest) (api.Evaluation, error) {
	var out api.Evaluation
	return out, c.do(ctx, "POST", "/v1/evaluate", req, &out)
}

// moduleBytes is a request body sent as it is (a .wasm module), not as JSON.
type moduleBytes []byte

// UploadModule uploads a gate module (.wasm bytes). The server checks it as
// a gate and stores it by its sha256; Created is false when the same bytes
// were already stored. A module the server refuses is an *Error whose Code
// is the host's reason (gate.invalid_module, gate.missing_export,
// gate.bad_import, ...) or module_empty. Bind it in a policy file by its
// SHA256.
func (c *Client) UploadModule(ctx context.Context, wasm []byte) (api.ModuleUpload, error) {
	var out api.ModuleUpload
	return out, c.do(ctx, "POST", "/v1/modules", moduleBytes(wasm), &out)
}

// Modules lists the stored gate modules.
func (c *Client) Modules(ctx context.Context) ([]api.StoredModule, error) {
	var out api.ModuleList
	return out.Modules, c.do(ctx, "GET", "/v1/modules", nil, &out)
}

// Module describes one module, stored or built in, by its sha256.
func (c *Client) Module(ctx context.Context, digest string) (api.Module, error) {
	var out api.Module
	return out, c.do(ctx, "GET", "/v1/modules/"+url.PathEscape(digest), nil, &out)
}

// UnbindPolicy removes a version's bindings at one scope (operator token).
func (c *Client) UnbindPolicy(ctx context.Context, id uuid.UUID, version string, req api.UnbindRequest) (api.Unbound, error) {
	var out api.Unbound
	return out, c.do(ctx, "POST", "/v1/policies/"+id.String()+"/versions/"+url.PathEscape(version)+"/unbind", req, &out)
}

// Bindings lists the policy bindings, all of them or those at one scope
// (and selector).
func (c *Client) Bindings(ctx context.Context, scope, selector string) ([]governance.PolicyBinding, error) {
	q := url.Values{}
	if scope != "" {
		q.Set("scope", scope)
	}
	if selector != "" {
		q.Set("scope_id", selector)
	}
	path := "/v1/bindings"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.BindingList
	return out.Bindings, c.do(ctx, "GET", path, nil, &out)
}
