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
func (t Token) Matches(r *http.Request) bool { return t.Is(Presented(r)) }

// Digest is the digest of the token a request presents (Presented): a
// listener with several tokens (roles) hashes the request's once and
// compares it with each.
type Digest struct {
	sum [sha256.Size]byte
	ok  bool
}

// Presented digests the token of r's Authorization header ("Bearer
// <token>", scheme case-insensitive, the token trimmed of spaces); a
// request without one presents nothing that Is any token.
func Presented(r *http.Request) Digest {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return Digest{}
	}
	// NB: hashed from a stack buffer: a token is 64 hex characters, and
	// []byte(tok) would put each request's copy on the heap.
	var buf [128]byte
	return Digest{sum: sha256.Sum256(append(buf[:0], strings.TrimSpace(tok)...)), ok: true}
}

// Is reports, in constant time, whether d is the digest of t's token.
func (t Token) Is(d Digest) bool {
	return d.ok && subtle.ConstantTimeCompare(d.sum[:], t.digest[:]) == 1
}
