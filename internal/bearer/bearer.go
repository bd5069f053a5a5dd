// Package bearer owns the one check govhost's HTTP listeners (the sidecar,
// the MCP proxy) make of a request's bearer token.
package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Token is the token a listener expects, kept as its digest.
type Token struct{ digest [sha256.Size]byte }

// New returns the check for token.
func New(token string) Token { return Token{digest: sha256.Sum256([]byte(token))} }

// Matches reports whether r's Authorization header is "Bearer <token>"
// (scheme case-insensitive, the token trimmed of spaces). The comparison
// is constant-time over digests, so neither the token's bytes nor its
// length leak through timing.
func (t Token) Matches(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], t.digest[:]) == 1
}
