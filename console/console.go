package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/server/wire"
	"github.com/govhost/govhost/service"
)

//go:embed static
var staticFiles embed.FS

//go:embed pages
var pageFiles embed.FS

var pages = template.Must(template.ParseFS(pageFiles, "pages/*.html"))

// Defaults of Config.
const (
	DefaultLoginTTL   = 10 * time.Minute
	DefaultSessionTTL = 12 * time.Hour
	DefaultLinkTTL    = 15 * time.Minute
)

// contentSecurityPolicy allows the console's own files and nothing else:
// no inline script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Config configures a Console. Service and BaseURL are required.
type Config struct {
	Service *service.Service
	// BaseURL is where the console is reached ("http://127.0.0.1:8181"):
	// login and approval links point there, and a request naming another
	// Host is refused (a DNS-rebinding page cannot drive the console).
	BaseURL string
	// NotifyURL, when set, receives a POST for every pending approval with
	// signed approve and deny links (NotifyFormat: "json", the default, or
	// "slack").
	NotifyURL    string
	NotifyFormat string
	// LoginTTL bounds a login link's life (default DefaultLoginTTL);
	// SessionTTL a session's (DefaultSessionTTL); LinkTTL a signed
	// approval link's (DefaultLinkTTL, 15 minutes).
	LoginTTL   time.Duration
	SessionTTL time.Duration
	LinkTTL    time.Duration
	// HTTPClient posts notifications (default: 10 s timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now is the clock of tokens, sessions and links (default time.Now).
	Now func() time.Time
}

// Console is the web console. Safe for concurrent use; Close ends its
// notifier and its event streams.
type Console struct {
	cfg    Config
	svc    *service.Service
	base   *url.URL
	gate   *gate
	links  *signer
	mux    *http.ServeMux
	log    *slog.Logger
	stop   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a console; with a NotifyURL it starts posting pending
// approvals at once.
func New(cfg Config) (*Console, error) {
	if cfg.Service == nil || cfg.BaseURL == "" {
		return nil, errors.New("console: Config needs a Service and a BaseURL")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Host == "" || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, errors.New("console: BaseURL must be an http(s) URL with a host")
	}
	if cfg.NotifyURL != "" {
		if u, err := url.Parse(cfg.NotifyURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, errors.New("console: NotifyURL must be an http(s) URL with a host")
		}
	}
	switch cfg.NotifyFormat {
	case "":
		cfg.NotifyFormat = "json"
	case "json", "slack":
	default:
		return nil, errors.New(`console: NotifyFormat must be "json" or "slack"`)
	}
	if cfg.LoginTTL <= 0 {
		cfg.LoginTTL = DefaultLoginTTL
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Console{
		cfg: cfg, svc: cfg.Service, base: base, log: cfg.Logger, links: newSigner(cfg.Now),
		gate: &gate{now: cfg.Now, loginTTL: cfg.LoginTTL, sessionTTL: cfg.SessionTTL,
			logins: map[[32]byte]time.Time{}, sessions: map[[32]byte]*session{}},
	}
	c.stop, c.cancel = context.WithCancel(context.Background())
	c.routes()
	if cfg.NotifyURL != "" {
		events, cancel := c.svc.ApprovalEvents()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer cancel()
			notifyLoop(c, events, func(ev service.BrokerEvent) (api.Approval, bool) {
				return wire.Approval(service.ApprovalOf(ev.Approval)), ev.Kind == service.ApprovalPending
			})
		}()
	}
	return c, nil
}

// Close stops the notifier and ends the console's event streams.
func (c *Console) Close() {
	c.cancel()
	c.wg.Wait()
}

// LoginLink mints a one-time login link: it signs one browser in, once,
// within Config.LoginTTL.
func (c *Console) LoginLink() string {
	return c.base.JoinPath("/ui/login").String() + "?token=" + c.gate.newLogin()
}

// ServeHTTP serves /ui/.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	// A login token in the URL never leaves the console in a Referer; not
	// "no-referrer", with which Chrome sends a form POST's Origin as "null".
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if r.Host != c.base.Host {
		writeError(w, http.StatusMisdirectedRequest, "wrong_host", "open the console at "+c.base.String()+"/ui/")
		return
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	m.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, staticFiles, "static/index.html")
	})
	m.HandleFunc("GET /ui/login", c.loginPage)
	m.HandleFunc("POST /ui/login", c.login)
	m.HandleFunc("POST /ui/logout", c.signedIn(true, c.logout))
	m.HandleFunc("GET /ui/link", c.linkPage)
	m.HandleFunc("POST /ui/link", c.useLink)
	m.HandleFunc("GET /ui/api/session", c.signedIn(false, c.sessionInfo))
	m.HandleFunc("GET /ui/api/approvals", c.signedIn(false, c.approvals))
	m.HandleFunc("POST /ui/api/approvals/{approval_id}", c.signedIn(true, c.resolve))
	m.HandleFunc("GET /ui/api/events", c.signedIn(false, c.events))
	m.HandleFunc("GET /ui/api/tasks", c.signedIn(false, c.tasks))
	m.HandleFunc("GET /ui/api/tasks/{task_id}/bundle", c.signedIn(false, c.bundle))
	m.HandleFunc("GET /ui/api/chains/{chain_id}", c.signedIn(false, c.chain))
	m.HandleFunc("GET /ui/api/chains/{chain_id}/checkpoint", c.signedIn(false, c.checkpoint))
	m.HandleFunc("GET /ui/api/certificates/{certificate_id}", c.signedIn(false, c.certificate))
	m.HandleFunc("GET /ui/api/policy", c.signedIn(false, c.policy))
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no console route "+r.Method+" "+r.URL.Path)
	})
	c.mux = m
}

type sessionHandler func(w http.ResponseWriter, r *http.Request, s *session)

// signedIn requires a session; a state change also its CSRF token and a
// same-origin request.
func (c *Console) signedIn(change bool, h sessionHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := c.gate.session(r)
		if s == nil {
			writeError(w, http.StatusUnauthorized, "signed_out", "sign in with the login link `govhost serve` printed")
			return
		}
		if change && !csrfOK(r, s) {
			writeError(w, http.StatusForbidden, "csrf", "a state change needs the session's X-CSRF-Token header from a page of this console")
			return
		}
		h(w, r, s)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, api.ErrorBody{Error: api.ErrorDetail{Code: code, Message: msg}})
}

// statusOf maps the service's refusals the console meets to HTTP.
var statusOf = map[service.Code]int{
	service.CodeInvalidRequest:     http.StatusBadRequest,
	service.CodeApprovalNotFound:   http.StatusConflict,
	service.CodeApprovalChanged:    http.StatusConflict,
	service.CodeTaskNotFound:       http.StatusNotFound,
	service.CodeChainNotFound:      http.StatusNotFound,
	service.CodeCertNotFound:       http.StatusNotFound,
	service.CodeNotMintable:        http.StatusConflict,
	service.CodePolicyNotFound:     http.StatusNotFound,
	service.CodeTooManySubscribers: http.StatusTooManyRequests,
}

func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *service.Error
	if errors.As(err, &se) {
		if status, ok := statusOf[se.Code]; ok {
			writeError(w, status, string(se.Code), se.Message)
			return
		}
	}
	c.log.Error("console request failed", slog.String("path", r.URL.Path), slog.Any("err", err))
	writeError(w, http.StatusInternalServerError, "internal", "internal error (logged by the server)")
}

// render writes a server-rendered page (login, link confirmation).
func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		c.log.Error("console page", slog.String("page", name), slog.Any("err", err))
	}
}

func trimmed(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = s[:max]
	}
	return s
}
