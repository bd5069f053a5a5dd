// The egress example gate in AssemblyScript, written with
// sdk/assemblyscript (@govhost/gate). The policy is specified in
// examples/README.md; its shared cases are examples/egress.cases.json.
// Build: `make examples` (README.md here).
import { register, Json, GateInput, Verdict } from "../../../sdk/assemblyscript/assembly/index";
export { gate_abi_version, gate_alloc, gate_configure, gate_evaluate } from "../../../sdk/assemblyscript/assembly/index";

let allowed = new Array<string>();
let blocked = new Array<string>();
let approveUnknown = false;

// Reads an array of non-empty strings, lower-cased; null when it is not one.
function patterns(v: Json): Array<string> | null {
  if (!v.isArray()) return null;
  const out = new Array<string>();
  for (let i = 0; i < v.items.length; i++) {
    const item = v.items[i];
    if (!item.isString() || item.str.length == 0) return null;
    out.push(item.str.toLowerCase());
  }
  return out;
}

function configure(config: Json): bool {
  allowed = new Array<string>();
  blocked = new Array<string>();
  approveUnknown = false;
  for (let i = 0; i < config.keys.length; i++) {
    const k = config.keys[i];
    const v = config.items[i];
    if (k == "allowed_hosts" || k == "blocked_hosts") {
      const list = patterns(v);
      if (list == null) return false;
      if (k == "allowed_hosts") allowed = list;
      else blocked = list;
    } else if (k == "approve_unknown") {
      if (!v.isBool()) return false;
      approveUnknown = v.bool;
    } else {
      return false; // unknown field
    }
  }
  return true;
}

function isDigit(c: i32): bool { return c >= 0x30 && c <= 0x39; }
function isHex(c: i32): bool { return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46); }
function isAlpha(c: i32): bool { return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a); }

// The normalised host of host[:port] or [v6][:port]; "" when invalid.
function authorityHost(a: string): string {
  let host: string;
  let port: string | null = null;
  if (a.startsWith("[")) {
    const close = a.indexOf("]");
    if (close < 0 || close == 1) return "";
    for (let i = 1; i < close; i++) {
      const c = a.charCodeAt(i);
      if (!isHex(c) && c != 0x3a && c != 0x2e) return "";
    }
    host = a.substring(0, close + 1).toLowerCase();
    const after = a.substring(close + 1);
    if (after.length > 0) {
      if (!after.startsWith(":")) return "";
      port = after.substring(1);
    }
  } else {
    const colon = a.indexOf(":");
    host = colon >= 0 ? a.substring(0, colon) : a;
    if (colon >= 0) port = a.substring(colon + 1);
    host = host.toLowerCase();
    if (host.endsWith(".")) host = host.substring(0, host.length - 1);
    if (host.length == 0) return "";
    for (let i = 0; i < host.length; i++) {
      const c = host.charCodeAt(i);
      if (!((c >= 0x61 && c <= 0x7a) || isDigit(c) || c == 0x2e || c == 0x2d)) return "";
    }
  }
  if (port != null) {
    const p = <string>port;
    if (p.length == 0 || p.length > 5) return "";
    for (let i = 0; i < p.length; i++) if (!isDigit(p.charCodeAt(i))) return "";
  }
  return host;
}

// The host of scheme://[userinfo@]authority[/?#...]; "" when invalid.
function urlHost(url: string): string {
  const sep = url.indexOf("://");
  if (sep <= 0 || !isAlpha(url.charCodeAt(0))) return "";
  for (let i = 1; i < sep; i++) {
    const c = url.charCodeAt(i);
    if (!isAlpha(c) && !isDigit(c) && c != 0x2b && c != 0x2d && c != 0x2e) return "";
  }
  let authority = url.substring(sep + 3);
  for (let i = 0; i < authority.length; i++) {
    const c = authority.charCodeAt(i);
    if (c == 0x2f || c == 0x3f || c == 0x23) { authority = authority.substring(0, i); break; }
  }
  if (authority.includes("\\")) return "";
  const at = authority.lastIndexOf("@");
  if (at >= 0) authority = authority.substring(at + 1);
  return authorityHost(authority);
}

// The first pattern matching host: an exact name, or "*.suffix" for any
// subdomain of suffix (not suffix itself); "" when none.
function matching(list: Array<string>, host: string): string {
  for (let i = 0; i < list.length; i++) {
    const p = list[i];
    if (p == host) return p;
    if (p.startsWith("*.") && host.length > p.length - 1 && host.endsWith(p.substring(1))) return p;
  }
  return "";
}

function evaluate(input: GateInput): Verdict {
  const url = input.arguments.get("url");
  const hostArg = input.arguments.get("host");
  const hasURL = url != null && url.isString();
  const hasHost = hostArg != null && hostArg.isString();
  if (input.operation != "network_access" && !hasURL) return Verdict.allow("egress.not_network");
  let host: string;
  if (hasURL) host = urlHost(url!.str);
  else if (hasHost) host = authorityHost(hostArg!.str);
  else return Verdict.deny("egress.no_host").withMessage("egress denied: the request names no host");
  if (host.length == 0) return Verdict.deny("egress.bad_url").withMessage("egress denied: the request's URL has no valid host");
  let p = matching(blocked, host);
  if (p.length > 0) return Verdict.deny("egress.host_blocked").withMessage("egress to " + host + " is blocked").withMatchedRule(p);
  p = matching(allowed, host);
  if (p.length > 0) return Verdict.allow("egress.host_allowed").withMatchedRule(p);
  if (approveUnknown) return Verdict.requireApproval("egress.host_unknown").withMessage("egress to " + host + " needs approval");
  return Verdict.deny("egress.host_not_allowed").withMessage("egress to " + host + " is not in the allowlist");
}

register(configure, evaluate);
