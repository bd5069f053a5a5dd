package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/govhost/govhost/api"
	"github.com/govhost/govhost/internal/bearer"
	"github.com/govhost/govhost/service"
)

// DefaultMaxBody bounds a request body (a policy file, a call's arguments).
const DefaultMaxBody = 1 << 20

// WriteTimeout bounds writing an answer: the longest long poll (wait_ms)
// and 30 s more. LoadTimeout, the bound serve gives every load of a gate
// module from outside (host.WithLoadTimeout), is shorter by far, so that an
// upload that takes too long is answered gate.load_timeout instead of
// having its connection cut (it was 2 min against a 90 s write timeout).
const (
	ReadTimeout  = 30 * time.Second
	WriteTimeout = time.Duration(api.MaxWaitMS)*time.Millisecond + 30*time.Second
	LoadTimeout  = 60 * time.Second
)

// Module uploads in flight: at most UploadSlots read their body and load
// at once; up to UploadQueue more wait, each at most UploadQueueWait (the
// body of a waiting upload stays in the client's socket, not in memory;
// an admitted upload gets the read timeout afresh for its body).
// Beyond that an upload is answered 503 upload_busy with Retry-After. With
// the host's own compile slots this keeps 32 concurrent 31 MiB uploads
// within a few hundred MiB.
const (
	UploadSlots     = 4
	UploadQueue     = 16
	UploadQueueWait = 30 * time.Second
)

// Config configures a Server.
type Config struct {
	Service *service.Service
	// Token is the agents' bearer token (DATA/token): every route but
	// /healthz and /readyz needs it or the operator token.
	Token string
	// OperatorToken is the operator's bearer token (DATA/operator-token):
	// the routes that change what governs (policies, bindings, modules,
	// exceptions) need it; the agents' token gets 403 there. It must differ
	// from Token.
	OperatorToken string
	// MaxBody bounds request bodies (default DefaultMaxBody).
	MaxBody int64
	// MaxModuleBody bounds an uploaded gate module, POST /v1/modules
	// (default api.MaxModuleBytes, 32 MiB; a Go-built gate is about 3.5 MB).
	MaxModuleBody int64
	Metrics       *Metrics
	Logger        *slog.Logger
	// Console, when set, serves /ui/ (package console). It is public in
	// the route table: the console signs people in itself.
	Console http.Handler
}

// Server is the HTTP API over one service.
type Server struct {
	svc          *service.Service
	token        bearer.Token // the agents'
	operator     bearer.Token
	maxBody      int64
	maxModule    int64
	metrics      *Metrics
	log          *slog.Logger
	ready        atomic.Bool
	mux          *http.ServeMux
	uploads      chan struct{} // one per upload in flight (UploadSlots)
	uploadsQueue atomic.Int64  // uploads waiting for a slot
	consoleUI    http.Handler
	// stop ends long-lived responses (event streams) at shutdown.
	stop     context.Context
	stopFunc context.CancelFunc
}

// role is who may call a route: the agents' token (roleAgent, the default)
// or only the operator's (roleOperator). The operator token is accepted
// on agent routes too.
type role uint8

const (
	roleAgent role = iota
	roleOperator
)

func (r role) String() string {
	if r == roleOperator {
		return "operator"
	}
	return "agent"
}

// route is one documented endpoint; Routes lists them for the OpenAPI test.
type route struct {
	method, pattern string
	public          bool
	role            role
	handle          func(s *Server, w http.ResponseWriter, r *http.Request) error
	// bodyLimit, when set and above the server's body limit, replaces it:
	// hook inputs carry whole files, gate modules are megabytes.
	bodyLimit func(*Server) int64
}

// Routes returns every route as "METHOD PATTERN".
func Routes() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		// "{path...}" (the mux's rest-of-path wildcard) is "{path}" in OpenAPI.
		out[i] = rt.method + " " + strings.ReplaceAll(rt.pattern, "...}", "}")
	}
	return out
}

// New returns a server; it answers 503 on /readyz until SetReady.
func New(cfg Config) (*Server, error) {
	if cfg.Service == nil || len(cfg.Token) < 32 || len(cfg.OperatorToken) < 32 {
		return nil, errors.New("server: Config needs a Service, a Token and an OperatorToken of at least 32 characters each")
	}
	if cfg.Token == cfg.OperatorToken {
		return nil, errors.New("server: the operator token must differ from the agents' token")
	}
	if cfg.OperatorToken != "" && (len(cfg.OperatorToken) < 32 || cfg.OperatorToken == cfg.Token) {
		return nil, errors.New("server: Config.OperatorToken must have at least 32 characters and differ from Token")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.MaxModuleBody <= 0 {
		cfg.MaxModuleBody = api.MaxModuleBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: cfg.Service, token: bearer.New(cfg.Token), operator: bearer.New(cfg.OperatorToken), maxBody: cfg.MaxBody, maxModule: cfg.MaxModuleBody, metrics: cfg.Metrics, log: cfg.Logger, mux: http.NewServeMux(), uploads: make(chan struct{}, UploadSlots), consoleUI: cfg.Console}
	s.stop, s.stopFunc = context.WithCancel(context.Background())
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt))
	}
	if s.metrics != nil {
		metrics := promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{})
		s.mux.Handle("GET /metrics", s.wrap(route{method: "GET", pattern: "/metrics", handle: func(_ *Server, w http.ResponseWriter, r *http.Request) error {
			metrics.ServeHTTP(w, r)
			return nil
		}}))
	}
	s.mux.Handle("/", s.wrap(route{pattern: "/", handle: func(_ *Server, _ http.ResponseWriter, r *http.Request) error {
		return refuse(codeNotFound, "no route "+r.Method+" "+r.URL.Path)
	}}))
	return s, nil
}

// consoleHome is the console's page (a directory-style path: its pages and
// assets are relative to it, and its session cookie's Path is /ui/).
const consoleHome = "/ui/"

// SetReady marks the stores and gates loaded.
func (s *Server) SetReady() { s.ready.Store(true) }

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveCanonical) }

// serveCanonical answers a request for a path that is not canonical
// (//v1/tasks, /v1/modules/../token, /v1/tasks/) with a JSON 404 before
// authentication, instead of http.ServeMux's redirect to the cleaned path
// with an HTML body: a client is told the path it sent does not exist, and
// nothing is served at a path other than the one asked for. The one path
// with a trailing slash is the console's home, consoleHome.
func (s *Server) serveCanonical(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if p == "" || p[0] != '/' || (p != "/" && p != consoleHome && path.Clean(p) != p) || strings.Contains(p, "%2f") || strings.Contains(p, "%2F") {
		s.writeError(w, r, refuse(codeNotFound, "no route "+r.Method+" "+p+" (paths are matched exactly: no //, no .., no trailing /)"))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Shutdown ends the event streams so http.Server.Shutdown can finish.
func (s *Server) Shutdown() { s.stopFunc() }

// HTTPServer returns an http.Server with the server's timeouts: reading a
// request is bounded, writing allows the longest long poll, idle
// keep-alive connections are closed after two minutes.
func (s *Server) HTTPServer(addr string) *http.Server {
	srv := &http.Server{
		Addr: addr, Handler: s.Handler(),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(s.Shutdown)
	return srv
}

// statusWriter remembers the status for metrics and logs.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// statusWriters recycles wrap's status writers: one is held by nothing
// once its handler returned (net/http finishes a request with its own
// writer and body, not the ones a handler was given).
var statusWriters = sync.Pool{New: func() any { return new(statusWriter) }}

// wrap adds authentication, the body limit, metrics and the request log.
func (s *Server) wrap(rt route) http.Handler {
	limit := s.maxBody
	if rt.bodyLimit != nil {
		limit = max(limit, rt.bodyLimit(s))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := statusWriters.Get().(*statusWriter)
		*sw = statusWriter{ResponseWriter: w}
		if n := r.ContentLength; n < 0 || n > limit {
			// NB: a body announced within the limit is cut at its length by
			// net/http already; the others read through the reader that
			// stops at the limit (and are refused by the handler's read).
			r.Body = http.MaxBytesReader(sw, r.Body, limit)
		}
		err := s.checkRole(rt, r)
		if err == nil {
			if rt.role == roleOperator {
				// Only the operator's routes record who changed something
				// (actorOf); the others keep the request as it came.
				r = r.WithContext(context.WithValue(r.Context(), callerKey{}, roleOperator.String()))
			}
			err = rt.handle(s, sw, r)
		}
		if err != nil {
			s.writeError(sw, r, err)
		}
		took := time.Since(start)
		if s.metrics != nil {
			s.metrics.request(rt.pattern, r.Method, sw.status, took)
		}
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("method", r.Method), slog.String("route", rt.pattern),
				slog.Int("status", sw.status), slog.Duration("took", took))
		}
		*sw = statusWriter{}
		statusWriters.Put(sw)
	})
}

// checkRole checks the bearer token against the route's role: 401 without
// a known token, 403 with the agents' token on an operator route. The
// request's token is hashed once (bearer.Presented) and compared with
// both.
func (s *Server) checkRole(rt route, r *http.Request) error {
	if rt.public {
		return nil
	}
	presented := bearer.Presented(r)
	switch {
	case s.operator.Is(presented):
		return nil
	case !s.token.Is(presented):
		return refuse(codeUnauthorized, "missing or wrong bearer token (Authorization: Bearer <token from the token file>)")
	case rt.role == roleOperator:
		return refuse(codeForbidden, "this route needs the operator token (the operator-token file in the data directory), not the agents' token")
	}
	return nil
}

type callerKey struct{}

// actorOf is the caller authenticated by wrap.
func actorOf(r *http.Request) string {
	who, _ := r.Context().Value(callerKey{}).(string)
	return who
}
