//! The built-in path gate as a native-ABI v1 module: LionAGI's guard_paths,
//! AgentLane's workspace and path-scope policies and the virtual storage
//! kind, decided on the host's path facts. Specified in
//! plugins/pathguard/README.md; a port of the Go package plugins/pathguard,
//! kept identical by plugins/builtin's differential fuzz target. Built by
//! `make plugins`.

#[path = "gatekit.rs"]
mod gatekit;

use gatekit::{py_repr, Answer, Gate, Input, Output, PathFact};

const REASON_ALLOWED: &str = "path.allowed";
const REASON_NO_PATH: &str = "path.no_path";
const REASON_NOT_CHECKED: &str = "path.not_checked";
const REASON_NON_PATH_OPERATION: &str = "path.non_path_operation";
const REASON_OUTSIDE_ROOT: &str = "path.outside_root";
const REASON_OUTSIDE_SCOPE: &str = "path.outside_scope";
const REASON_DENIED: &str = "path.denied";
const REASON_SYMLINK: &str = "path.symlink";
const REASON_PROTECTED: &str = "path.protected";
const REASON_OPERATION_NOT_ALLOWED: &str = "path.operation_not_allowed";
const REASON_OPERATION_UNKNOWN: &str = "path.operation_unknown";
const REASON_MISSING_PATH: &str = "path.missing";
const REASON_UNVERIFIABLE: &str = "path.unverifiable";
const REASON_INVALID_FACT: &str = "path.invalid_fact";
const REASON_NO_WORKSPACE: &str = "path.no_workspace";
const REASON_VIRTUAL_INVALID: &str = "path.virtual_invalid";
const REASON_MOUNT_UNKNOWN: &str = "path.mount_unknown";
const REASON_MOUNT_ROOT: &str = "path.mount_root";
const REASON_READ_ONLY: &str = "path.read_only";

const OP_READ_FILE: &str = "read_file";
const OP_SEARCH_FILES: &str = "search_files";
const OP_CREATE_FILE: &str = "create_file";
const OP_OVERWRITE_FILE: &str = "overwrite_file";
const OP_MODIFY_FILE: &str = "modify_file";
const OP_CREATE_DIRECTORY: &str = "create_directory";
const OP_EXECUTE_COMMAND: &str = "execute_command";
const OP_NETWORK_ACCESS: &str = "network_access";

const ALL_OPS: [&str; 8] = [
    OP_READ_FILE,
    OP_SEARCH_FILES,
    OP_CREATE_FILE,
    OP_OVERWRITE_FILE,
    OP_MODIFY_FILE,
    OP_CREATE_DIRECTORY,
    OP_EXECUTE_COMMAND,
    OP_NETWORK_ACCESS,
];

fn parse_op(s: &str) -> Option<&'static str> {
    ALL_OPS.iter().find(|o| **o == s).copied()
}

fn is_path_op(op: &str) -> bool {
    matches!(op, OP_READ_FILE | OP_SEARCH_FILES | OP_CREATE_FILE | OP_OVERWRITE_FILE | OP_MODIFY_FILE | OP_CREATE_DIRECTORY)
}

fn virtual_write(op: &str) -> bool {
    matches!(op, OP_CREATE_FILE | OP_OVERWRITE_FILE | OP_MODIFY_FILE | OP_CREATE_DIRECTORY)
}

const WORKSPACE_REF: &str = "$workspace";

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    GuardPaths,
    Workspace,
    PathScope,
    Virtual,
}

#[derive(Clone)]
enum DeniedKind {
    Absolute(String),
    Glob(gatekit::Pattern),
    Text,
}

#[derive(Clone)]
struct DeniedRule {
    text: String,
    kind: DeniedKind,
}

#[derive(Clone)]
struct Mount {
    name: String,
    read_only: bool,
}

#[derive(Clone)]
struct Virtual {
    mounts: Vec<Mount>,
    roots: Option<Vec<String>>,
    cwd: String,
}

#[derive(Clone)]
struct Config {
    kind: Kind,
    home: String,
    roots: Vec<String>,
    denied: Vec<DeniedRule>,
    refuse_symlinks: bool,
    /// every_path_argument: guard_paths checks every path fact, not only
    /// path and file_path.
    every_path: bool,
    scopes: Vec<String>,
    ops: Option<Vec<&'static str>>,
    /// checked_operations: the operations workspace / path_scope check;
    /// any other call is allowed path.not_checked first.
    checked: Option<Vec<&'static str>>,
    virt: Option<Virtual>,
    uses_workspace: bool,
}

// ---------------------------------------------------------------------------
// Configuration (plugins/pathguard/config.go), read as encoding/json reads a
// map[string]json.RawMessage: the last of repeated names wins.

type Fields<'a> = Vec<(gatekit::Str<'a>, &'a [u8])>;

fn fields(raw: &[u8]) -> Option<Fields> {
    let mut r = gatekit::Reader::new(raw);
    r.ws();
    if r.literal(b"null") {
        return if r.at_end() { Some(Vec::new()) } else { None };
    }
    let mut out: Fields = Vec::new();
    r.object(|r, k| {
        let v = r.skip()?;
        match out.iter_mut().find(|(n, _)| *n == k) {
            Some(m) => m.1 = v,
            None => out.push((k, v)),
        }
        Some(())
    })?;
    if r.at_end() {
        Some(out)
    } else {
        None
    }
}

fn get<'a>(f: &Fields<'a>, name: &str) -> Option<&'a [u8]> {
    f.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// A present value that is not null.
fn present<'a>(f: &Fields<'a>, name: &str) -> Option<&'a [u8]> {
    get(f, name).filter(|v| *v != b"null")
}

/// json.Unmarshal of a raw value into a string (null is not handled here).
fn as_string(raw: &[u8]) -> Option<String> {
    let mut r = gatekit::Reader::new(raw);
    let s = r.string()?;
    Some(s.into_owned())
}

/// decodeString: Ok(None) when absent or null.
fn decode_string(f: &Fields, name: &str, required: bool) -> Result<String, ()> {
    match present(f, name) {
        None => {
            if required {
                Err(())
            } else {
                Ok(String::new())
            }
        }
        Some(raw) => {
            let s = as_string(raw).ok_or(())?;
            if required && s.is_empty() {
                return Err(());
            }
            Ok(s)
        }
    }
}

/// decodeStrings: None when absent or null; every item a string.
fn decode_strings(f: &Fields, name: &str) -> Result<Option<Vec<String>>, ()> {
    let raw = match present(f, name) {
        None => return Ok(None),
        Some(r) => r,
    };
    let mut r = gatekit::Reader::new(raw);
    let mut out = Vec::new();
    r.array(|r| {
        if r.peek() != b'"' {
            // NB: null and every non-string is refused, as decodeStrings does.
            r.skip()?;
            return None;
        }
        out.push(r.string()?.into_owned());
        Some(())
    })
    .ok_or(())?;
    Ok(Some(out))
}

fn parse_config(raw: &[u8]) -> Option<Config> {
    let raw = gatekit::trim_ws(raw);
    if raw.is_empty() || raw == b"null" {
        return None;
    }
    if gatekit::trim_ws(raw).first() != Some(&b'{') {
        return None;
    }
    let f = fields(raw)?;
    let kind_text = decode_string(&f, "kind", true).ok()?;
    let (kind, allowed): (Kind, &[&str]) = match kind_text.as_str() {
        "guard_paths" => (Kind::GuardPaths, &["allowed_paths", "denied_paths", "refuse_symlinks", "every_path_argument"]),
        "workspace" => (Kind::Workspace, &["root", "allowed_operations", "checked_operations"]),
        "path_scope" => (Kind::PathScope, &["paths", "allowed_operations", "checked_operations"]),
        "virtual" => (Kind::Virtual, &["mounts", "roots", "cwd", "allowed_operations"]),
        _ => return None,
    };
    for (k, _) in &f {
        if k != "kind" && k != "home" && !allowed.contains(&k.as_ref()) {
            return None;
        }
    }
    let mut c = Config {
        kind,
        home: String::new(),
        roots: Vec::new(),
        denied: Vec::new(),
        refuse_symlinks: false,
        every_path: false,
        scopes: Vec::new(),
        ops: None,
        checked: None,
        virt: None,
        uses_workspace: false,
    };
    let home = decode_string(&f, "home", false).ok()?;
    if !home.is_empty() {
        if !home.starts_with('/') {
            return None;
        }
        c.home = gatekit::clean_path(&home);
    }
    match kind {
        Kind::GuardPaths => c.parse_guard_paths(&f)?,
        Kind::Virtual => c.parse_virtual(&f)?,
        Kind::Workspace => {
            let root = decode_string(&f, "root", true).ok()?;
            let p = c.abs_path(&root)?;
            c.scopes = vec![p];
            c.parse_ops(&f)?;
        }
        Kind::PathScope => {
            let list = decode_strings(&f, "paths").ok()??;
            for s in list {
                let p = c.abs_path(&s)?;
                c.scopes.push(p);
            }
            c.parse_ops(&f)?;
        }
    }
    Some(c)
}

impl Config {
    fn parse_guard_paths(&mut self, f: &Fields) -> Option<()> {
        if let Some(raw) = present(f, "refuse_symlinks") {
            self.refuse_symlinks = match raw {
                b"true" => true,
                b"false" => false,
                _ => return None,
            };
        }
        if let Some(raw) = present(f, "every_path_argument") {
            self.every_path = match raw {
                b"true" => true,
                b"false" => false,
                _ => return None,
            };
        }
        if let Some(list) = decode_strings(f, "allowed_paths").ok()? {
            for s in list {
                let p = self.abs_path(&s)?;
                self.roots.push(p);
            }
        }
        if let Some(list) = decode_strings(f, "denied_paths").ok()? {
            for s in list {
                if s.contains('\0') {
                    return None;
                }
                let expanded = self.expand_home(&s)?;
                let kind = if s.starts_with("$workspace/") || s == WORKSPACE_REF {
                    DeniedKind::Absolute(self.abs_path(&s)?)
                } else if expanded.starts_with('/') {
                    DeniedKind::Absolute(gatekit::clean_path(&expanded))
                } else if s.contains(|c| matches!(c, '*' | '?' | '[')) {
                    DeniedKind::Glob(gatekit::Pattern::compile(&s))
                } else {
                    DeniedKind::Text
                };
                self.denied.push(DeniedRule { text: s, kind });
            }
        }
        Some(())
    }

    fn parse_ops(&mut self, f: &Fields) -> Option<()> {
        if let Some(list) = decode_strings(f, "checked_operations").ok()? {
            let mut ops = Vec::new();
            for s in list {
                ops.push(parse_op(&s)?);
            }
            self.checked = Some(ops);
        }
        let list = match decode_strings(f, "allowed_operations").ok()? {
            None => return Some(()),
            Some(l) => l,
        };
        let mut ops = Vec::new();
        for s in list {
            ops.push(parse_op(&s)?);
        }
        self.ops = Some(ops);
        Some(())
    }

    fn allows_op(&self, op: &str) -> bool {
        match &self.ops {
            None => true,
            Some(ops) => ops.contains(&op),
        }
    }

    /// absPath: a configured absolute path, or a "$workspace" one.
    fn abs_path(&mut self, s: &str) -> Option<String> {
        if s.contains('\0') {
            return None;
        }
        if let Some(rest) = s.strip_prefix(WORKSPACE_REF) {
            if rest.is_empty() || rest.starts_with('/') {
                if rest.split('/').any(|c| c == "..") {
                    return None;
                }
                self.uses_workspace = true;
                let joined = format!("{}{}", WORKSPACE_REF, gatekit::clean_path(&format!("/{}", rest)));
                return Some(joined.strip_suffix('/').map(str::to_string).unwrap_or(joined));
            }
        }
        let expanded = self.expand_home(s)?;
        if !expanded.starts_with('/') {
            return None;
        }
        Some(gatekit::clean_path(&expanded))
    }

    fn expand_home(&self, s: &str) -> Option<String> {
        if !s.starts_with('~') {
            return Some(s.to_string());
        }
        expand_home(s, &self.home)
    }

    fn parse_virtual(&mut self, f: &Fields) -> Option<()> {
        let mut v = Virtual { mounts: Vec::new(), roots: None, cwd: "/".to_string() };
        let raw = present(f, "mounts")?;
        let mut r = gatekit::Reader::new(raw);
        let mut items: Vec<&[u8]> = Vec::new();
        r.array(|r| {
            items.push(r.skip()?);
            Some(())
        })?;
        for item in items {
            if item == b"null" {
                return None;
            }
            let mf = fields(item)?;
            if item.first() != Some(&b'{') {
                return None;
            }
            for (k, _) in &mf {
                if k != "name" && k != "read_only" {
                    return None;
                }
            }
            let name = as_string(present(&mf, "name")?)?;
            let mut read_only = false;
            if let Some(raw) = present(&mf, "read_only") {
                read_only = match raw {
                    b"true" => true,
                    b"false" => false,
                    _ => return None,
                };
            }
            match normalize_virtual_path(&name, "/") {
                Ok(norm) if norm == format!("/{}", name) && !name.contains('/') => {}
                _ => return None,
            }
            if v.mounts.iter().any(|m| m.name == name) {
                return None;
            }
            v.mounts.push(Mount { name, read_only });
        }
        if let Some(raw) = present(f, "cwd") {
            let cwd = as_string(raw)?;
            v.cwd = normalize_virtual_path(".", &cwd).ok()?;
        }
        if let Some(roots) = decode_strings(f, "roots").ok()? {
            let mut out = Vec::new();
            for r in roots {
                out.push(normalize_virtual_path(&r, "/").ok()?);
            }
            v.roots = Some(out);
        }
        self.virt = Some(v);
        self.parse_ops(f)
    }

    /// withWorkspace: every "$workspace" path replaced by ws.
    fn with_workspace(&self, ws: &str) -> Config {
        let sub = |p: &str| -> String {
            match p.strip_prefix(WORKSPACE_REF) {
                Some(rest) => path_join(ws, rest),
                None => p.to_string(),
            }
        };
        let mut out = self.clone();
        out.uses_workspace = false;
        out.roots = self.roots.iter().map(|r| sub(r)).collect();
        out.scopes = self.scopes.iter().map(|r| sub(r)).collect();
        for d in out.denied.iter_mut() {
            if let DeniedKind::Absolute(abs) = &d.kind {
                d.kind = DeniedKind::Absolute(sub(abs));
            }
        }
        out
    }
}

/// expandHome: "~" and "~/..." with home ("" = unknown).
fn expand_home(s: &str, home: &str) -> Option<String> {
    if !s.starts_with('~') {
        return Some(s.to_string());
    }
    if home.is_empty() || (s.len() > 1 && s.as_bytes()[1] != b'/') {
        return None;
    }
    let out = format!("{}{}", home.trim_end_matches('/'), &s[1..]);
    if out.is_empty() {
        return Some("/".to_string());
    }
    Some(out)
}

// ---------------------------------------------------------------------------
// Paths, as Go's path package and pathlib write them.

/// path.Join of two elements.
fn path_join(a: &str, b: &str) -> String {
    if a.is_empty() && b.is_empty() {
        return String::new();
    }
    if a.is_empty() {
        return gatekit::clean_path(b);
    }
    if b.is_empty() {
        return gatekit::clean_path(a);
    }
    gatekit::clean_path(&format!("{}/{}", a, b))
}

/// path.Base.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".to_string();
    }
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        return "/".to_string();
    }
    match p.rfind('/') {
        Some(i) => p[i + 1..].to_string(),
        None => p.to_string(),
    }
}

/// path.Dir.
fn path_dir(p: &str) -> String {
    let i = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    gatekit::clean_path(&p[..i])
}

/// str(pathlib.PurePosixPath(p)).
fn pathlib_str(p: &str) -> String {
    if p.is_empty() {
        return ".".to_string();
    }
    let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let out = parts.join("/");
    if p.starts_with('/') {
        if p.starts_with("//") && !p.starts_with("///") {
            return format!("//{}", out);
        }
        return format!("/{}", out);
    }
    if out.is_empty() {
        return ".".to_string();
    }
    out
}

fn valid_fact(f: &PathFact) -> bool {
    f.resolved.starts_with('/') && gatekit::clean_path(&f.resolved) == f.resolved.as_ref()
}

/// p == root or beneath it, whole components.
fn within(p: &str, root: &str) -> bool {
    if root == "/" {
        return true;
    }
    p == root || (p.len() > root.len() && p.as_bytes()[root.len()] == b'/' && &p.as_bytes()[..root.len()] == root.as_bytes())
}

fn strictly_within(p: &str, root: &str) -> bool {
    p != root && within(p, root)
}

// ---------------------------------------------------------------------------
// Texts (plugins/pathguard/texts.go).

/// AgentLane's format_tool_permission_result for a deny without a reason.
fn denied_message(tool: &str, subject: &str, input: &Input) -> String {
    if !subject.is_empty() {
        format!("permission denied: {} is not allowed for `{}`", tool, subject)
    } else if has_command(input.arguments) {
        format!("permission denied: {} is not allowed for this command", tool)
    } else {
        format!("permission denied: {} is not allowed", tool)
    }
}

/// A "command" member that is not null (AgentLane's request.command).
fn has_command(args: &[u8]) -> bool {
    if args.is_empty() || !args.windows(9).any(|w| w == b"\"command\"") {
        return false;
    }
    match fields(args) {
        Some(f) => present(&f, "command").is_some(),
        None => false,
    }
}

const PROTECTED_NAMES: [&str; 6] = [".env", ".netrc", "id_rsa", "id_ed25519", "id_ecdsa", ".htpasswd"];

/// A protected basename, compared in Python's casefold() form.
fn is_protected_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 64 {
        return false;
    }
    let mut folded: Vec<u8> = Vec::with_capacity(96);
    for ch in name.chars() {
        let r = ch as u32;
        if r < 0x80 {
            folded.push((r as u8).to_ascii_lowercase());
        } else if r == 0xDF || r == 0x1E9E {
            folded.extend_from_slice(b"ss");
        } else if r == 0xFB05 || r == 0xFB06 {
            folded.extend_from_slice(b"st");
        } else {
            match gatekit::ascii_fold(r) {
                Some(c) => folded.push(c),
                None => return false,
            }
        }
    }
    PROTECTED_NAMES.iter().any(|p| p.as_bytes() == folded.as_slice())
}

// ---------------------------------------------------------------------------
// Evaluation (plugins/pathguard/gate.go).

struct PathGuard {
    cfg: Config,
    /// guard_paths' answer to a call with no path (the usual bash call),
    /// encoded once.
    no_path: Vec<u8>,
}

impl Gate for PathGuard {
    fn configure(config: &[u8]) -> Option<Self> {
        parse_config(config).map(|cfg| PathGuard { cfg, no_path: allow(REASON_NO_PATH, "").encode() })
    }

    fn evaluate(&self, input: &Input) -> Answer<'_> {
        // NB: what eval_guard_paths answers a call without paths, when
        // nothing is checked before it.
        if self.cfg.kind == Kind::GuardPaths && self.cfg.checked.is_none() && !self.cfg.uses_workspace && input.paths.is_empty() {
            return Answer::Encoded(&self.no_path);
        }
        if let Some(checked) = &self.cfg.checked {
            if !covers(checked, input) {
                return allow(REASON_NOT_CHECKED, "").into();
            }
        }
        if self.cfg.uses_workspace {
            let ws: &str = &input.workspace;
            if !ws.starts_with('/') || gatekit::clean_path(ws) != ws {
                let subject: &str = input.paths.first().map(|p| p.resolved.as_ref()).unwrap_or("");
                let detail = if ws.is_empty() {
                    "the policy names $workspace, and the task has no workspace".to_string()
                } else {
                    format!("the policy names $workspace, and the task's workspace {} is not a clean absolute path", py_repr(ws))
                };
                let mut o = Output::deny(REASON_NO_WORKSPACE);
                o.detail = detail;
                o.message = denied_message(&input.tool, subject, input);
                return o.into();
            }
            return self.cfg.with_workspace(ws).evaluate(input).into();
        }
        self.cfg.evaluate(input).into()
    }
}

/// Whether checked_operations covers the call: its operation, or one of
/// the requests inferred for an AgentLane tool (from the facts as sent).
fn covers(checked: &[&str], input: &Input) -> bool {
    if !input.operation.is_empty() {
        return checked.contains(&input.operation.as_ref());
    }
    match infer_requests(&input.tool, &input.paths, &input.cwd) {
        Some(reqs) => reqs.iter().any(|(op, _)| checked.contains(op)),
        None => false,
    }
}

fn allow(code: &'static str, rule: &str) -> Output {
    let mut o = Output::allow(code);
    o.matched_rule = rule.to_string();
    o
}

fn deny(code: &'static str, detail: String, message: String) -> Output {
    let mut o = Output::deny(code);
    o.detail = detail;
    o.message = message;
    o
}

impl Config {
    fn evaluate(&self, input: &Input) -> Output {
        match self.kind {
            Kind::GuardPaths => self.eval_guard_paths(input),
            Kind::Virtual => self.eval_virtual(input),
            _ => self.eval_agentlane(input),
        }
    }

    // --- guard_paths (guardpaths.go) --------------------------------------

    fn eval_guard_paths(&self, input: &Input) -> Output {
        let mut checked: Vec<&PathFact> = Vec::new();
        if self.every_path {
            checked.extend(input.paths.iter().filter(|f| !f.raw.is_empty() || !f.resolved.is_empty()));
        }
        for arg in ["path", "file_path"] {
            if self.every_path {
                break;
            }
            if let Some(f) = input.paths.iter().find(|f| f.arg == arg && (!f.raw.is_empty() || !f.resolved.is_empty())) {
                checked.push(f);
            }
        }
        if checked.is_empty() {
            return allow(REASON_NO_PATH, "");
        }
        let mut rule = String::new();
        for f in checked {
            let (out, matched) = self.check_guard_path(input, f);
            if out.decision != gatekit::ALLOW {
                return out;
            }
            if rule.is_empty() {
                rule = matched;
            }
        }
        allow(REASON_ALLOWED, &rule)
    }

    fn check_guard_path(&self, input: &Input, f: &PathFact) -> (Output, String) {
        let d = |code: &'static str, detail: String, rule: &str| -> (Output, String) {
            let mut o = deny(code, detail, denied_message(&input.tool, &f.resolved, input));
            o.matched_rule = rule.to_string();
            (o, String::new())
        };
        if !valid_fact(f) {
            return d(REASON_INVALID_FACT, format!("path fact for {} is not an absolute clean path: {}", f.arg, py_repr(&f.resolved)), "");
        }
        let raw: &str = if f.raw.is_empty() { &f.resolved } else { &f.raw };
        let expanded = match expand_home(raw, &self.home) {
            Some(e) => e,
            None => {
                return d(
                    REASON_UNVERIFIABLE,
                    format!("cannot verify {}: the gate expands \"~\" only with a configured home", py_repr(raw)),
                    "",
                )
            }
        };
        let cwd = if input.cwd.is_empty() { String::new() } else { gatekit::clean_path(&input.cwd) };
        // (resolved, lexical, real)
        let mut views: Vec<(String, String, bool)> = Vec::with_capacity(2);
        let resolved = f.resolved.to_string();
        if expanded.starts_with('/') {
            views.push((resolved, gatekit::clean_path(&expanded), true));
        } else if !self.roots.is_empty() && (cwd.is_empty() || cwd == self.roots[0]) {
            views.push((resolved, path_join(&self.roots[0], &expanded), true));
        } else if !self.roots.is_empty() {
            if !cwd.starts_with('/') {
                return d(REASON_UNVERIFIABLE, format!("cannot verify {}: cwd is not absolute", py_repr(raw)), "");
            }
            views.push((resolved, path_join(&cwd, &expanded), true));
            let lion = path_join(&self.roots[0], &expanded);
            views.push((lion.clone(), lion, false));
        } else {
            if !cwd.starts_with('/') {
                return d(
                    REASON_UNVERIFIABLE,
                    format!("cannot verify relative path {} without an absolute cwd", py_repr(raw)),
                    "",
                );
            }
            views.push((resolved, path_join(&cwd, &expanded), true));
        }
        let mut matched_root = String::new();
        for (vres, vlex, vreal) in &views {
            if self.refuse_symlinks && *vreal && f.link {
                let mut cand = pathlib_str(&expanded);
                if !expanded.starts_with('/') && !self.roots.is_empty() {
                    cand = pathlib_str(&format!("{}/{}", self.roots[0], expanded));
                }
                return d(REASON_SYMLINK, format!("Refusing to access symlink: {}", py_repr(&cand)), "");
            }
            if !self.roots.is_empty() {
                let root = match self.roots.iter().find(|r| within(vres, r)) {
                    Some(r) => r.clone(),
                    None => return d(REASON_OUTSIDE_ROOT, format!("Path not in allowed list: {}", raw), ""),
                };
                if matched_root.is_empty() {
                    matched_root = root;
                }
            }
            let name = if vres == "/" { String::new() } else { path_base(vres) };
            if is_protected_name(&name) {
                return d(REASON_PROTECTED, format!("Refusing to access protected path: {}", py_repr(&name)), "");
            }
            let asked = path_base(vlex);
            if vlex != vres && vlex != "/" && is_protected_name(&asked) {
                return d(REASON_PROTECTED, format!("Refusing to access protected path: {}", py_repr(&asked)), "");
            }
            for rule in &self.denied {
                if rule.matches(vres, vlex, raw, &name) {
                    return d(REASON_DENIED, format!("Path matches deny rule: {}", raw), &rule.text);
                }
            }
        }
        (Output::allow(REASON_ALLOWED), matched_root)
    }

    // --- workspace and path_scope (agentlane.go) ---------------------------

    fn eval_agentlane(&self, input: &Input) -> Output {
        let facts: Vec<PathFact> = input.paths.iter().filter(|f| !f.raw.is_empty() || !f.resolved.is_empty()).cloned().collect();
        let op: &str = &input.operation;
        if op.is_empty() {
            let reqs = match infer_requests(&input.tool, &facts, &input.cwd) {
                Some(r) => r,
                None => {
                    return self.al_deny(
                        input,
                        facts.first(),
                        REASON_OPERATION_UNKNOWN,
                        format!("no operation given and none can be inferred for tool {}", py_repr(&input.tool)),
                    )
                }
            };
            let mut rule = String::new();
            for (rop, rfacts) in &reqs {
                let out = self.check_request(input, rop, rfacts);
                if out.decision != gatekit::ALLOW {
                    return out;
                }
                rule = out.matched_rule;
            }
            let last = reqs[reqs.len() - 1].0;
            if !is_path_op(last) {
                return allow(REASON_NON_PATH_OPERATION, "");
            }
            return allow(REASON_ALLOWED, &rule);
        }
        if parse_op(op).is_none() {
            return self.al_deny(input, facts.first(), REASON_OPERATION_UNKNOWN, format!("unknown operation {}", py_repr(op)));
        }
        let mut facts = facts;
        if facts.is_empty() && is_path_op(op) && (input.tool == "find" || input.tool == "grep") && !input.cwd.is_empty() {
            facts = vec![cwd_fact(&input.cwd)];
        }
        self.check_request(input, op, &facts)
    }

    fn check_request(&self, input: &Input, op: &str, facts: &[PathFact]) -> Output {
        if !self.allows_op(op) {
            return self.al_deny(input, facts.first(), REASON_OPERATION_NOT_ALLOWED, format!("operation {} is not in allowed_operations", op));
        }
        if !is_path_op(op) {
            if self.ops.is_none() {
                return self.al_deny(
                    input,
                    facts.first(),
                    REASON_OPERATION_NOT_ALLOWED,
                    format!("operation {} is not a path operation; a path boundary admits it only when allowed_operations lists it", op),
                );
            }
            return allow(REASON_NON_PATH_OPERATION, "");
        }
        if facts.is_empty() {
            return self.al_deny(input, None, REASON_MISSING_PATH, format!("path operation {} without a path", op));
        }
        let mut rule = String::new();
        for f in facts {
            if !valid_fact(f) {
                return self.al_deny(input, Some(f), REASON_INVALID_FACT, format!("path fact for {} is not an absolute clean path", py_repr(&f.arg)));
            }
            if self.kind == Kind::Workspace {
                if !within(&f.resolved, &self.scopes[0]) {
                    return self.al_deny(
                        input,
                        Some(f),
                        REASON_OUTSIDE_ROOT,
                        format!("path {} resolves outside the workspace root {}", f.resolved, self.scopes[0]),
                    );
                }
                rule = self.scopes[0].clone();
                continue;
            }
            match self.match_scope(f) {
                None => return self.al_deny(input, Some(f), REASON_OUTSIDE_SCOPE, format!("path {} is in no approved scope", f.resolved)),
                Some(scope) => {
                    if rule.is_empty() {
                        rule = scope;
                    }
                }
            }
        }
        allow(REASON_ALLOWED, &rule)
    }

    fn match_scope(&self, f: &PathFact) -> Option<String> {
        let ne: &str = &f.nearest_existing;
        let nearest = if !ne.is_empty() && gatekit::clean_path(ne) == ne && within(&f.resolved, ne) { ne } else { "" };
        for s in &self.scopes {
            if f.resolved == s.as_str() {
                return Some(s.clone());
            }
            if !strictly_within(&f.resolved, s) {
                continue;
            }
            if f.exists || (!nearest.is_empty() && within(nearest, s)) {
                return Some(s.clone());
            }
        }
        None
    }

    fn al_deny(&self, input: &Input, f: Option<&PathFact>, code: &'static str, detail: String) -> Output {
        let subject: &str = f.map(|f| f.resolved.as_ref()).unwrap_or("");
        deny(code, detail, denied_message(&input.tool, subject, input))
    }

    // --- virtual (virtual.go) ----------------------------------------------

    fn eval_virtual(&self, input: &Input) -> Output {
        let v = match &self.virt {
            Some(v) => v,
            None => return Output::deny(REASON_VIRTUAL_INVALID),
        };
        let mut op: &str = &input.operation;
        if op.is_empty() {
            op = match input.tool.as_ref() {
                "read" => OP_READ_FILE,
                "find" => OP_SEARCH_FILES,
                "patch" => OP_MODIFY_FILE,
                "bash" => OP_EXECUTE_COMMAND,
                _ => "",
            };
        }
        let vdeny = |code: &'static str, subject: &str, detail: String| deny(code, detail, denied_message(&input.tool, subject, input));
        if op.is_empty() {
            return vdeny(
                REASON_OPERATION_UNKNOWN,
                "",
                format!("no operation given and none can be inferred for tool {} without filesystem facts", py_repr(&input.tool)),
            );
        }
        if parse_op(op).is_none() {
            return vdeny(REASON_OPERATION_UNKNOWN, "", format!("unknown operation {}", py_repr(op)));
        }
        if !self.allows_op(op) {
            return vdeny(REASON_OPERATION_NOT_ALLOWED, "", format!("operation {} is not in allowed_operations", op));
        }
        if !is_path_op(op) {
            if self.ops.is_none() {
                return vdeny(
                    REASON_OPERATION_NOT_ALLOWED,
                    "",
                    format!("operation {} is not a path operation; a path boundary admits it only when allowed_operations lists it", op),
                );
            }
            return allow(REASON_NON_PATH_OPERATION, "");
        }
        let mut paths = match virtual_args(input.arguments) {
            Ok(p) => p,
            Err(bad) => return vdeny(REASON_VIRTUAL_INVALID, "", bad),
        };
        if paths.is_empty() && (input.tool == "find" || input.tool == "grep") {
            paths = vec![".".to_string()];
        }
        if paths.is_empty() {
            return vdeny(REASON_MISSING_PATH, "", format!("path operation {} without a path", op));
        }
        let mut rule = String::new();
        for raw in &paths {
            let p = match normalize_virtual_path(raw, &v.cwd) {
                Ok(p) => p,
                Err(e) => return vdeny(REASON_VIRTUAL_INVALID, "", e),
            };
            let name = p[1..].split('/').next().unwrap_or("");
            let mt = v.mounts.iter().rev().find(|m| m.name == name);
            if p == "/" || (mt.is_some() && p == format!("/{}", name)) {
                if virtual_write(op) {
                    return vdeny(REASON_MOUNT_ROOT, &p, format!("the router owns {}: it cannot be written", p));
                }
            } else if mt.is_none() {
                return vdeny(REASON_MOUNT_UNKNOWN, &p, format!("no mount serves {}", p));
            } else if mt.map(|m| m.read_only).unwrap_or(false) && virtual_write(op) {
                return vdeny(REASON_READ_ONLY, &p, format!("mount /{} is read-only", name));
            }
            let admitted = match &v.roots {
                None => "/".to_string(),
                Some(roots) => roots.iter().find(|r| within(&p, r)).cloned().unwrap_or_default(),
            };
            if admitted.is_empty() {
                return vdeny(REASON_OUTSIDE_ROOT, &p, format!("virtual path {} is outside the allowed roots", p));
            }
            if rule.is_empty() {
                rule = admitted;
            }
        }
        allow(REASON_ALLOWED, &rule)
    }
}

impl DeniedRule {
    fn matches(&self, resolved: &str, lexical: &str, raw: &str, name: &str) -> bool {
        match &self.kind {
            DeniedKind::Absolute(abs) => within(resolved, abs) || within(lexical, abs),
            DeniedKind::Glob(g) => {
                if g.matches("/") {
                    return true;
                }
                // NB: strings.Cut from resolved[1:]: an empty rest ends it.
                let mut rest = &resolved[1..];
                while !rest.is_empty() {
                    let (part, tail) = match rest.find('/') {
                        Some(i) => (&rest[..i], &rest[i + 1..]),
                        None => (rest, ""),
                    };
                    if g.matches(part) {
                        return true;
                    }
                    rest = tail;
                }
                false
            }
            DeniedKind::Text => raw.contains(self.text.as_str()) || name.contains(self.text.as_str()),
        }
    }
}

/// The working directory AgentLane's find and grep search without a path.
fn cwd_fact(cwd: &str) -> PathFact<'static> {
    let p = gatekit::clean_path(cwd);
    PathFact {
        arg: "cwd".into(),
        raw: cwd.to_string().into(),
        resolved: p.clone().into(),
        exists: true,
        kind: "dir".into(),
        nearest_existing: p.into(),
        link: false,
    }
}

/// inferRequests: AgentLane's first-party tools' requests for a call.
fn infer_requests<'a>(tool: &str, facts: &[PathFact<'a>], cwd: &str) -> Option<Vec<(&'static str, Vec<PathFact<'a>>)>> {
    let one = |op: &'static str, fs: Vec<PathFact<'a>>| Some(vec![(op, fs)]);
    match tool {
        "read" => one(OP_READ_FILE, facts.to_vec()),
        "patch" => one(OP_MODIFY_FILE, facts.to_vec()),
        "bash" => one(OP_EXECUTE_COMMAND, Vec::new()),
        "find" | "grep" => {
            let mut fs = facts.to_vec();
            if fs.is_empty() && !cwd.is_empty() {
                fs = vec![cwd_fact(cwd)];
            }
            if tool == "grep" && fs.len() == 1 && fs[0].exists && fs[0].kind == "file" {
                return one(OP_READ_FILE, fs);
            }
            one(OP_SEARCH_FILES, fs)
        }
        "write" => {
            if facts.len() != 1 {
                return one(OP_CREATE_FILE, facts.to_vec());
            }
            let f = &facts[0];
            if f.exists {
                return one(OP_OVERWRITE_FILE, facts.to_vec());
            }
            let mut reqs = Vec::new();
            let parent = path_dir(&f.resolved);
            if f.resolved.starts_with('/') && f.nearest_existing != parent.as_str() {
                reqs.push((
                    OP_CREATE_DIRECTORY,
                    vec![PathFact {
                        arg: f.arg.clone(),
                        raw: path_dir(&f.raw).into(),
                        resolved: parent.into(),
                        exists: false,
                        kind: "missing".into(),
                        nearest_existing: f.nearest_existing.clone(),
                        link: false,
                    }],
                ));
            }
            reqs.push((OP_CREATE_FILE, facts.to_vec()));
            Some(reqs)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// normalize_virtual_path (virtual.go).

fn normalize_virtual_path(p: &str, cwd: &str) -> Result<String, String> {
    validate_virtual("path", p)?;
    validate_virtual("cwd", cwd)?;
    let base = collapse_virtual(Vec::new(), cwd)?;
    let base = if p.starts_with('/') { Vec::new() } else { base };
    let parts = collapse_virtual(base, p)?;
    Ok(format!("/{}", parts.join("/")))
}

fn validate_virtual(what: &str, s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        return Err(format!("{} must not be blank", what));
    }
    if s.contains('\0') || s.contains('\\') {
        return Err(format!("{} must not contain NUL or a backslash", what));
    }
    for comp in s.split('/') {
        let b = comp.as_bytes();
        if b.len() >= 2 && b[1] == b':' && (b[0] | 0x20) >= b'a' && (b[0] | 0x20) <= b'z' {
            return Err(format!("{} must not contain a drive prefix: {}", what, py_repr(comp)));
        }
        if comp.starts_with('~') {
            return Err(format!("{} must not contain a '~' component: {}", what, py_repr(comp)));
        }
    }
    Ok(())
}

fn collapse_virtual(parts: Vec<String>, s: &str) -> Result<Vec<String>, String> {
    let mut out = parts;
    for comp in s.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if out.pop().is_none() {
                    return Err(format!("path must stay within the virtual root: {}", py_repr(s)));
                }
            }
            _ => out.push(comp.to_string()),
        }
    }
    Ok(out)
}

/// virtualArgs: the "path" and "file_path" arguments that are not null.
fn virtual_args(args: &[u8]) -> Result<Vec<String>, String> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    let f = match fields(args) {
        Some(f) => f,
        None => return Err("arguments are not a JSON object".to_string()),
    };
    let mut out = Vec::new();
    for name in ["path", "file_path"] {
        let raw = match present(&f, name) {
            None => continue,
            Some(r) => r,
        };
        match as_string(raw) {
            Some(s) => out.push(s),
            None => return Err(format!("{} is not a string", name)),
        }
    }
    Ok(out)
}

export_gate!(
    PathGuard,
    r#"{"name":"pathguard","version":"1.0.0","summary":"guard_paths and AgentLane workspace / path-scope policies, decided on the host's path facts"}"#
);
