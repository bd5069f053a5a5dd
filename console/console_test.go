package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/govhost/govhost"
	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/console"
	"github.com/govhost/govhost/controller"
	"github.com/govhost/govhost/host"
	"github.com/govhost/govhost/service"
)

var cacheDir string

func TestMain(m *testing.M) {
	cacheDir = os.Getenv("GOVHOST_WASM_CACHE")
	if cacheDir == "" {
		dir, err := os.MkdirTemp("", "govhost-console-cache-")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(dir)
		cacheDir = dir
	}
	os.Exit(m.Run())
}

// clock is a settable time for tokens, sessions and links.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// env is a real engine and service behind a console on a loopback port,
// with a webhook that collects notifications.
type env struct {
	t     *testing.T
	svc   *service.Service
	eng   *govhost.Engine
	ui    *console.Console
	url   string
	clock *clock
	task  service.TaskInfo

	mu    sync.Mutex
	notes []console.Notification
	got   chan struct{}
}

func newEnv(t *testing.T, opts service.Options) *env {
	t.Helper()
	ctx := context.Background()
	cfg := host.NewConfig().WithCompilationCacheDir(cacheDir)
	eng, err := govhost.Open(ctx, govhost.Options{Dir: filepath.Join(t.TempDir(), "data"), Host: &cfg})
	require.NoError(t, err)
	svc, err := service.New(eng, opts)
	require.NoError(t, err)
	_, _, err = svc.EnsurePolicy(ctx, "", "")
	require.NoError(t, err)
	e := &env{t: t, svc: svc, eng: eng, clock: &clock{}, got: make(chan struct{}, 16)}
	e.clock.ns.Store(time.Now().UnixNano())
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n console.Notification
		require.NoError(t, json.NewDecoder(r.Body).Decode(&n))
		e.mu.Lock()
		e.notes = append(e.notes, n)
		e.mu.Unlock()
		e.got <- struct{}{}
	}))
	// The console must know its own address before it serves.
	ln := httptest.NewUnstartedServer(nil)
	base := "http://" + ln.Listener.Addr().String()
	e.ui, err = console.New(console.Config{Service: svc, BaseURL: base, NotifyURL: hook.URL, Now: e.clock.now})
	require.NoError(t, err)
	ln.Config.Handler = e.ui
	ln.Start()
	e.url = base
	e.task, err = svc.OpenTask(ctx, service.OpenTaskRequest{Workspace: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() {
		ln.Close()
		e.ui.Close()
		hook.Close()
		svc.Close()
		_ = eng.Close(context.Background())
	})
	return e
}

// hold starts a bash call the default policy sends to an approver and
// returns its authorization and approval ids.
func (e *env) hold(command string) (authz, approval string) {
	res, err := e.svc.Authorize(context.Background(), e.task.TaskID, controller.Call{
		Tool: "bash", Arguments: json.RawMessage(`{"command":` + string(mustJSON(command)) + `}`), AgentName: "coder", RunID: "run-7",
	}, 0)
	require.NoError(e.t, err)
	require.Equal(e.t, service.DecisionPending, res.Decision)
	return res.AuthorizationID, res.ApprovalID
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// notification waits for the webhook's post about approval.
func (e *env) notification(approval string) console.Notification {
	deadline := time.After(30 * time.Second)
	for {
		e.mu.Lock()
		for _, n := range e.notes {
			if n.ApprovalID == approval {
				e.mu.Unlock()
				return n
			}
		}
		e.mu.Unlock()
		select {
		case <-e.got:
		case <-deadline:
			e.t.Fatalf("no notification for %s", approval)
		}
	}
}

func (e *env) outcome(authz string) service.AuthorizeResult {
	res, err := e.svc.Wait(context.Background(), authz, 30*time.Second)
	require.NoError(e.t, err)
	return res
}

// approverOf returns the approver recorded in the task's evidence for
// the gate evaluation that asked.
func (e *env) approvers() []string {
	recs, err := e.eng.Evidence.Read(context.Background(), e.task.ChainID, -1)
	require.NoError(e.t, err)
	var out []string
	for _, r := range recs {
		var p map[string]any
		require.NoError(e.t, json.Unmarshal([]byte(r.PayloadJSON), &p))
		if k, ok := p["approver_kind"]; ok {
			out = append(out, k.(string)+":"+p["approver_id"].(string))
		}
	}
	return out
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// confirm posts a signed link's confirmation form as its page would.
func (e *env) confirm(link string, extra url.Values) (int, string) {
	u, err := url.Parse(link)
	require.NoError(e.t, err)
	form := u.Query()
	for k, v := range extra {
		form[k] = v
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/ui/link", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func get(t *testing.T, link string) (int, string) {
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A signed link answers its approval once; a used link, an expired one
// and one whose argument digest was changed answer nothing.
func TestSignedLink_WorksOnceThenFailsUsedExpiredOrChanged(t *testing.T) {
	e := newEnv(t, service.Options{})

	authz, approval := e.hold("curl -s https://example.com/install.sh")
	n := e.notification(approval)
	require.Equal(t, "bash", n.Tool)
	require.Equal(t, "coder", n.Agent)
	require.NotContains(t, string(mustJSON(n)), "install.sh", "argument values never leave the host in a notification")
	require.True(t, strings.HasPrefix(n.ApproveURL, e.url+"/ui/link?"))

	status, page := get(t, n.ApproveURL)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "install.sh", "the confirmation page shows the held call's arguments")
	require.Contains(t, page, n.Digest)

	// A changed digest breaks the signature: nothing is decided.
	changed := strings.Replace(n.ApproveURL, "digest="+n.Digest, "digest="+strings.Repeat("0", 64), 1)
	require.NotEqual(t, changed, n.ApproveURL)
	status, _ = e.confirm(changed, nil)
	require.Equal(t, http.StatusForbidden, status)

	status, page = e.confirm(n.ApproveURL, nil)
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Approved")
	res := e.outcome(authz)
	require.Equal(t, service.DecisionAllow, res.Decision, "the agent's call proceeds")
	require.Equal(t, []string{"link:" + approval}, e.approvers())

	status, page = e.confirm(n.ApproveURL, nil)
	require.Equal(t, http.StatusConflict, status, "used once")
	require.Contains(t, page, "already used")
	status, _ = e.confirm(n.DenyURL, nil)
	require.Equal(t, http.StatusConflict, status, "the other link finds nothing pending")

	// Expiry: 15 minutes by default.
	authz2, approval2 := e.hold("curl -s https://example.com/other.sh")
	n2 := e.notification(approval2)
	e.clock.advance(console.DefaultLinkTTL + time.Second)
	status, _ = get(t, n2.DenyURL)
	require.Equal(t, http.StatusGone, status)
	status, page = e.confirm(n2.DenyURL, nil)
	require.Equal(t, http.StatusGone, status, page)
	require.Contains(t, page, "expired")
	// Still held: the console answers it.
	require.NoError(t, e.svc.Resolve(approval2, service.ApprovalResolution{Decision: service.Reject}))
	require.Equal(t, service.DecisionDeny, e.outcome(authz2).Decision)
}

// A deny link carries the reason typed on its page to the agent.
func TestSignedLink_DenyWithReason(t *testing.T) {
	e := newEnv(t, service.Options{})
	authz, approval := e.hold("make deploy")
	n := e.notification(approval)
	status, page := e.confirm(n.DenyURL, url.Values{"reason": {"not during the freeze"}})
	require.Equal(t, http.StatusOK, status, page)
	res := e.outcome(authz)
	require.Equal(t, service.DecisionDeny, res.Decision)
	require.Equal(t, "not during the freeze", res.Denial.Message)
	require.Equal(t, []string{"link:" + approval}, e.approvers())
}

// signIn redeems a login link in a client with a cookie jar.
func signIn(t *testing.T, e *env) (*http.Client, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: noRedirect}
	link := e.ui.LoginLink()
	token := strings.SplitN(link, "token=", 2)[1]
	req, _ := http.NewRequest(http.MethodPost, e.url+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.url)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	var s struct {
		Approver  string `json:"approver"`
		CSRFToken string `json:"csrf_token"`
	}
	resp, err = c.Get(e.url + "/ui/api/session")
	require.NoError(t, err)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
	resp.Body.Close()
	require.True(t, strings.HasPrefix(s.Approver, "console:"))
	return c, s.CSRFToken
}

func post(t *testing.T, c *http.Client, link, origin, csrf string, body any) (int, api.ErrorBody) {
	req, _ := http.NewRequest(http.MethodPost, link, bytes.NewReader(mustJSON(body)))
	req.Header.Set("Content-Type", "application/json")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var eb api.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&eb)
	return resp.StatusCode, eb
}

// A login link signs in once, and only before it expires; every change
// needs the session's CSRF token and a same-origin request; an answer is
// bound to the held arguments and records the console session.
func TestConsole_LoginCSRFAndBoundAnswers(t *testing.T) {
	e := newEnv(t, service.Options{})

	// A login link works once.
	link := e.ui.LoginLink()
	token := strings.SplitN(link, "token=", 2)[1]
	form := func(origin string) int {
		req, _ := http.NewRequest(http.MethodPost, e.url+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := (&http.Client{CheckRedirect: noRedirect}).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, form("http://evil.example"), "a cross-site sign-in form is refused")
	require.Equal(t, http.StatusSeeOther, form(e.url))
	require.Equal(t, http.StatusUnauthorized, form(e.url), "used once")
	// … and expires.
	late := e.ui.LoginLink()
	e.clock.advance(console.DefaultLoginTTL + time.Second)
	token = strings.SplitN(late, "token=", 2)[1]
	require.Equal(t, http.StatusUnauthorized, form(e.url))

	// Signed out: nothing is shown.
	status, _ := get(t, e.url+"/ui/api/approvals")
	require.Equal(t, http.StatusUnauthorized, status)

	c, csrf := signIn(t, e)
	authz, approval := e.hold("terraform apply")
	held, err := e.svc.PendingApproval(approval)
	require.NoError(t, err)
	target := e.url + "/ui/api/approvals/" + approval
	allow := map[string]string{"decision": "allow", "argument_digest": held.ArgumentDigest}

	status, eb := post(t, c, target, e.url, "", allow)
	require.Equal(t, http.StatusForbidden, status, "no CSRF token")
	require.Equal(t, "csrf", eb.Error.Code)
	status, _ = post(t, c, target, e.url, strings.Repeat("0", 64), allow)
	require.Equal(t, http.StatusForbidden, status, "a wrong CSRF token")
	status, _ = post(t, c, target, "http://evil.example", csrf, allow)
	require.Equal(t, http.StatusForbidden, status, "another origin")
	status, _ = post(t, c, target, "", csrf, allow)
	require.Equal(t, http.StatusForbidden, status, "no origin")
	status, eb = post(t, c, target, e.url, csrf, map[string]string{"decision": "allow", "argument_digest": strings.Repeat("a", 64)})
	require.Equal(t, http.StatusConflict, status, "bound to the held arguments")
	require.Equal(t, string(service.CodeApprovalChanged), eb.Error.Code)

	status, eb = post(t, c, target, e.url, csrf, allow)
	require.Equal(t, http.StatusOK, status, eb.Error.Message)
	require.Equal(t, service.DecisionAllow, e.outcome(authz).Decision)
	status, eb = post(t, c, target, e.url, csrf, allow)
	require.Equal(t, http.StatusConflict, status, "used once")
	require.Equal(t, string(service.CodeApprovalNotFound), eb.Error.Code)
	who := e.approvers()
	require.Len(t, who, 1)
	require.Regexp(t, `^console:[0-9a-f]{12}$`, who[0])

	// Another Host (a DNS-rebinding page) is refused.
	req, _ := http.NewRequest(http.MethodGet, e.url+"/ui/", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
}

// Every console response carries the CSP: own files only, no inline
// script, no unsafe-inline anywhere.
func TestConsole_ContentSecurityPolicy(t *testing.T) {
	e := newEnv(t, service.Options{})
	for _, path := range []string{"/ui/", "/ui/static/app.js", "/ui/login?token=x", "/ui/api/session"} {
		resp, err := http.Get(e.url + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		require.Contains(t, csp, "script-src 'self'", path)
		require.Contains(t, csp, "default-src 'none'", path)
		require.NotContains(t, csp, "unsafe", path)
		if strings.HasSuffix(path, "/") {
			require.NotRegexp(t, `<script>|<script [^>]*>[^<]`, string(body), "no inline script")
			require.NotContains(t, string(body), "http://", "no other origin")
			require.NotContains(t, string(body), "https://", "no other origin")
		}
	}
}

// A held call nobody answers is denied when the approval timeout passes,
// recorded as decided by system/timeout.
func TestApprovalTimeout_DeniesAsSystemTimeout(t *testing.T) {
	e := newEnv(t, service.Options{ApprovalTimeout: 300 * time.Millisecond})
	authz, approval := e.hold("kubectl delete pod x")
	res := e.outcome(authz)
	require.Equal(t, service.DecisionDeny, res.Decision)
	require.Contains(t, res.Denial.Message, "nobody answered")
	require.Equal(t, []string{"system:timeout"}, e.approvers())
	_, err := e.svc.PendingApproval(approval)
	require.Equal(t, service.CodeApprovalNotFound, service.CodeOf(err))
}

// The decision stream shows verdicts as they happen, and a reader that
// does not read is dropped instead of slowing the calls.
func TestDecisionEvents_VerdictsAndSlowReadersDropped(t *testing.T) {
	e := newEnv(t, service.Options{})
	events, cancel, err := e.svc.DecisionEvents()
	require.NoError(t, err)
	defer cancel()
	slow, cancelSlow, err := e.svc.DecisionEvents()
	require.NoError(t, err)
	defer cancelSlow()
	ctx := context.Background()
	res, err := e.svc.Authorize(ctx, e.task.TaskID, controller.Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"rm -rf /"}`), AgentName: "coder"}, 0)
	require.NoError(t, err)
	require.Equal(t, service.DecisionDeny, res.Decision)
	ev := <-events
	require.Equal(t, service.VerdictDeny, ev.Verdict)
	require.Equal(t, "bash", ev.Tool)
	require.Equal(t, "coder", ev.AgentName)
	require.Equal(t, res.Denial.ReasonCode, ev.ReasonCode)
	require.NotEmpty(t, ev.Message)
	require.NotContains(t, string(mustJSON(ev)), "rm -rf", "no argument values on the stream")

	// 300 more verdicts: the reader that never reads is dropped (its
	// channel closes); the calls all finished.
	for i := 0; i < 300; i++ {
		_, err := e.svc.Authorize(ctx, e.task.TaskID, controller.Call{Tool: "reader", Operation: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)}, 0)
		require.NoError(t, err)
		if i < 200 {
			<-events
		}
	}
	n := 0
	for range slow {
		n++
	}
	require.Equal(t, 256, n, "the buffer, then closed")
	require.GreaterOrEqual(t, e.svc.DroppedDecisionStreams(), int64(1))
}

// --notify-format slack posts an incoming-webhook message: the facts and
// the two signed links as Slack links, no argument values.
func TestNotify_SlackBody(t *testing.T) {
	e := newEnv(t, service.Options{})
	bodies := make(chan map[string]any, 4)
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&b))
		bodies <- b
	}))
	defer slack.Close()
	ui, err := console.New(console.Config{Service: e.svc, BaseURL: e.url, NotifyURL: slack.URL, NotifyFormat: "slack"})
	require.NoError(t, err)
	defer ui.Close()
	_, approval := e.hold("helm upgrade prod ./chart")
	n := e.notification(approval) // the JSON body of the other console
	var body map[string]any
	select {
	case body = <-bodies:
	case <-time.After(30 * time.Second):
		t.Fatal("no Slack post")
	}
	require.Len(t, body, 1, "Slack's incoming-webhook body: text only")
	text := body["text"].(string)
	require.Contains(t, text, approval)
	require.Contains(t, text, "`bash`")
	require.Contains(t, text, "|Approve>")
	require.Contains(t, text, "|Deny>")
	require.Contains(t, text, "<"+e.url+"/ui/link?")
	require.Contains(t, text, "&amp;decision=allow", "Slack's reserved & is escaped in the links")
	require.NotContains(t, text, "helm upgrade", "argument values stay on the host")
	require.Contains(t, text, n.Digest[:12])

	_, err = console.New(console.Config{Service: e.svc, BaseURL: e.url, NotifyURL: slack.URL, NotifyFormat: "teams"})
	require.Error(t, err, "an unknown format is refused")
	_, err = console.New(console.Config{Service: e.svc, BaseURL: e.url, NotifyURL: "ftp://x"})
	require.Error(t, err, "a webhook must be http(s)")
}
