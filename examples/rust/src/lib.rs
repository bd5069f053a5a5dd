//! The egress example gate in Rust, written with sdk/rust (govhost_gate).
//! The policy is specified in examples/README.md; its shared cases are
//! examples/egress.cases.json. Build: `make examples` (README.md here).

use govhost_gate::{export_gate, Gate, GateInput, Json, Verdict};

struct Egress {
    allowed: Vec<String>,
    blocked: Vec<String>,
    approve_unknown: bool,
}

fn patterns(v: &Json) -> Result<Vec<String>, String> {
    let items = v.as_array().ok_or("a host list must be an array")?;
    let mut out = Vec::new();
    for item in items {
        match item.as_str() {
            Some(s) if !s.is_empty() => out.push(s.to_ascii_lowercase()),
            _ => return Err("a host pattern must be a non-empty string".into()),
        }
    }
    Ok(out)
}

impl Gate for Egress {
    fn configure(config: &Json) -> Result<Self, String> {
        let mut g = Egress { allowed: Vec::new(), blocked: Vec::new(), approve_unknown: false };
        for (k, v) in config.as_object().unwrap_or(&[]) {
            match k.as_str() {
                "allowed_hosts" => g.allowed = patterns(v)?,
                "blocked_hosts" => g.blocked = patterns(v)?,
                "approve_unknown" => g.approve_unknown = v.as_bool().ok_or("approve_unknown must be a boolean")?,
                _ => return Err(format!("unknown field {}", k)),
            }
        }
        Ok(g)
    }

    fn evaluate(&mut self, input: &GateInput) -> Verdict {
        let url = input.arguments.get("url").and_then(Json::as_str);
        let host_arg = input.arguments.get("host").and_then(Json::as_str);
        if input.operation != "network_access" && url.is_none() {
            return Verdict::allow("egress.not_network");
        }
        let host = match (url, host_arg) {
            (Some(u), _) => url_host(u),
            (None, Some(h)) => authority_host(h),
            (None, None) => {
                return Verdict::deny("egress.no_host").message("egress denied: the request names no host");
            }
        };
        let host = match host {
            Some(h) => h,
            None => return Verdict::deny("egress.bad_url").message("egress denied: the request's URL has no valid host"),
        };
        if let Some(p) = matching(&self.blocked, &host) {
            return Verdict::deny("egress.host_blocked").message(&format!("egress to {} is blocked", host)).matched_rule(p);
        }
        if let Some(p) = matching(&self.allowed, &host) {
            return Verdict::allow("egress.host_allowed").matched_rule(p);
        }
        if self.approve_unknown {
            return Verdict::require_approval("egress.host_unknown").message(&format!("egress to {} needs approval", host));
        }
        Verdict::deny("egress.host_not_allowed").message(&format!("egress to {} is not in the allowlist", host))
    }
}

/// The host of scheme://[userinfo@]authority[/?#...].
fn url_host(url: &str) -> Option<String> {
    let sep = url.find("://")?;
    let scheme = url[..sep].as_bytes();
    if scheme.is_empty() || !scheme[0].is_ascii_alphabetic() {
        return None;
    }
    if !scheme.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')) {
        return None;
    }
    let rest = &url[sep + 3..];
    let authority = &rest[..rest.find(|c| matches!(c, '/' | '?' | '#')).unwrap_or(rest.len())];
    if authority.contains('\\') {
        return None;
    }
    let authority = match authority.rfind('@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    authority_host(authority)
}

/// The normalised host of host[:port] or [v6][:port].
fn authority_host(a: &str) -> Option<String> {
    let (host, port) = if let Some(inner) = a.strip_prefix('[') {
        let close = inner.find(']')?;
        let v6 = &inner[..close];
        if v6.is_empty() || !v6.bytes().all(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.') {
            return None;
        }
        let after = &inner[close + 1..];
        let port = if after.is_empty() { None } else { Some(after.strip_prefix(':')?) };
        (format!("[{}]", v6.to_ascii_lowercase()), port)
    } else {
        let (h, port) = match a.find(':') {
            Some(c) => (&a[..c], Some(&a[c + 1..])),
            None => (a, None),
        };
        let mut h = h.to_ascii_lowercase();
        if h.ends_with('.') {
            h.pop();
        }
        if h.is_empty() || !h.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'.' || c == b'-') {
            return None;
        }
        (h, port)
    };
    if let Some(p) = port {
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
    }
    Some(host)
}

/// The first pattern matching host: an exact name, or "*.suffix" for any
/// subdomain of suffix (not suffix itself).
fn matching<'a>(patterns: &'a [String], host: &str) -> Option<&'a str> {
    patterns
        .iter()
        .find(|p| p.as_str() == host || (p.starts_with("*.") && host.len() > p.len() - 1 && host.ends_with(&p[1..])))
        .map(String::as_str)
}

export_gate!(Egress);
