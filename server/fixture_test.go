package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/evidence"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/server"
	"github.com/govhost/govhost/server/client"
	"github.com/govhost/govhost/service"
)

// testToken is the operator's token (accepted on every route) and
// testAgentToken the agents' (refused on operator routes): the tests that
// are not about roles act as the operator.
const (
	testToken      = "0123456789abcdef0123456789abcdef-test-token"
	testAgentToken = "fedcba9876543210fedcba9876543210-agent-token"
)

// testOperatorToken is the shared server's operator token: testToken (the
// tests act as the operator unless they are about roles).
const testOperatorToken = testToken

// testMaxModule bounds module uploads in the tests' servers (the default,
// 32 MiB, would make the oversize case slow to send).
const testMaxModule = 1 << 20

// cacheDir is one compilation cache for the package's engines.
var cacheDir string

func TestMain(m *testing.M) {
	// One compilation cache for every engine of the package (and, with
	// GOVHOST_WASM_CACHE, of every package): compiling the built-in gates
	// is the slow part of opening an engine, above all under -race.
	cacheDir = os.Getenv("GOVHOST_WASM_CACHE")
	if cacheDir == "" {
		dir, err := os.MkdirTemp("", "govhost-server-cache-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		cacheDir = dir
	}
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	for _, e := range benchEnvs {
		e.close()
	}
	os.Exit(code)
}

// shared is the package's one engine and server (opened on first use):
// tests use their own tasks on it and run one at a time.
var shared *env

// sharedEnv returns the shared server; its exchanges are checked against
// openapi.yaml.
func sharedEnv(t testing.TB) *env {
	if shared == nil {
		shared = openEnv(t, true)
	}
	shared.t = t
	shared.spec.t = t
	return shared
}

// env is a real engine, service and server on a loopback port.
type env struct {
	t      testing.TB
	eng    *govhost.Engine
	svc    *service.Service
	srv    *server.Server
	http   *httptest.Server
	client *client.Client
	// agent is a client with the agents' token.
	agent *client.Client
	// operator is a client with the operator token.
	operator *client.Client
	// modules is the engine's module folder.
	modules string
	// spec, when set, validates every exchange against openapi.yaml.
	spec  *specChecker
	close func()
}

func openEnv(t testing.TB, validate bool) *env {
	t.Helper()
	return openEnvPolicy(t, validate, lionagiSafePolicy, "")
}

// openEnvPolicy is openEnv under the policy file text policy or, when
// policy is "", under profile's default coding-agent policy (what serve
// installs).
func openEnvPolicy(t testing.TB, validate bool, policy, profile string) *env {
	t.Helper()
	ctx := context.Background()
	// NB: no test here is about gate timeouts; 64 clients under -race on a
	// loaded 2-core machine can wait longer than the default second for an
	// instance, which would deny as gate.timeout and fail the load test.
	cfg := host.NewConfig().WithCompilationCacheDir(cacheDir).WithCallTimeout(time.Minute)
	dir, err := os.MkdirTemp("", "govhost-server-data-")
	require.NoError(t, err)
	eng, err := govhost.Open(ctx, govhost.Options{Dir: filepath.Join(dir, "data"), Host: &cfg})
	require.NoError(t, err)
	metrics := server.NewMetrics()
	svc, err := service.New(eng, service.Options{Observer: metrics})
	require.NoError(t, err)
	metrics.Watch(svc)
	// The API tests run under LionAGI's safe preset (its tool names and its
	// escalations), not the default coding-agent policy: they test the API,
	// and cmd/govhost's tests hold the default policy to its outcomes.
	policyFile := ""
	if policy != "" {
		policyFile = filepath.Join(dir, "policy.json")
		require.NoError(t, os.WriteFile(policyFile, []byte(policy), 0o600))
	}
	pol, _, err := svc.EnsurePolicy(ctx, policyFile, profile)
	require.NoError(t, err)
	require.NoError(t, svc.WarmUp(ctx, pol))
	srv, err := server.New(server.Config{Service: svc, Token: testAgentToken, OperatorToken: testToken, Metrics: metrics, MaxBody: 64 << 10, MaxModuleBody: testMaxModule})
	require.NoError(t, err)
	srv.SetReady()
	e := &env{t: t, eng: eng, svc: svc, srv: srv, modules: filepath.Join(dir, "data", "modules")}
	var h http.Handler = srv.Handler()
	if validate {
		e.spec = newSpecChecker(t)
		h = e.spec.wrap(h)
	}
	e.http = httptest.NewServer(h)
	e.client, err = client.New(e.http.URL, client.Token(testToken))
	require.NoError(t, err)
	e.operator, err = client.New(e.http.URL, client.Token(testOperatorToken))
	require.NoError(t, err)
	e.agent, err = client.New(e.http.URL, client.Token(testAgentToken))
	require.NoError(t, err)
	e.close = func() {
		srv.Shutdown()
		e.http.Close()
		svc.Close()
		_ = eng.Close(ctx)
		os.RemoveAll(dir)
	}
	return e
}

// records counts every record of every chain in the store.
func (e *env) records() int {
	e.t.Helper()
	ctx := context.Background()
	n := 0
	after := uuid.Nil
	for {
		chains, err := e.eng.Evidence.(evidence.ChainLister).Chains(ctx, after, 100)
		require.NoError(e.t, err)
		for _, c := range chains {
			recs, err := e.eng.Evidence.Read(ctx, c, -1)
			require.NoError(e.t, err)
			n += len(recs)
			after = c
		}
		if len(chains) < 100 {
			return n
		}
	}
}

// specChecker validates requests and responses against openapi.yaml: every
// response must be documented and match its schema; a request the server
// accepted (2xx) must match the documented request.
type specChecker struct {
	t      testing.TB
	router routers.Router
	mu     sync.Mutex
	seen   map[string]bool
}

// textBody reads a body that is documented as a string (JSON Lines, the
// YAML document itself) as one.
func textBody(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	return string(b), err
}

func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", textBody)
	openapi3filter.RegisterBodyDecoder("application/yaml", textBody)
	openapi3filter.RegisterBodyDecoder("application/wasm", textBody)
	openapi3filter.RegisterBodyDecoder("application/x-tar", textBody)
}

func newSpecChecker(t testing.TB) *specChecker {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPI)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	doc.Servers = nil // match the test server's port, not the documented default
	r, err := legacy.NewRouter(doc)
	require.NoError(t, err)
	return &specChecker{t: t, router: r, seen: map[string]bool{}}
}

type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *specChecker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.Header().Get("Content-Type") == "text/event-stream" {
			return
		}
		probe := r.Clone(context.Background())
		probe.Body = io.NopCloser(bytes.NewReader(body))
		route, params, err := c.router.FindRoute(probe)
		if err != nil {
			if rec.status/100 == 2 {
				c.t.Errorf("openapi: %s %s answered %d but is not documented: %v", r.Method, r.URL.Path, rec.status, err)
			}
			return
		}
		c.mu.Lock()
		c.seen[r.Method+" "+route.Path] = true
		c.mu.Unlock()
		opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
		in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route, Options: opts}
		if rec.status/100 == 2 {
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				c.t.Errorf("openapi: the server accepted a request the document refuses: %s %s: %v", r.Method, r.URL.Path, err)
			}
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.status, Header: rec.Header(), Options: opts}
		out.SetBodyBytes(rec.body.Bytes())
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			c.t.Errorf("openapi: response of %s %s (%d) does not match the document: %v\n%s", r.Method, r.URL.Path, rec.status, err, rec.body.String())
		}
	})
}

// testPolicyVersion is the version of the policy the API tests run under.
const testPolicyVersion = "default-1"

// lionagiSafePolicy is the sidecar's default policy before issue 22:
// ADR-0086's destructive guard on bash and the permission gate with
// LionAGI's "safe" preset on LionAGI's tool names.
var lionagiSafePolicy = `{
  "policy_id": "` + service.DefaultPolicyID.String() + `",
  "version": "` + testPolicyVersion + `",
  "gates": [
    {"gate_id": "destructive", "module": "destructive", "level": "hard", "order": 10, "tool_ids": ["bash"]},
    {"gate_id": "permission", "module": "permission", "level": "hard", "order": 20,
     "tool_ids": ["bash", "reader", "editor", "search", "context"],
     "config": {"preset": "safe"}}
  ]
}`
