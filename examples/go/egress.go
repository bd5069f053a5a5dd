package main

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/govhost/govhost/abi"
	"github.com/govhost/govhost/sdk"
)

// Config is the egress gate's configuration (examples/README.md).
type Config struct {
	AllowedHosts   []string `json:"allowed_hosts"`
	BlockedHosts   []string `json:"blocked_hosts"`
	ApproveUnknown bool     `json:"approve_unknown"`
}

// Reason codes of the egress gate.
const (
	ReasonNotNetwork     = "egress.not_network"
	ReasonHostAllowed    = "egress.host_allowed"
	ReasonHostBlocked    = "egress.host_blocked"
	ReasonHostUnknown    = "egress.host_unknown"
	ReasonHostNotAllowed = "egress.host_not_allowed"
	ReasonNoHost         = "egress.no_host"
	ReasonBadURL         = "egress.bad_url"
)

var reasonCodes = []string{ReasonNotNetwork, ReasonHostAllowed, ReasonHostBlocked, ReasonHostUnknown, ReasonHostNotAllowed, ReasonNoHost, ReasonBadURL}

var errEmptyPattern = errors.New("egress: empty host pattern")

// newGate checks and lower-cases the patterns once per instance.
func newGate(cfg Config) (sdk.Func, error) {
	for _, list := range [][]string{cfg.AllowedHosts, cfg.BlockedHosts} {
		for i, p := range list {
			if p == "" {
				return nil, errEmptyPattern
			}
			list[i] = strings.ToLower(p)
		}
	}
	return func(in abi.GateInput) abi.GateOutput { return decide(cfg, in) }, nil
}

func decide(cfg Config, in abi.GateInput) abi.GateOutput {
	var args struct {
		URL  json.RawMessage `json:"url"`
		Host json.RawMessage `json:"host"`
	}
	_ = json.Unmarshal(in.Arguments, &args) // arguments are always an object
	url, hasURL := jsonString(args.URL)
	hostArg, hasHost := jsonString(args.Host)
	if in.Operation != "network_access" && !hasURL {
		return sdk.Allow(ReasonNotNetwork)
	}
	var host string
	var ok bool
	switch {
	case hasURL:
		host, ok = urlHost(url)
	case hasHost:
		host, ok = authorityHost(hostArg)
	default:
		out := sdk.Deny(ReasonNoHost, "")
		out.Message = "egress denied: the request names no host"
		return out
	}
	if !ok {
		out := sdk.Deny(ReasonBadURL, "")
		out.Message = "egress denied: the request's URL has no valid host"
		return out
	}
	if p, hit := match(cfg.BlockedHosts, host); hit {
		out := sdk.Deny(ReasonHostBlocked, "")
		out.Message, out.MatchedRule = "egress to "+host+" is blocked", p
		return out
	}
	if p, hit := match(cfg.AllowedHosts, host); hit {
		out := sdk.Allow(ReasonHostAllowed)
		out.MatchedRule = p
		return out
	}
	if cfg.ApproveUnknown {
		return sdk.RequireApproval(ReasonHostUnknown, "egress to "+host+" needs approval")
	}
	out := sdk.Deny(ReasonHostNotAllowed, "")
	out.Message = "egress to " + host + " is not in the allowlist"
	return out
}

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// urlHost returns the normalised host of scheme://[userinfo@]host[:port]...
func urlHost(url string) (string, bool) {
	i := strings.Index(url, "://")
	if i <= 0 || !validScheme(url[:i]) {
		return "", false
	}
	rest := url[i+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if strings.ContainsRune(rest, '\\') {
		return "", false
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	return authorityHost(rest)
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// authorityHost returns the normalised host of host[:port] or [v6][:port].
func authorityHost(a string) (string, bool) {
	var host, port string
	hasPort := false
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", false
		}
		host, a = a[:end+1], a[end+1:]
		if a != "" {
			if a[0] != ':' {
				return "", false
			}
			port, hasPort = a[1:], true
		}
		for i := 1; i < len(host)-1; i++ {
			if c := host[i]; !isHex(c) && c != ':' && c != '.' {
				return "", false
			}
		}
		if len(host) == 2 {
			return "", false
		}
	} else {
		host = a
		if c := strings.IndexByte(a, ':'); c >= 0 {
			host, port, hasPort = a[:c], a[c+1:], true
		}
		host = strings.ToLower(host)
		host = strings.TrimSuffix(host, ".")
		if host == "" {
			return "", false
		}
		for i := 0; i < len(host); i++ {
			if c := host[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
				return "", false
			}
		}
	}
	if hasPort {
		if len(port) == 0 || len(port) > 5 {
			return "", false
		}
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return "", false
			}
		}
	}
	return strings.ToLower(host), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// match returns the first pattern matching host: an exact name, or
// "*.suffix" for any subdomain of suffix (not suffix itself).
func match(patterns []string, host string) (string, bool) {
	for _, p := range patterns {
		if p == host || (strings.HasPrefix(p, "*.") && len(host) > len(p)-1 && strings.HasSuffix(host, p[1:])) {
			return p, true
		}
	}
	return "", false
}
