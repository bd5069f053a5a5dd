package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Why a signed approval link is refused.
var (
	ErrLinkInvalid = errors.New("console: the link's signature does not match (altered or from another server run)")
	ErrLinkExpired = errors.New("console: the link has expired")
	ErrLinkUsed    = errors.New("console: the link was already used")
)

// link is one signed approve or deny link: it answers one approval, for
// the arguments with one digest, until it expires, once.
type link struct {
	ApprovalID     string
	ArgumentDigest string
	Decision       string // allow or deny
	Expires        time.Time
	Sig            string
}

// signer makes and checks links with a key that lives as long as the
// process: the approvals they answer do not survive a restart either.
type signer struct {
	key []byte
	now func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // signature → expiry, until it passes
}

func newSigner(now func() time.Time) *signer {
	key, _ := hex.DecodeString(randomHex(32))
	return &signer{key: key, now: now, used: map[string]time.Time{}}
}

// mac is HMAC-SHA256 over every field a link binds, each on its own line
// after a domain label, so no field can run into the next.
func (s *signer) mac(l link) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("govhost-approval-link-v1\n" + l.ApprovalID + "\n" + l.ArgumentDigest + "\n" + l.Decision + "\n" + strconv.FormatInt(l.Expires.Unix(), 10)))
	return m.Sum(nil)
}

func (s *signer) sign(approvalID, digest, decision string, ttl time.Duration) link {
	l := link{ApprovalID: approvalID, ArgumentDigest: digest, Decision: decision, Expires: s.now().Add(ttl).Truncate(time.Second)}
	l.Sig = hex.EncodeToString(s.mac(l))
	return l
}

// check verifies a link without using it.
func (s *signer) check(l link) error {
	sig, err := hex.DecodeString(l.Sig)
	if err != nil || !hmac.Equal(sig, s.mac(l)) {
		return ErrLinkInvalid
	}
	if !s.now().Before(l.Expires) {
		return ErrLinkExpired
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.used[l.Sig]; used {
		return ErrLinkUsed
	}
	return nil
}

// use verifies a link and marks it used; exactly one caller succeeds.
func (s *signer) use(l link) error {
	if err := s.check(l); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, used := s.used[l.Sig]; used {
		return ErrLinkUsed
	}
	now := s.now()
	for sig, exp := range s.used {
		if now.After(exp) {
			delete(s.used, sig) // expired: refused as such from now on
		}
	}
	s.used[l.Sig] = l.Expires
	return nil
}

// query is the link's part of a URL.
func (l link) query() url.Values {
	return url.Values{"approval": {l.ApprovalID}, "digest": {l.ArgumentDigest}, "decision": {l.Decision},
		"exp": {strconv.FormatInt(l.Expires.Unix(), 10)}, "sig": {l.Sig}}
}

// linkOf reads a link from a query or form; malformed fields make a link
// whose signature cannot match.
func linkOf(v url.Values) link {
	exp, _ := strconv.ParseInt(v.Get("exp"), 10, 64)
	return link{ApprovalID: v.Get("approval"), ArgumentDigest: v.Get("digest"), Decision: v.Get("decision"), Expires: time.Unix(exp, 0), Sig: v.Get("sig")}
}
