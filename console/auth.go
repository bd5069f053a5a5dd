package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Names the console's sign-in uses.
const (
	sessionCookie = "govhost_console"
	csrfHeader    = "X-CSRF-Token"
)

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("console: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b)
}

// digestOf keys secrets in memory by their sha256, so a map lookup does
// not compare the secret itself byte by byte.
func digestOf(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

// session is one signed-in browser.
type session struct {
	// label is public (it names the approver in evidence); the cookie
	// secret never leaves the cookie.
	label   string
	csrf    string
	expires time.Time
}

// Approver is the approver id recorded for a decision made in this
// session: console:<label>.
func (s *session) approverID() string { return s.label }

// gate holds the one-time login tokens and the sessions. Safe for
// concurrent use.
type gate struct {
	now        func() time.Time
	loginTTL   time.Duration
	sessionTTL time.Duration

	mu       sync.Mutex
	logins   map[[sha256.Size]byte]time.Time // token digest → expiry
	sessions map[[sha256.Size]byte]*session  // cookie digest → session
}

// newLogin mints a one-time login token.
func (g *gate) newLogin() string {
	token := randomHex(32)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sweep()
	g.logins[digestOf(token)] = g.now().Add(g.loginTTL)
	return token
}

// redeem uses a login token once: a fresh session's cookie secret, or ok
// false for a token that is unknown, used or expired.
func (g *gate) redeem(token string) (secret string, s *session, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	key := digestOf(token)
	exp, found := g.logins[key]
	delete(g.logins, key) // NB: used once, even when it turns out expired
	if !found || g.now().After(exp) {
		return "", nil, false
	}
	secret = randomHex(32)
	s = &session{label: randomHex(6), csrf: randomHex(32), expires: g.now().Add(g.sessionTTL)}
	g.sessions[digestOf(secret)] = s
	return secret, s, true
}

// session returns the request's session, if its cookie names a live one.
func (g *gate) session(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.sessions[digestOf(c.Value)]
	if s == nil || g.now().After(s.expires) {
		return nil
	}
	return s
}

func (g *gate) end(r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		g.mu.Lock()
		delete(g.sessions, digestOf(c.Value))
		g.mu.Unlock()
	}
}

// sweep drops expired tokens and sessions; called with g.mu held.
func (g *gate) sweep() {
	now := g.now()
	for k, exp := range g.logins {
		if now.After(exp) {
			delete(g.logins, k)
		}
	}
	for k, s := range g.sessions {
		if now.After(s.expires) {
			delete(g.sessions, k)
		}
	}
}

// csrfOK checks a state change: the session's token in the X-CSRF-Token
// header (constant-time) and a same-origin request.
func csrfOK(r *http.Request, s *session) bool {
	got := r.Header.Get(csrfHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1 && sameOrigin(r)
}

// sameOrigin accepts a request whose Origin is the console's own: browsers
// send Origin with every POST, so one without it did not come from a
// page (or came from a very old browser) and is refused.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && u.Host == r.Host && u.Path == ""
}

func setSessionCookie(w http.ResponseWriter, r *http.Request, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: secret, Path: "/ui/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}
