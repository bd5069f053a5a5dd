//! The built-in permission gate as a native-ABI v1 module: LionAGI's
//! PermissionPolicy (modes, presets, fnmatch rules in deny → allow →
//! escalate tiers, the bash shell-control check), AgentLane's grant and
//! side-effect approval policies with its model-facing texts, and govhost's
//! own coding family (decisions per tool and operation, and a read-only
//! classification of shell command lines). Specified in
//! plugins/permission/README.md and its case table. Built by `make plugins`.
//!
//! LionAGI builds its match strings with Python's str() and compares after
//! str.lower(): the Python text helpers below reproduce both on the values
//! json.loads makes (objects keep their first key's position and take the
//! last value, numbers keep their literal text).

#[path = "gatekit.rs"]
mod gatekit;

use gatekit::{clean_path, Answer, Gate, Input, Output, PathFact, Pattern, Reader, Str, ALLOW, DENY, REQUIRE_APPROVAL};
use std::borrow::Cow;

// Reason codes (stable: policies, evidence and tests match on them).
const CODE_MODE_ALLOW_ALL: &str = "permission.mode_allow_all";
const CODE_MODE_DENY_ALL: &str = "permission.mode_deny_all";
const CODE_SHELL_CONTROL: &str = "permission.shell_control";
const CODE_DENIED_BY_RULE: &str = "permission.denied_by_rule";
const CODE_ALLOWED_BY_RULE: &str = "permission.allowed_by_rule";
const CODE_ESCALATE: &str = "permission.escalate";
const CODE_DEFAULT_DENY: &str = "permission.default_deny";
const CODE_EVALUATOR_ERROR: &str = "permission.evaluator_error";
const CODE_GRANTED: &str = "permission.granted";
const CODE_NOT_GRANTED: &str = "permission.not_granted";
const CODE_SIDE_EFFECT_APPROVAL: &str = "permission.side_effect_approval";
const CODE_APPROVAL_DOWNGRADED: &str = "permission.approval_downgraded";
const CODE_NOT_SIDE_EFFECT: &str = "permission.not_side_effect";
const CODE_NO_LAYERS: &str = "permission.no_layers";
const CODE_INVALID_OPERATION: &str = "permission.invalid_operation";
const CODE_CODING_TOOL: &str = "permission.coding_tool";
const CODE_CODING_OPERATION: &str = "permission.coding_operation";
const CODE_CODING_UNCLASSIFIED: &str = "permission.coding_unclassified";
const CODE_COMMAND_READ_ONLY: &str = "permission.command_read_only";
const CODE_COMMAND_NOT_READ_ONLY: &str = "permission.command_not_read_only";
const CODE_COMMAND_PROTECTED_PATH: &str = "permission.command_protected_path";
const CODE_COMMAND_PIPE_TO_INTERPRETER: &str = "permission.command_pipe_to_interpreter";
const CODE_INVALID_ARGUMENTS: &str = "permission.invalid_arguments";

// ---------------------------------------------------------------------------
// JSON values as json.loads makes them, in an arena (no recursion anywhere:
// an argument nested 9 999 deep must neither overflow the stack nor pass
// the host's call-depth bound).

enum Node<'a> {
    Null,
    Bool(bool),
    /// The number's literal text.
    Num(&'a str),
    Str(Str<'a>),
    Arr(Vec<u32>),
    /// Members in order of first appearance; a repeated key takes the last
    /// value (a Python dict built by json.loads).
    Obj(Vec<(Str<'a>, u32)>),
}

struct Doc<'a> {
    nodes: Vec<Node<'a>>,
}

const MAX_DEPTH: usize = 10000;

impl<'a> Doc<'a> {
    /// Parses one JSON document; None when it is not JSON. The root is node 0.
    fn parse(b: &'a [u8]) -> Option<Doc<'a>> {
        let mut r = Reader::new(b);
        let mut nodes: Vec<Node<'a>> = Vec::new();
        // Open containers, with an object's pending member name.
        let mut stack: Vec<(u32, Option<Str<'a>>)> = Vec::new();
        r.ws();
        loop {
            // A value starts here.
            r.ws();
            let id = nodes.len() as u32;
            let mut complete = true;
            match r.peek() {
                b'{' | b'[' => {
                    let obj = r.peek() == b'{';
                    r.i += 1;
                    nodes.push(if obj { Node::Obj(Vec::new()) } else { Node::Arr(Vec::new()) });
                    stack.push((id, None));
                    if stack.len() > MAX_DEPTH {
                        return None;
                    }
                    r.ws();
                    let closer = if obj { b'}' } else { b']' };
                    if r.peek() == closer {
                        r.i += 1;
                        stack.pop();
                    } else {
                        if obj {
                            let key = member_name(&mut r)?;
                            stack.last_mut()?.1 = Some(key);
                        }
                        complete = false;
                    }
                }
                b'"' => nodes.push(Node::Str(r.string()?)),
                b't' | b'f' | b'n' => {
                    if r.literal(b"true") {
                        nodes.push(Node::Bool(true));
                    } else if r.literal(b"false") {
                        nodes.push(Node::Bool(false));
                    } else if r.literal(b"null") {
                        nodes.push(Node::Null);
                    } else {
                        return None;
                    }
                }
                _ => {
                    let n = r.number()?;
                    // NB: a JSON number is ASCII.
                    nodes.push(Node::Num(std::str::from_utf8(n).ok()?));
                }
            }
            if !complete {
                continue;
            }
            // The value `done` is complete: attach it, then read what follows.
            let mut done = id;
            loop {
                let (parent, key) = match stack.last_mut() {
                    None => return if r.at_end() { Some(Doc { nodes }) } else { None },
                    Some((p, k)) => (*p, k.take()),
                };
                match &mut nodes[parent as usize] {
                    Node::Arr(v) => v.push(done),
                    Node::Obj(m) => {
                        let key = key?;
                        match m.iter_mut().find(|(k, _)| *k == key) {
                            Some(e) => e.1 = done,
                            None => m.push((key, done)),
                        }
                    }
                    _ => return None,
                }
                let obj = matches!(nodes[parent as usize], Node::Obj(_));
                r.ws();
                match r.peek() {
                    b',' => {
                        r.i += 1;
                        if obj {
                            r.ws();
                            let key = member_name(&mut r)?;
                            stack.last_mut()?.1 = Some(key);
                        }
                        break;
                    }
                    b'}' if obj => {}
                    b']' if !obj => {}
                    _ => return None,
                }
                r.i += 1;
                stack.pop();
                done = parent;
            }
        }
    }

    fn node(&self, id: u32) -> &Node<'a> {
        &self.nodes[id as usize]
    }

    /// The root's member key, when the root is an object.
    fn get(&self, key: &str) -> Option<u32> {
        match self.node(0) {
            Node::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| *v),
            _ => None,
        }
    }

    fn string_arg(&self, key: &str) -> Option<&str> {
        match self.node(self.get(key)?) {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn member_name<'a>(r: &mut Reader<'a>) -> Option<Str<'a>> {
    let key = r.string()?;
    r.ws();
    if r.peek() != b':' {
        return None;
    }
    r.i += 1;
    Some(key)
}

/// The request's arguments: absent or null is {}; anything but an object
/// is refused (None).
fn decode_arguments(raw: &[u8]) -> Option<Doc> {
    if raw.is_empty() {
        return Some(Doc { nodes: vec![Node::Obj(Vec::new())] });
    }
    let mut d = Doc::parse(raw)?;
    match d.node(0) {
        Node::Obj(_) => Some(d),
        Node::Null => {
            d.nodes.truncate(0);
            d.nodes.push(Node::Obj(Vec::new()));
            Some(d)
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Python text: str(), repr(), str.lower(), str.isspace().

/// Python's str(v) of a json.loads value.
fn py_str(doc: &Doc, id: u32) -> String {
    match doc.node(id) {
        Node::Str(s) => s.to_string(),
        _ => {
            let mut b = String::new();
            py_repr_to(&mut b, doc, id);
            b
        }
    }
}

/// Python's repr(v), written with a stack of open containers.
fn py_repr_to(b: &mut String, doc: &Doc, root: u32) {
    let mut open: Vec<(u32, usize)> = Vec::new();
    let mut next = Some(root);
    loop {
        if let Some(id) = next.take() {
            match doc.node(id) {
                Node::Null => b.push_str("None"),
                Node::Bool(true) => b.push_str("True"),
                Node::Bool(false) => b.push_str("False"),
                Node::Num(lit) => b.push_str(&py_number(lit)),
                Node::Str(s) => py_quote_to(b, s),
                Node::Arr(_) => {
                    b.push('[');
                    open.push((id, 0));
                }
                Node::Obj(_) => {
                    b.push('{');
                    open.push((id, 0));
                }
            }
        }
        let (id, k) = match open.last_mut() {
            None => return,
            Some(top) => {
                let k = top.1;
                top.1 += 1;
                (top.0, k)
            }
        };
        match doc.node(id) {
            Node::Arr(v) => {
                if k < v.len() {
                    if k > 0 {
                        b.push_str(", ");
                    }
                    next = Some(v[k]);
                } else {
                    b.push(']');
                    open.pop();
                }
            }
            Node::Obj(m) => {
                if k < m.len() {
                    if k > 0 {
                        b.push_str(", ");
                    }
                    py_quote_to(b, &m[k].0);
                    b.push_str(": ");
                    next = Some(m[k].1);
                } else {
                    b.push('}');
                    open.pop();
                }
            }
            _ => {
                open.pop();
            }
        }
    }
}

fn is_float_literal(lit: &str) -> bool {
    lit.bytes().any(|c| matches!(c, b'.' | b'e' | b'E'))
}

/// A JSON number as Python prints what json.loads makes of it: a literal
/// with '.', 'e' or 'E' is a float (repr), any other an int (exact).
fn py_number(lit: &str) -> String {
    if !is_float_literal(lit) {
        if lit == "-0" {
            return "0".to_string();
        }
        return lit.to_string();
    }
    match lit.parse::<f64>() {
        Ok(f) => py_float_repr(f),
        Err(_) => lit.to_string(),
    }
}

/// Python's repr(float): the shortest digits that round-trip, positional
/// when the decimal exponent is in [-4, 16), else scientific with at least
/// two exponent digits; integral values keep ".0".
fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let e = format!("{:e}", f.abs()); // "d.ddde[-]X", shortest round-trip digits
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mant.chars().filter(|&c| c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let decpt = exp + 1;
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    let nd = digits.len() as i32;
    if decpt > -4 && decpt <= 16 {
        if decpt <= 0 {
            out.push_str("0.");
            for _ in 0..-decpt {
                out.push('0');
            }
            out.push_str(&digits);
        } else if decpt >= nd {
            out.push_str(&digits);
            for _ in 0..decpt - nd {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
        return out;
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    let mut x = decpt - 1;
    if x < 0 {
        out.push('-');
        x = -x;
    } else {
        out.push('+');
    }
    if x < 10 {
        out.push('0');
    }
    out.push_str(&x.to_string());
    out
}

/// Python's repr(str) (unicode.IsPrint is str.isprintable above ASCII).
fn py_quote(s: &str) -> String {
    let mut b = String::with_capacity(s.len() + 2);
    py_quote_to(&mut b, s);
    b
}

fn py_quote_to(b: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    b.push(quote);
    for ch in s.chars() {
        let r = ch as u32;
        if ch == quote || ch == '\\' {
            b.push('\\');
            b.push(ch);
        } else if ch == '\t' {
            b.push_str("\\t");
        } else if ch == '\n' {
            b.push_str("\\n");
        } else if ch == '\r' {
            b.push_str("\\r");
        } else if r < 0x20 || r == 0x7f {
            b.push_str("\\x");
            b.push(HEX[(r >> 4) as usize] as char);
            b.push(HEX[(r & 15) as usize] as char);
        } else if r < 0x80 || gatekit::is_print(r) {
            b.push(ch);
        } else if r <= 0xff {
            b.push_str("\\x");
            b.push(HEX[(r >> 4) as usize] as char);
            b.push(HEX[(r & 15) as usize] as char);
        } else if r <= 0xffff {
            b.push_str("\\u");
            for sh in [12, 8, 4, 0] {
                b.push(HEX[((r >> sh) & 15) as usize] as char);
            }
        } else {
            b.push_str("\\U");
            for sh in [28, 24, 20, 16, 12, 8, 4, 0] {
                b.push(HEX[((r >> sh) & 15) as usize] as char);
            }
        }
    }
    b.push(quote);
}

fn in_ranges(table: &[(u32, u32)], r: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < r {
                std::cmp::Ordering::Less
            } else if lo > r {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Go's unicode.ToLower.
fn go_to_lower(r: u32) -> u32 {
    if r < 0x80 {
        return if (b'A' as u32..=b'Z' as u32).contains(&r) { r + 32 } else { r };
    }
    let t = &gatekit::LOWER_RUNS;
    let i = t.partition_point(|&(_, hi, _, _)| hi < r);
    if i < t.len() {
        let (lo, _, delta, stride) = t[i];
        if lo <= r && (r - lo) % stride == 0 {
            return (r as i64 + delta as i64) as u32;
        }
    }
    r
}

/// Python's str.lower(): the full lower-case mapping (U+0130 becomes
/// "i\u0307", a final capital sigma U+03C2).
fn py_lower(s: &str) -> Cow<str> {
    if s.is_ascii() {
        if !s.bytes().any(|c| c.is_ascii_uppercase()) {
            return Cow::Borrowed(s);
        }
        return Cow::Owned(s.to_ascii_lowercase());
    }
    let runes: Vec<char> = s.chars().collect();
    let mut b = String::with_capacity(s.len());
    for (i, &ch) in runes.iter().enumerate() {
        match ch as u32 {
            0x130 => b.push_str("i\u{307}"),
            0x3a3 => b.push(lower_sigma(&runes, i)),
            r => b.push(char::from_u32(go_to_lower(r)).unwrap_or(ch)),
        }
    }
    Cow::Owned(b)
}

fn cased(r: char) -> bool {
    in_ranges(&gatekit::CASED_RANGES, r as u32)
}

fn case_ignorable(r: char) -> bool {
    in_ranges(&gatekit::CASE_IGNORABLE_RANGES, r as u32)
}

/// Python's Final_Sigma rule: final when a cased letter precedes (skipping
/// case-ignorable ones) and none follows.
fn lower_sigma(runes: &[char], i: usize) -> char {
    let mut j = i as isize - 1;
    while j >= 0 && case_ignorable(runes[j as usize]) {
        j -= 1;
    }
    let mut fin = j >= 0 && cased(runes[j as usize]);
    if fin {
        let mut k = i + 1;
        while k < runes.len() && case_ignorable(runes[k]) {
            k += 1;
        }
        fin = k == runes.len() || !cased(runes[k]);
    }
    if fin {
        '\u{3c2}'
    } else {
        '\u{3c3}'
    }
}

/// Python's str.isspace for one character: Go's unicode.IsSpace plus the
/// information separators U+001C..U+001F.
fn py_is_space(c: char) -> bool {
    matches!(c as u32,
        0x09..=0x0d | 0x20 | 0x85 | 0xa0 | 0x1c..=0x1f | 0x1680 | 0x2000..=0x200a | 0x2028 | 0x2029 | 0x202f | 0x205f | 0x3000)
}

/// Python's bool() of a json.loads value.
fn py_truthy(doc: &Doc, id: u32) -> bool {
    match doc.node(id) {
        Node::Null => false,
        Node::Bool(b) => *b,
        Node::Num(lit) => {
            let n = py_number(lit);
            n != "0" && n != "0.0" && n != "-0.0"
        }
        Node::Str(s) => !s.is_empty(),
        Node::Arr(v) => !v.is_empty(),
        Node::Obj(m) => !m.is_empty(),
    }
}

/// type(v).__name__ of a json.loads value.
fn py_type_name(doc: &Doc, id: u32) -> &'static str {
    match doc.node(id) {
        Node::Null => "NoneType",
        Node::Bool(_) => "bool",
        Node::Num(lit) => {
            if is_float_literal(lit) {
                "float"
            } else {
                "int"
            }
        }
        Node::Str(_) => "str",
        Node::Arr(_) => "list",
        Node::Obj(_) => "dict",
    }
}

// ---------------------------------------------------------------------------
// Configuration errors: the Go reference's texts (ConfigError.Error) and
// field paths, kept for gate_config_error.

struct ConfigError {
    field: String,
    detail: String,
}

impl ConfigError {
    fn text(&self) -> String {
        let mut b = String::from("permission: config");
        if !self.field.is_empty() {
            b.push_str(" field ");
            b.push_str(&self.field);
        }
        b.push_str(": ");
        b.push_str(&self.detail);
        b
    }
}

type CResult<T> = Result<T, ConfigError>;

fn config_err<T>(field: &str, detail: String) -> CResult<T> {
    Err(ConfigError { field: field.to_string(), detail })
}

fn kind_name(n: &Node) -> &'static str {
    match n {
        Node::Null => "null",
        Node::Bool(_) => "boolean",
        Node::Num(_) => "number",
        Node::Str(_) => "string",
        Node::Arr(_) => "array",
        Node::Obj(_) => "object",
    }
}

fn wrong_type<T>(field: &str, want: &str, got: &Node) -> CResult<T> {
    config_err(field, format!("must be {}, not {}", want, kind_name(got)))
}

/// Go's strconv.Quote (the %q of the reference's messages).
fn go_quote(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut b = String::with_capacity(s.len() + 2);
    b.push('"');
    for ch in s.chars() {
        let r = ch as u32;
        match ch {
            '"' | '\\' => {
                b.push('\\');
                b.push(ch);
            }
            '\u{7}' => b.push_str("\\a"),
            '\u{8}' => b.push_str("\\b"),
            '\u{c}' => b.push_str("\\f"),
            '\n' => b.push_str("\\n"),
            '\r' => b.push_str("\\r"),
            '\t' => b.push_str("\\t"),
            '\u{b}' => b.push_str("\\v"),
            _ if (0x20..0x7f).contains(&r) || (r >= 0x80 && gatekit::is_print(r)) => b.push(ch),
            _ if r < 0x80 => {
                b.push_str("\\x");
                b.push(HEX[(r >> 4) as usize] as char);
                b.push(HEX[(r & 15) as usize] as char);
            }
            _ if r < 0x10000 => {
                b.push_str("\\u");
                for sh in [12, 8, 4, 0] {
                    b.push(HEX[((r >> sh) & 15) as usize] as char);
                }
            }
            _ => {
                b.push_str("\\U");
                for sh in [28, 24, 20, 16, 12, 8, 4, 0] {
                    b.push(HEX[((r >> sh) & 15) as usize] as char);
                }
            }
        }
    }
    b.push('"');
    b
}

/// A JSON path: a.b for plain keys, a["odd key"] otherwise.
fn field_path(parent: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.bytes().all(|c| c == b'_' || c == b'*' || c == b'-' || c.is_ascii_alphanumeric());
    if !plain {
        return format!("{}[{}]", parent, go_quote(key));
    }
    if parent.is_empty() {
        return key.to_string();
    }
    format!("{}.{}", parent, key)
}

fn index_path(field: &str, i: usize) -> String {
    format!("{}[{}]", field, i)
}

fn members<'d, 'a>(doc: &'d Doc<'a>, id: u32) -> &'d [(Str<'a>, u32)] {
    match doc.node(id) {
        Node::Obj(m) => m,
        _ => &[],
    }
}

fn parse_string_list(doc: &Doc, field: &str, id: u32) -> CResult<Vec<String>> {
    let items = match doc.node(id) {
        Node::Arr(v) => v,
        n => return wrong_type(field, "a list of strings", n),
    };
    let mut out = Vec::with_capacity(items.len());
    for (j, &el) in items.iter().enumerate() {
        match doc.node(el) {
            Node::Str(s) => out.push(s.to_string()),
            n => return wrong_type(&index_path(field, j), "a string", n),
        }
    }
    Ok(out)
}

fn parse_optional_string(doc: &Doc, field: &str, id: u32) -> CResult<Option<String>> {
    match doc.node(id) {
        Node::Null => Ok(None),
        Node::Str(s) => Ok(Some(s.to_string())),
        n => wrong_type(field, "a string or null", n),
    }
}

/// One entry of a LionAGI rule map (or of a forbid map).
struct ToolRules {
    tool: String,
    patterns: Vec<String>,
}

fn parse_patterns(doc: &Doc, field: &str, id: u32) -> CResult<Vec<String>> {
    let items = match doc.node(id) {
        Node::Arr(v) => v,
        n => return wrong_type(field, "a list of pattern strings", n),
    };
    let mut out = Vec::with_capacity(items.len());
    for (j, &el) in items.iter().enumerate() {
        match doc.node(el) {
            Node::Str(s) => out.push(s.to_string()),
            n => return wrong_type(&index_path(field, j), "a string", n),
        }
    }
    Ok(out)
}

/// A rule map in either form: {"bash": ["git *"]} or
/// [{"tool": "bash", "patterns": ["git *"]}, …] (the order-keeping form
/// the policy loader writes).
fn parse_rule_map(doc: &Doc, field: &str, id: u32) -> CResult<Vec<ToolRules>> {
    match doc.node(id) {
        Node::Obj(m) => {
            let mut rules = Vec::with_capacity(m.len());
            for (k, v) in m {
                let patterns = parse_patterns(doc, &field_path(field, k), *v)?;
                rules.push(ToolRules { tool: k.to_string(), patterns });
            }
            Ok(rules)
        }
        Node::Arr(items) => {
            let mut rules = Vec::with_capacity(items.len());
            for (i, &el) in items.iter().enumerate() {
                let f = index_path(field, i);
                let m = match doc.node(el) {
                    Node::Obj(m) => m,
                    n => return wrong_type(&f, "an object {\"tool\": …, \"patterns\": […]}", n),
                };
                let (mut tool, mut patterns) = (None, None);
                for (k, v) in m {
                    match k.as_ref() {
                        "tool" => match doc.node(*v) {
                            Node::Str(s) => tool = Some(s.to_string()),
                            n => return wrong_type(&format!("{}.tool", f), "a string", n),
                        },
                        "patterns" => patterns = Some(parse_patterns(doc, &format!("{}.patterns", f), *v)?),
                        _ => {
                            return config_err(&field_path(&f, k), "unknown field (want \"tool\", \"patterns\")".to_string())
                        }
                    }
                }
                match (tool, patterns) {
                    (Some(tool), Some(patterns)) => rules.push(ToolRules { tool, patterns }),
                    _ => return config_err(&f, "needs both \"tool\" and \"patterns\"".to_string()),
                }
            }
            Ok(rules)
        }
        n => wrong_type(field, "an object of tool name → list of patterns (or a list of {tool, patterns})", n),
    }
}

// ---------------------------------------------------------------------------
// AgentLane's vocabulary: the eight operations and the first-party tools.

const OPERATIONS: [&str; 8] = [
    "read_file",
    "search_files",
    "create_file",
    "overwrite_file",
    "modify_file",
    "create_directory",
    "execute_command",
    "network_access",
];
const OP_READ_FILE: u8 = 0;
const OP_SEARCH_FILES: u8 = 1;
const OP_CREATE_FILE: u8 = 2;
const OP_OVERWRITE_FILE: u8 = 3;
const OP_MODIFY_FILE: u8 = 4;
const OP_CREATE_DIRECTORY: u8 = 5;
const OP_EXECUTE_COMMAND: u8 = 6;
const OP_NETWORK_ACCESS: u8 = 7;

/// AgentLane's default approval set: the four path side effects, command
/// execution and network access.
const SIDE_EFFECT_OPS: u16 = 1 << OP_CREATE_FILE
    | 1 << OP_OVERWRITE_FILE
    | 1 << OP_MODIFY_FILE
    | 1 << OP_CREATE_DIRECTORY
    | 1 << OP_EXECUTE_COMMAND
    | 1 << OP_NETWORK_ACCESS;

fn parse_operation(s: &str) -> Option<u8> {
    OPERATIONS.iter().position(|o| *o == s).map(|i| i as u8)
}

fn op_name(op: u8) -> &'static str {
    OPERATIONS[op as usize]
}

/// The first-party tools' declared operations, in AgentLane's order
/// (abi.AgentLaneTools with abi.ToolOperations).
const BUILTIN_TOOLS: [(&str, &[u8]); 6] = [
    ("read", &[OP_READ_FILE]),
    ("find", &[OP_SEARCH_FILES]),
    ("grep", &[OP_READ_FILE, OP_SEARCH_FILES]),
    ("write", &[OP_CREATE_FILE, OP_OVERWRITE_FILE, OP_CREATE_DIRECTORY]),
    ("patch", &[OP_MODIFY_FILE]),
    ("bash", &[OP_EXECUTE_COMMAND]),
];

/// The one operation of AgentLane's single-operation tools.
fn tool_operation(tool: &str) -> Option<u8> {
    match tool {
        "read" => Some(OP_READ_FILE),
        "find" => Some(OP_SEARCH_FILES),
        "patch" => Some(OP_MODIFY_FILE),
        "bash" => Some(OP_EXECUTE_COMMAND),
        _ => None,
    }
}

fn unknown_operation_list() -> String {
    OPERATIONS.join(", ")
}

// ---------------------------------------------------------------------------
// The request in AgentLane's terms and its model-facing texts
// (format_tool_permission_result), used by every family.

#[derive(Clone)]
struct Request {
    tool: String,
    op: Option<u8>,
    /// The path as given; rendered by py_path_str in the texts.
    path: Option<String>,
    has_command: bool,
}

/// The path fact AgentLane would put in the request: the "path"
/// argument's, then "file_path"'s, then the first.
fn primary_path<'i, 'a>(in_: &'i Input<'a>) -> Option<&'i PathFact<'a>> {
    if in_.paths.is_empty() {
        return None;
    }
    for name in ["path", "file_path"] {
        if let Some(p) = in_.paths.iter().find(|p| p.arg == name) {
            return Some(p);
        }
    }
    in_.paths.first()
}

/// The resolved path, or the raw text when the host resolved nothing.
fn fact_path<'p>(f: &'p PathFact) -> &'p str {
    if !f.resolved.is_empty() {
        &f.resolved
    } else {
        &f.raw
    }
}

/// The tool, the path (the primary path fact, else the "path" or
/// "file_path" argument) and whether a command is present.
fn request_base(in_: &Input, args: Option<&Doc>) -> Request {
    let mut base = Request { tool: in_.tool.to_string(), op: None, path: None, has_command: false };
    let args = match args {
        Some(a) => a,
        None => return base,
    };
    if let Some(f) = primary_path(in_) {
        base.path = Some(fact_path(f).to_string());
    } else if let Some(s) = args.string_arg("path") {
        base.path = Some(s.to_string());
    } else if let Some(s) = args.string_arg("file_path") {
        base.path = Some(s.to_string());
    }
    if let Some(v) = args.get("command") {
        base.has_command = !matches!(args.node(v), Node::Null);
    }
    base
}

/// str(PurePosixPath(s)): repeated and trailing slashes and "." components
/// go, ".." stays, exactly two leading slashes stay, "" is ".".
fn py_path_str(s: &str) -> String {
    if clean_posix_path(s) {
        return s.to_string();
    }
    let root = if s.starts_with("//") && !s.starts_with("///") {
        "//"
    } else if s.starts_with('/') {
        "/"
    } else {
        ""
    };
    let kept: Vec<&str> = s.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let out = format!("{}{}", root, kept.join("/"));
    if out.is_empty() {
        ".".to_string()
    } else {
        out
    }
}

/// PurePosixPath leaves s as it is: not empty, no empty or "." component,
/// no trailing slash (a lone "/" is clean).
fn clean_posix_path(s: &str) -> bool {
    if s.is_empty() {
        return false;
    }
    if s == "/" {
        return true;
    }
    let body = s.strip_prefix('/').unwrap_or(s);
    body.split('/').all(|c| !c.is_empty() && c != ".")
}

impl Request {
    /// _permission_subject: the path in backticks, else "this command".
    fn subject(&self) -> Option<String> {
        if let Some(p) = &self.path {
            return Some(format!("`{}`", py_path_str(p)));
        }
        if self.has_command {
            return Some("this command".to_string());
        }
        None
    }

    /// AgentLane's _format_permission_denied.
    fn denied(&self) -> String {
        match self.subject() {
            Some(s) => format!("permission denied: {} is not allowed for {}", self.tool, s),
            None => format!("permission denied: {} is not allowed", self.tool),
        }
    }

    /// AgentLane's _format_approval_required.
    fn approval(&self) -> String {
        match self.op {
            Some(OP_EXECUTE_COMMAND) => {
                return "approval required: bash command requires application approval before execution".to_string()
            }
            Some(OP_NETWORK_ACCESS) => {
                return format!("approval required: {} network access requires application approval before execution", self.tool)
            }
            _ => {}
        }
        match self.subject() {
            Some(s) => format!("approval required: {} requires application approval for {} before execution", self.tool, s),
            None => format!("approval required: {} requires application approval before execution", self.tool),
        }
    }
}

fn out(decision: &'static str, code: &'static str, detail: String, rule: &str, message: String) -> Output {
    let mut o = Output::new(decision, code);
    o.detail = detail;
    o.matched_rule = rule.to_string();
    o.message = message;
    o
}

/// The verdict on arguments that are not a JSON object.
fn invalid_arguments(in_: &Input) -> Output {
    let base = Request { tool: in_.tool.to_string(), op: None, path: None, has_command: false };
    out(DENY, CODE_INVALID_ARGUMENTS, "arguments: not a JSON object".to_string(), "", base.denied())
}

// ---------------------------------------------------------------------------
// LionAGI's PermissionPolicy.

#[derive(PartialEq, Clone, Copy)]
enum Mode {
    Rules,
    AllowAll,
    DenyAll,
}

const TIER_DENY: usize = 0;
const TIER_ALLOW: usize = 1;
const TIER_DETAIL: [&str; 3] = ["denied by rule: ", "allowed by rule: ", "escalate by rule: "];

/// One rule pattern with its two compiled forms: LionAGI's _matches is
/// pattern == "*" or fnmatch(text, pattern) or fnmatch(text.lower(),
/// pattern.lower()).
struct Rule {
    pattern: String,
    detail: String,
    /// The answer of an allow rule, encoded once (empty for the others).
    allowed: Vec<u8>,
    any: bool,
    exact: Option<Pattern>,
    /// The lower-cased pattern, when lowering changes it.
    lower: Option<Pattern>,
}

impl Rule {
    fn new(pattern: &str, tier: usize) -> Rule {
        let any = pattern == "*";
        let (exact, lower) = if any {
            (None, None)
        } else {
            let lp = py_lower(pattern);
            let lower = if lp != pattern { Some(Pattern::compile(&lp)) } else { None };
            (Some(Pattern::compile(pattern)), lower)
        };
        let detail = format!("{}{}", TIER_DETAIL[tier], pattern);
        let allowed = if tier == TIER_ALLOW { out(ALLOW, CODE_ALLOWED_BY_RULE, detail.clone(), pattern, String::new()).encode() } else { Vec::new() };
        Rule { pattern: pattern.to_string(), detail, allowed, any, exact, lower }
    }

    fn matches(&self, text: &str, lowered: &mut Option<String>) -> bool {
        if self.any {
            return true;
        }
        let exact = match &self.exact {
            Some(p) => p,
            None => return false,
        };
        if exact.matches(text) {
            return true;
        }
        let l = lowered.get_or_insert_with(|| py_lower(text).into_owned());
        self.lower.as_ref().unwrap_or(exact).matches(l)
    }
}

type Tiers = [Vec<Rule>; 3];

/// The tiers of a tool without rules.
static NO_TIERS: Tiers = [Vec::new(), Vec::new(), Vec::new()];

struct Lion {
    mode: Mode,
    /// Each canonical tool's deny, allow and escalate rules, "*" included.
    by_tool: Vec<(String, Tiers)>,
    /// mode allow_all's answer, encoded once.
    allow_all: Vec<u8>,
    /// Where by_tool holds "bash" and "*", found once.
    bash: Option<usize>,
    star: Option<usize>,
}

/// LionAGI's _canonical_tool_name: lower-case, then the five aliases.
fn canonical_tool(name: &str) -> String {
    let lowered = py_lower(name).into_owned();
    match lowered.as_str() {
        "bash_tool" => "bash".to_string(),
        "reader_tool" => "reader".to_string(),
        "editor_tool" => "editor".to_string(),
        "search_tool" => "search".to_string(),
        "context_tool" => "context".to_string(),
        _ => lowered,
    }
}

struct LionConfig {
    mode: Option<String>,
    allow: Vec<ToolRules>,
    deny: Vec<ToolRules>,
    escalate: Vec<ToolRules>,
}

fn all(tools: &[&str]) -> Vec<ToolRules> {
    tools.iter().map(|t| ToolRules { tool: t.to_string(), patterns: vec!["*".to_string()] }).collect()
}

fn preset_policy(field: &str, name: &str) -> CResult<Lion> {
    match py_lower(name).as_ref() {
        "allow_all" => Ok(Lion::new(LionConfig { mode: None, allow: Vec::new(), deny: Vec::new(), escalate: Vec::new() })),
        "deny_all" => Ok(Lion::new(LionConfig {
            mode: Some("deny_all".to_string()),
            allow: Vec::new(),
            deny: Vec::new(),
            escalate: Vec::new(),
        })),
        "read_only" => Ok(Lion::new(LionConfig {
            mode: Some("rules".to_string()),
            allow: all(&["reader", "search", "context"]),
            deny: all(&["editor", "bash"]),
            escalate: Vec::new(),
        })),
        "safe" => Ok(Lion::new(LionConfig {
            mode: Some("rules".to_string()),
            allow: all(&["reader", "editor", "search", "context"]),
            deny: vec![ToolRules {
                tool: "bash".to_string(),
                patterns: ["rm *", "sudo *", "chmod *", "kill *", "mkfs *"].iter().map(|s| s.to_string()).collect(),
            }],
            escalate: all(&["bash"]),
        })),
        _ => config_err(
            field,
            format!("unknown preset {} (want one of allow_all, deny_all, read_only, safe)", go_quote(name)),
        ),
    }
}

/// The text a rule matches, or the Python type of a non-string argument
/// that fnmatch raises on (unless the pattern is "*").
enum MatchText {
    Text(String),
    BadType(&'static str),
}

impl Lion {
    /// PermissionPolicy.from_dict followed by __post_init__: a missing mode
    /// is allow_all; keys canonicalised, a later key replacing an earlier.
    fn new(c: LionConfig) -> Lion {
        let mode = match c.mode.as_deref() {
            None | Some("allow_all") => Mode::AllowAll,
            Some("deny_all") => Mode::DenyAll,
            Some(_) => Mode::Rules,
        };
        let mut by_tool: Vec<(String, Tiers)> = Vec::new();
        for (tier, rules) in [c.deny, c.allow, c.escalate].into_iter().enumerate() {
            let mut normalized: Vec<(String, Vec<Rule>)> = Vec::new();
            for tr in rules {
                let compiled: Vec<Rule> = tr.patterns.iter().map(|p| Rule::new(p, tier)).collect();
                let tool = canonical_tool(&tr.tool);
                match normalized.iter_mut().find(|(t, _)| *t == tool) {
                    Some(e) => e.1 = compiled,
                    None => normalized.push((tool, compiled)),
                }
            }
            for (tool, list) in normalized {
                let idx = match by_tool.iter().position(|(t, _)| *t == tool) {
                    Some(i) => i,
                    None => {
                        by_tool.push((tool, [Vec::new(), Vec::new(), Vec::new()]));
                        by_tool.len() - 1
                    }
                };
                by_tool[idx].1[tier] = list;
            }
        }
        let allow_all = out(ALLOW, CODE_MODE_ALLOW_ALL, "mode=allow_all".to_string(), "", String::new()).encode();
        let bash = by_tool.iter().position(|(t, _)| t == "bash");
        let star = by_tool.iter().position(|(t, _)| t == "*");
        Lion { mode, by_tool, allow_all, bash, star }
    }

    fn tiers(&self, tool: &str) -> Option<&Tiers> {
        self.by_tool.iter().find(|(t, _)| gatekit::same(t, tool)).map(|(_, r)| r)
    }

    /// The tiers at by_tool[at], or none.
    fn tiers_at(&self, at: Option<usize>) -> &Tiers {
        match at {
            Some(k) => &self.by_tool[k].1,
            None => &NO_TIERS,
        }
    }

    fn evaluate(&self, in_: &Input) -> Answer<'_> {
        if self.mode == Mode::AllowAll {
            return Answer::Encoded(&self.allow_all);
        }
        if self.mode == Mode::Rules {
            if let Some(a) = self.allow_bash(in_) {
                return a;
            }
        }
        let args = decode_arguments(in_.arguments);
        if self.mode == Mode::DenyAll {
            // deny_all reads no arguments; they only name the message's subject.
            let base = request_base(in_, args.as_ref());
            return out(DENY, CODE_MODE_DENY_ALL, "mode=deny_all".to_string(), "", base.denied()).into();
        }
        let args = match args {
            Some(a) => a,
            None => return invalid_arguments(in_).into(),
        };
        let deny = |code: &'static str, detail: String, rule: &str| -> Answer<'_> {
            out(DENY, code, detail, rule, request_base(in_, Some(&args)).denied()).into()
        };
        let tool = canonical_tool(&in_.tool);
        let mt = match build_match_string(in_, &tool, &args) {
            Ok(mt) => mt,
            Err((code, detail)) => return deny(code, detail, ""),
        };
        let own = self.tiers(&tool).unwrap_or(&NO_TIERS);
        let star = self.tiers_at(self.star);
        let mut lowered: Option<String> = None;
        for tier in 0..3 {
            for list in [&own[tier], &star[tier]] {
                for r in list {
                    let text = match &mt {
                        MatchText::BadType(t) if !r.any => {
                            return deny(
                                CODE_EVALUATOR_ERROR,
                                format!("evaluator error: expected str, bytes or os.PathLike object, not {}", t),
                                "",
                            )
                        }
                        MatchText::BadType(_) => "",
                        MatchText::Text(t) => t.as_str(),
                    };
                    if !r.matches(text, &mut lowered) {
                        continue;
                    }
                    match tier {
                        TIER_DENY => return deny(CODE_DENIED_BY_RULE, r.detail.clone(), &r.pattern),
                        TIER_ALLOW => return Answer::Encoded(&r.allowed),
                        _ => {
                            let mut base = request_base(in_, Some(&args));
                            // The approval text names the operation: the
                            // caller's, else execute_command for bash.
                            if let Some(op) = parse_operation(&in_.operation) {
                                base.op = Some(op);
                            } else if tool == "bash" {
                                base.op = Some(OP_EXECUTE_COMMAND);
                            }
                            let mut o = out(REQUIRE_APPROVAL, CODE_ESCALATE, r.detail.clone(), &r.pattern, base.approval());
                            o.deny_message = base.denied();
                            return o.into();
                        }
                    }
                }
            }
        }
        deny(CODE_DEFAULT_DENY, "no matching rule, default deny".to_string(), "")
    }
}

impl Lion {
    /// The allow that evaluate gives a bash call whose command is a plain
    /// string (the usual call), found without building the arguments'
    /// Doc; None for any other call or verdict, which evaluate then
    /// decides in full. Why: the Doc, the match string and the tool's
    /// lower-cased copy are each built anew a call and were about half of
    /// an allowed call's time in the gate (docs/performance.md).
    fn allow_bash(&self, in_: &Input) -> Option<Answer<'_>> {
        // NB: canonical_tool("bash") is "bash" and no other name: an
        // alias or a name that lower-cases to it is decided in full.
        if !gatekit::same(in_.tool, "bash") {
            return None;
        }
        let command = bash_command(in_.arguments)?;
        if has_shell_control(&command) {
            return None;
        }
        let own = self.tiers_at(self.bash);
        let star = self.tiers_at(self.star);
        let mut lowered: Option<String> = None;
        for tier in 0..3 {
            for list in [&own[tier], &star[tier]] {
                for r in list {
                    if !r.matches(&command, &mut lowered) {
                        continue;
                    }
                    if tier != TIER_ALLOW {
                        return None;
                    }
                    return Some(Answer::Encoded(&r.allowed));
                }
            }
        }
        None
    }
}

/// The "command" member of an arguments object as build_match_string
/// reads it for bash (json.loads: the last of repeated keys), when it is a
/// string or absent (""); None for anything else (arguments that are not
/// an object, a command of another type), which the Doc decides.
fn bash_command(raw: &[u8]) -> Option<Str> {
    if let Some(c) = gatekit::plain_command(raw) {
        return Some(Cow::Borrowed(c));
    }
    let mut r = Reader::new(raw);
    r.ws();
    if r.peek() != b'{' {
        return None;
    }
    // NB: raw is one valid JSON value (the GateInput's reader skipped it),
    // and its members are read as Doc::parse reads them.
    let mut command: Option<Str> = None;
    let mut more = r.open(b'{')?;
    while more {
        let key = member_name(&mut r)?;
        r.ws();
        if key == "command" {
            if r.peek() != b'"' {
                return None;
            }
            command = Some(r.string()?);
        } else {
            r.skip()?;
        }
        more = r.next(b'}')?;
    }
    Some(command.unwrap_or(Cow::Borrowed("")))
}

/// LionAGI's _build_match_string; Err is a decision made here (a shell
/// control token, or argument types Python raises on).
fn build_match_string(in_: &Input, tool: &str, args: &Doc) -> Result<MatchText, (&'static str, String)> {
    match tool {
        "bash" => {
            let command = args.get("command").map(|v| py_str(args, v)).unwrap_or_default();
            if has_shell_control(&command) {
                return Err((
                    CODE_SHELL_CONTROL,
                    format!("Shell control operator requires explicit approval: {}", py_quote(&command)),
                ));
            }
            Ok(MatchText::Text(command))
        }
        "editor" => Ok(arg_text(args, "file_path")),
        "reader" => Ok(arg_text(args, "path")),
        "search" => {
            let mut pattern = "";
            if let Some(v) = args.get("pattern") {
                match args.node(v) {
                    Node::Str(s) => pattern = s,
                    Node::Arr(_) => {
                        return Err((CODE_EVALUATOR_ERROR, "evaluator error: can only concatenate list (not \"str\") to list".to_string()))
                    }
                    _ => {
                        return Err((
                            CODE_EVALUATOR_ERROR,
                            format!(
                                "evaluator error: unsupported operand type(s) for +: '{}' and 'str'",
                                py_type_name(args, v)
                            ),
                        ))
                    }
                }
            }
            let mut path = "";
            if let Some(v) = args.get("path") {
                if py_truthy(args, v) {
                    match args.node(v) {
                        Node::Str(s) => path = s,
                        _ => {
                            return Err((
                                CODE_EVALUATOR_ERROR,
                                format!(
                                    "evaluator error: can only concatenate str (not \"{}\") to str",
                                    py_type_name(args, v)
                                ),
                            ))
                        }
                    }
                }
            }
            Ok(MatchText::Text(format!("{} {}", pattern, path)))
        }
        _ => {
            // Any other tool: action, then every argument value.
            let mut b = String::with_capacity(in_.action.len() + in_.arguments.len() + 1);
            b.push_str(&in_.action);
            b.push(' ');
            let m = members(args, 0);
            let mut first = true;
            let mut visit = |b: &mut String, v: u32| {
                if !first {
                    b.push(' ');
                }
                first = false;
                match args.node(v) {
                    Node::Str(s) => b.push_str(s),
                    _ => py_repr_to(b, args, v),
                }
            };
            if in_.argument_order.is_empty() {
                for (_, v) in m {
                    visit(&mut b, *v);
                }
            } else {
                let mut seen = vec![false; m.len()];
                for name in &in_.argument_order {
                    if let Some(i) = m.iter().position(|(k, _)| k == name) {
                        if !seen[i] {
                            seen[i] = true;
                            visit(&mut b, m[i].1);
                        }
                    }
                }
                for (i, (_, v)) in m.iter().enumerate() {
                    if !seen[i] {
                        visit(&mut b, *v);
                    }
                }
            }
            Ok(MatchText::Text(b))
        }
    }
}

/// args.get(name, ""): a string is matched as it is; any other value makes
/// fnmatch raise.
fn arg_text(args: &Doc, name: &str) -> MatchText {
    match args.get(name) {
        None => MatchText::Text(String::new()),
        Some(v) => match args.node(v) {
            Node::Str(s) => MatchText::Text(s.to_string()),
            _ => MatchText::BadType(py_type_name(args, v)),
        },
    }
}

/// LionAGI's _SHELL_CONTROL regex (;|&&|\|\||\||`|\$\(|[<>]|\n), searched
/// anywhere.
fn has_shell_control(s: &str) -> bool {
    let b = s.as_bytes();
    // NB: eight bytes at a time past words that hold none of the bytes
    // below (a command's usual text), then byte by byte from the first
    // word that may.
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut start = 0;
    while start + 8 <= b.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[start..start + 8]);
        let x = u64::from_le_bytes(w);
        let mut m = 0;
        for c in [b';', b'|', b'`', b'<', b'>', b'\n', b'&', b'$'] {
            let y = x ^ (LO * c as u64);
            m |= y.wrapping_sub(LO) & !y & HI;
        }
        if m != 0 {
            break;
        }
        start += 8;
    }
    for i in start..b.len() {
        match b[i] {
            b';' | b'|' | b'`' | b'<' | b'>' | b'\n' => return true,
            b'&' if b.get(i + 1) == Some(&b'&') => return true,
            b'$' if b.get(i + 1) == Some(&b'(') => return true,
            _ => {}
        }
    }
    false
}

// ---------------------------------------------------------------------------
// AgentLane's ToolPermissionGrantPolicy and
// SideEffectApprovalToolPermissionPolicy, composed as AllOf.

#[derive(Clone)]
struct Grant {
    tool: String,
    op: u8,
    /// Whole-tool wildcard (whole_tool_grants: any_operation).
    any_op: bool,
    /// The grant-string entry (trimmed, lower-cased): the matched rule.
    entry: String,
}

fn first_grant<'g>(grants: &'g [Grant], tool: &str, op: u8) -> Option<&'g Grant> {
    grants.iter().find(|g| g.tool == tool && (g.any_op || g.op == op))
}

struct AgentLaneConfig {
    known_tools: Vec<(String, Vec<String>)>,
    grants: Option<String>,
    whole_tool_grants: String,
    side_effect: Option<SideEffectConfig>,
}

#[derive(Default)]
struct SideEffectConfig {
    operations: Option<Vec<String>>,
    grants: Option<String>,
    grants_downgrade: bool,
}

struct AgentLane {
    grant_layer: Option<Vec<Grant>>,
    approval_layer: bool,
    approval_ops: u16,
    approval_grants: Vec<Grant>,
}

/// parse_tool_permission_grants: a comma list of "tool" and
/// "tool:operation" entries, trimmed and lower-cased, empty ones skipped.
fn parse_grants(s: &str, tools: &[(String, Vec<u8>)], any_op: bool) -> (Vec<Grant>, Vec<String>) {
    let (mut grants, mut invalid) = (Vec::new(), Vec::new());
    if s.trim_matches(py_is_space).is_empty() {
        return (grants, invalid);
    }
    for raw in s.split(',') {
        let entry = py_lower(raw.trim_matches(py_is_space)).into_owned();
        if entry.is_empty() {
            continue;
        }
        let (tool_name, op_name) = match entry.split_once(':') {
            Some((t, o)) => (t, Some(o)),
            None => (entry.as_str(), None),
        };
        let ops = match tools.iter().find(|(t, _)| t == tool_name) {
            Some((_, ops)) => ops,
            None => {
                invalid.push(entry.clone());
                continue;
            }
        };
        match op_name {
            None => {
                if any_op {
                    grants.push(Grant { tool: tool_name.to_string(), op: 0, any_op: true, entry: entry.clone() });
                    continue;
                }
                for &op in ops {
                    grants.push(Grant { tool: tool_name.to_string(), op, any_op: false, entry: entry.clone() });
                }
            }
            Some(o) => match parse_operation(o) {
                Some(op) if ops.contains(&op) => {
                    grants.push(Grant { tool: tool_name.to_string(), op, any_op: false, entry: entry.clone() })
                }
                _ => invalid.push(entry.clone()),
            },
        }
    }
    (grants, invalid)
}

fn invalid_grants(field: &str, entries: &[String]) -> ConfigError {
    let quoted: Vec<String> = entries.iter().map(|e| py_quote(e)).collect();
    ConfigError {
        field: field.to_string(),
        detail: format!(
            "unsupported tool grants: ({}{})",
            quoted.join(", "),
            if entries.len() == 1 { "," } else { "" }
        ),
    }
}

impl AgentLane {
    fn new(c: AgentLaneConfig) -> CResult<AgentLane> {
        let any_op = match c.whole_tool_grants.as_str() {
            "" | "declared" => false,
            "any_operation" => true,
            other => {
                return config_err(
                    "agentlane.whole_tool_grants",
                    format!("unknown value {} (want \"declared\" or \"any_operation\")", go_quote(other)),
                )
            }
        };
        // known_tools first, then the built-ins over them.
        let mut tools: Vec<(String, Vec<u8>)> = Vec::new();
        for (tool, names) in &c.known_tools {
            let mut ops = Vec::new();
            for (i, name) in names.iter().enumerate() {
                let op = match parse_operation(name) {
                    Some(op) => op,
                    None => {
                        return config_err(
                            &index_path(&field_path("agentlane.known_tools", tool), i),
                            format!("unknown operation {} (want one of {})", go_quote(name), unknown_operation_list()),
                        )
                    }
                };
                if !ops.contains(&op) {
                    ops.push(op);
                }
            }
            match tools.iter_mut().find(|(t, _)| t == tool) {
                Some(e) => e.1 = ops,
                None => tools.push((tool.clone(), ops)),
            }
        }
        for (name, ops) in BUILTIN_TOOLS {
            match tools.iter_mut().find(|(t, _)| t == name) {
                Some(e) => e.1 = ops.to_vec(),
                None => tools.push((name.to_string(), ops.to_vec())),
            }
        }
        let mut p = AgentLane { grant_layer: None, approval_layer: false, approval_ops: 0, approval_grants: Vec::new() };
        if let Some(g) = &c.grants {
            let (grants, invalid) = parse_grants(g, &tools, any_op);
            if !invalid.is_empty() {
                return Err(invalid_grants("agentlane.grants", &invalid));
            }
            p.grant_layer = Some(grants);
        }
        if let Some(sc) = c.side_effect {
            p.approval_layer = true;
            p.approval_ops = SIDE_EFFECT_OPS;
            if let Some(ops) = &sc.operations {
                p.approval_ops = 0;
                for (i, name) in ops.iter().enumerate() {
                    match parse_operation(name) {
                        Some(op) => p.approval_ops |= 1 << op,
                        None => {
                            return config_err(
                                &index_path("agentlane.side_effect_approval.operations", i),
                                format!("unknown operation {} (want one of {})", go_quote(name), unknown_operation_list()),
                            )
                        }
                    }
                }
            }
            if sc.grants.is_some() && sc.grants_downgrade {
                return config_err(
                    "agentlane.side_effect_approval",
                    "\"grants\" and \"grants_downgrade\" exclude each other".to_string(),
                );
            }
            if let Some(g) = &sc.grants {
                let (grants, invalid) = parse_grants(g, &tools, any_op);
                if !invalid.is_empty() {
                    return Err(invalid_grants("agentlane.side_effect_approval.grants", &invalid));
                }
                p.approval_grants = grants;
            } else if sc.grants_downgrade {
                p.approval_grants = p.grant_layer.clone().unwrap_or_default();
            }
        }
        Ok(p)
    }

    fn evaluate(&self, in_: &Input) -> Output {
        let args = match decode_arguments(in_.arguments) {
            Some(a) => a,
            None => return invalid_arguments(in_),
        };
        let reqs = match build_requests(in_, &args) {
            Ok(r) => r,
            Err(o) => return o,
        };
        // Every request is evaluated; the strictest answer wins (the first
        // deny, else the first approval).
        let mut approval: Option<Output> = None;
        let mut allow = Output::default();
        for r in &reqs {
            let o = self.check(r);
            match o.decision {
                DENY => return o,
                REQUIRE_APPROVAL => {
                    if approval.is_none() {
                        approval = Some(o);
                    }
                }
                _ => allow = o,
            }
        }
        approval.unwrap_or(allow)
    }

    fn check(&self, r: &Request) -> Output {
        let op = r.op.unwrap_or(0);
        let mut granted: Option<&Grant> = None;
        if let Some(grants) = &self.grant_layer {
            granted = first_grant(grants, &r.tool, op);
            if granted.is_none() {
                return out(DENY, CODE_NOT_GRANTED, format!("no grant allows {}:{}", r.tool, op_name(op)), "", r.denied());
            }
        }
        if self.approval_layer && self.approval_ops & (1 << op) != 0 {
            if let Some(g) = first_grant(&self.approval_grants, &r.tool, op) {
                return out(
                    ALLOW,
                    CODE_APPROVAL_DOWNGRADED,
                    format!("{} approval downgraded by grant {}", op_name(op), g.entry),
                    &g.entry,
                    String::new(),
                );
            }
            let mut o = out(
                REQUIRE_APPROVAL,
                CODE_SIDE_EFFECT_APPROVAL,
                format!("{} is a side effect that requires approval", op_name(op)),
                "",
                r.approval(),
            );
            o.deny_message = r.denied();
            return o;
        }
        if let Some(g) = granted {
            return out(ALLOW, CODE_GRANTED, format!("granted by {}", g.entry), &g.entry, String::new());
        }
        if self.approval_layer {
            return out(ALLOW, CODE_NOT_SIDE_EFFECT, format!("{} is not a covered side effect", op_name(op)), "", String::new());
        }
        out(ALLOW, CODE_NO_LAYERS, "no AgentLane policy layer is configured".to_string(), "", String::new())
    }
}

/// Go's path.Dir.
fn path_dir(p: &str) -> String {
    let i = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    clean_path(&p[..i])
}

/// The input as AgentLane requests: the operation is the input's, or is
/// inferred the way AgentLane's first-party tools choose it.
fn build_requests(in_: &Input, args: &Doc) -> Result<Vec<Request>, Output> {
    let mut base = request_base(in_, Some(args));
    let fact = primary_path(in_);
    let invalid = |base: &Request, detail: String| out(DENY, CODE_INVALID_OPERATION, detail, "", base.denied());
    if !in_.operation.is_empty() {
        return match parse_operation(&in_.operation) {
            Some(op) => {
                base.op = Some(op);
                Ok(vec![base])
            }
            None => Err(invalid(&base, format!("unknown operation {}", py_quote(&in_.operation)))),
        };
    }
    if let Some(op) = tool_operation(&in_.tool) {
        base.op = Some(op);
        return Ok(vec![base]);
    }
    match in_.tool.as_ref() {
        "grep" => {
            // read_file for an existing file; search_files otherwise.
            base.op = Some(match fact {
                Some(f) if f.exists && f.kind == "file" => OP_READ_FILE,
                _ => OP_SEARCH_FILES,
            });
            Ok(vec![base])
        }
        "write" => {
            let f = match fact {
                None => {
                    return Err(invalid(&base, "operation missing: the write tool's operation needs a path fact".to_string()))
                }
                Some(f) => f,
            };
            if f.exists {
                base.op = Some(OP_OVERWRITE_FILE);
                return Ok(vec![base]);
            }
            let parent = path_dir(fact_path(f));
            if !f.nearest_existing.is_empty() && clean_path(&f.nearest_existing) != parent {
                // The parent is missing: create_directory first, then create_file.
                let mut dir = base.clone();
                dir.op = Some(OP_CREATE_DIRECTORY);
                dir.path = Some(parent);
                base.op = Some(OP_CREATE_FILE);
                return Ok(vec![dir, base]);
            }
            base.op = Some(OP_CREATE_FILE);
            Ok(vec![base])
        }
        _ => Err(invalid(&base, format!("operation missing and not inferable for tool {}", py_quote(&in_.tool)))),
    }
}

// ---------------------------------------------------------------------------
// The coding family: a decision per tool id and per operation, and the
// read-only classification of shell command lines.

struct CodingConfig {
    tools: Vec<(String, String)>,
    operations: Vec<(String, String)>,
    unclassified: String,
    commands: Option<CommandsConfig>,
}

#[derive(Default)]
struct CommandsConfig {
    read_only: Vec<String>,
    forbid: Vec<ToolRules>,
    deny_words: Vec<String>,
    pipe_into: Vec<String>,
    otherwise: String,
}

struct Coding {
    tools: Vec<(String, String)>,
    operations: Vec<(String, String)>,
    unclassified: String,
    commands: Option<CommandRules>,
}

struct ReadOnlyEntry {
    text: String,
    prefix: Vec<String>,
    forbid: Vec<String>,
}

struct CommandRules {
    read_only: Vec<ReadOnlyEntry>,
    deny_words: Vec<(Pattern, String)>,
    pipe_into: Vec<String>,
    otherwise: String,
}

fn set_entry(list: &mut Vec<(String, String)>, k: &str, v: &str) {
    match list.iter_mut().find(|(n, _)| n == k) {
        Some(e) => e.1 = v.to_string(),
        None => list.push((k.to_string(), v.to_string())),
    }
}

impl Coding {
    fn new(c: CodingConfig) -> CResult<Coding> {
        let has_commands = c.commands.is_some();
        let check = |field: &str, d: &str| -> CResult<()> {
            match d {
                "allow" | "deny" | "require_approval" => Ok(()),
                "commands" if has_commands => Ok(()),
                "commands" => config_err(field, "\"commands\" needs a commands section".to_string()),
                _ => config_err(
                    field,
                    format!("unknown decision {} (want \"allow\", \"deny\", \"require_approval\" or \"commands\")", go_quote(d)),
                ),
            }
        };
        let unclassified = if c.unclassified.is_empty() { "require_approval".to_string() } else { c.unclassified };
        check("coding.unclassified", &unclassified)?;
        let mut p = Coding { tools: Vec::new(), operations: Vec::new(), unclassified, commands: None };
        for (name, d) in &c.tools {
            check(&field_path("coding.tools", name), d)?;
            set_entry(&mut p.tools, name, d);
        }
        for (name, d) in &c.operations {
            let f = field_path("coding.operations", name);
            if parse_operation(name).is_none() {
                return config_err(&f, format!("unknown operation {}", go_quote(name)));
            }
            check(&f, d)?;
            set_entry(&mut p.operations, name, d);
        }
        if let Some(cmds) = c.commands {
            p.commands = Some(CommandRules::new(cmds)?);
        }
        Ok(p)
    }

    fn evaluate(&self, in_: &Input) -> Output {
        let args = match decode_arguments(in_.arguments) {
            Some(a) => a,
            None => return invalid_arguments(in_),
        };
        let mut base = request_base(in_, Some(&args));
        let mut op: &str = &in_.operation;
        if op.is_empty() {
            if let Some(o) = tool_operation(&in_.tool) {
                op = op_name(o);
            }
        }
        base.op = parse_operation(op);
        let (mut code, mut decision, mut rule);
        if let Some((_, d)) = self.tools.iter().find(|(t, _)| *t == *in_.tool) {
            code = CODE_CODING_TOOL;
            decision = d.as_str();
            rule = format!("tools.{}", in_.tool);
        } else if let Some((_, d)) = self.operations.iter().find(|(o, _)| o == op) {
            code = CODE_CODING_OPERATION;
            decision = d.as_str();
            rule = format!("operations.{}", op);
        } else {
            code = CODE_CODING_UNCLASSIFIED;
            decision = self.unclassified.as_str();
            rule = String::new();
        }
        let mut detail = format!("{}: {}", rule, decision);
        let verdict;
        if decision == "commands" {
            let cmd = args.string_arg("command").unwrap_or("");
            verdict = match &self.commands {
                Some(r) => r.classify(cmd),
                None => Verdict { decision: DENY, code: CODE_COMMAND_NOT_READ_ONLY, detail: String::new(), rule: String::new() },
            };
            code = verdict.code;
            decision = verdict.decision;
            detail = verdict.detail;
            rule = verdict.rule;
        } else if code == CODE_CODING_UNCLASSIFIED {
            detail = format!("no tools or operations entry names tool {} operation {}", py_quote(&in_.tool), py_quote(op));
        }
        match decision {
            "allow" => out(ALLOW, code, detail, &rule, String::new()),
            "require_approval" => {
                let mut o = out(REQUIRE_APPROVAL, code, detail, &rule, base.approval());
                o.deny_message = base.denied();
                o
            }
            _ => out(DENY, code, detail, &rule, base.denied()),
        }
    }
}

struct Verdict<'r> {
    decision: &'r str,
    code: &'static str,
    detail: String,
    rule: String,
}

impl CommandRules {
    fn new(c: CommandsConfig) -> CResult<CommandRules> {
        let otherwise = if c.otherwise.is_empty() { "require_approval".to_string() } else { c.otherwise };
        match otherwise.as_str() {
            "allow" | "deny" | "require_approval" => {}
            _ => {
                return config_err(
                    "coding.commands.otherwise",
                    format!("unknown decision {} (want \"allow\", \"deny\" or \"require_approval\")", go_quote(&otherwise)),
                )
            }
        }
        let mut r = CommandRules { read_only: Vec::new(), deny_words: Vec::new(), pipe_into: c.pipe_into, otherwise };
        let mut index: Vec<(String, usize)> = Vec::new();
        for (i, text) in c.read_only.iter().enumerate() {
            let line = parse_command_line(text.as_bytes());
            if line.commands.len() != 1 || line.opaque || line.writes || line.commands[0].assigns {
                return config_err(
                    &index_path("coding.commands.read_only", i),
                    format!("must be one simple command's leading words, got {}", go_quote(text)),
                );
            }
            let at = r.read_only.len();
            match index.iter_mut().find(|(t, _)| t == text) {
                Some(e) => e.1 = at,
                None => index.push((text.clone(), at)),
            }
            let prefix = line.commands.into_iter().next().map(|c| c.words).unwrap_or_default();
            r.read_only.push(ReadOnlyEntry { text: text.clone(), prefix, forbid: Vec::new() });
        }
        for f in c.forbid {
            let i = match index.iter().find(|(t, _)| *t == f.tool) {
                Some((_, i)) => *i,
                None => return config_err(&field_path("coding.commands.forbid", &f.tool), "names no read_only entry".to_string()),
            };
            r.read_only[i].forbid.extend(f.patterns);
        }
        for w in c.deny_words {
            r.deny_words.push((Pattern::compile(&w), w));
        }
        Ok(r)
    }

    fn classify(&self, cmd: &str) -> Verdict {
        let line = parse_command_line(cmd.as_bytes());
        for w in &line.words {
            for (pat, src) in &self.deny_words {
                if pat.matches(w) {
                    return Verdict {
                        decision: DENY,
                        code: CODE_COMMAND_PROTECTED_PATH,
                        detail: format!("the command names a protected path: {}", py_quote(w)),
                        rule: src.clone(),
                    };
                }
            }
        }
        for c in &line.commands {
            if c.piped && !c.words.is_empty() && self.pipe_into.iter().any(|p| p == program_name(&c.words[0])) {
                return Verdict {
                    decision: DENY,
                    code: CODE_COMMAND_PIPE_TO_INTERPRETER,
                    detail: format!("the command pipes into an interpreter: {}", py_quote(&c.words[0])),
                    rule: c.words[0].clone(),
                };
            }
        }
        let mut why = String::new();
        if line.opaque {
            why = "the command line has a construct the gate does not read (subshell, group, process substitution or unclosed quote)".to_string();
        } else if line.writes {
            why = "the command redirects output to a file".to_string();
        } else if line.commands.is_empty() {
            why = "empty command".to_string();
        }
        let mut matched: Vec<&str> = Vec::new();
        if why.is_empty() {
            for c in &line.commands {
                match self.read_only_match(c) {
                    Some(e) => matched.push(&e.text),
                    None => {
                        why = if c.assigns {
                            "a command with variable assignments is not read-only".to_string()
                        } else {
                            format!("not a read-only command: {}", py_quote(&c.words.join(" ")))
                        };
                        break;
                    }
                }
            }
        }
        if why.is_empty() {
            return Verdict {
                decision: ALLOW,
                code: CODE_COMMAND_READ_ONLY,
                detail: "read-only command".to_string(),
                rule: matched.join(", "),
            };
        }
        Verdict { decision: &self.otherwise, code: CODE_COMMAND_NOT_READ_ONLY, detail: why, rule: String::new() }
    }

    /// The entry c matches: its words begin with the entry's prefix and
    /// none of the later words is forbidden; git's --no-pager and -C DIR
    /// before the subcommand are skipped; a sed entry needs a print-only
    /// script.
    fn read_only_match(&self, c: &SimpleCommand) -> Option<&ReadOnlyEntry> {
        if c.assigns || c.words.is_empty() {
            return None;
        }
        let mut words: Vec<&str> = c.words.iter().map(|w| w.as_str()).collect();
        if words[0] == "git" {
            let mut rest = &words[1..];
            loop {
                if !rest.is_empty() && rest[0] == "--no-pager" {
                    rest = &rest[1..];
                    continue;
                }
                if rest.len() > 1 && rest[0] == "-C" {
                    rest = &rest[2..];
                    continue;
                }
                break;
            }
            let mut w = vec!["git"];
            w.extend_from_slice(rest);
            words = w;
        }
        for e in &self.read_only {
            if words.len() < e.prefix.len() {
                continue;
            }
            if !e.prefix.iter().zip(words.iter()).all(|(p, w)| p == w) {
                continue;
            }
            let rest = &words[e.prefix.len()..];
            let mut ok = !rest.iter().any(|w| {
                e.forbid.iter().any(|f| *w == f || (f.starts_with('-') && w.len() > f.len() && w.starts_with(f.as_str()) && w.as_bytes()[f.len()] == b'='))
            });
            if ok && e.prefix[0] == "sed" && !sed_print_only(rest) {
                ok = false;
            }
            if ok {
                return Some(e);
            }
        }
        None
    }
}

/// A sed script (after the entry's words) that only prints lines ("1,200p",
/// "10p", "$p"), followed by file operands.
fn sed_print_only(rest: &[&str]) -> bool {
    let script = match rest.first() {
        None => return false,
        Some(s) => s.as_bytes(),
    };
    if script.len() < 2 || script[script.len() - 1] != b'p' {
        return false;
    }
    if !script[..script.len() - 1].iter().all(|&c| c.is_ascii_digit() || c == b',' || c == b'$') {
        return false;
    }
    !rest[1..].iter().any(|w| w.starts_with('-'))
}

/// The last path component of a command word (/bin/sh → sh).
fn program_name(w: &str) -> &str {
    match w.rfind('/') {
        Some(i) => &w[i + 1..],
        None => w,
    }
}

// ---------------------------------------------------------------------------
// The shell command reader: splits a command line into simple commands the
// way a POSIX shell does (quotes, backslashes, separators, pipes,
// redirections, here-documents, $(…) and backquotes) without running or
// expanding anything. A classifier, not a sandbox.

#[derive(Default, Clone)]
struct SimpleCommand {
    /// After quote removal; redirections and leading assignments removed.
    words: Vec<String>,
    /// It reads a pipe from the previous command ("a | b").
    piped: bool,
    /// It starts with NAME=value words.
    assigns: bool,
}

#[derive(Default)]
struct ParsedLine {
    commands: Vec<SimpleCommand>,
    /// Every word of every command, nested ones and redirection targets
    /// included (the deny_words check).
    words: Vec<String>,
    /// An output redirection to something but /dev/null or a descriptor.
    writes: bool,
    /// A construct the reader cannot judge.
    opaque: bool,
}

const MAX_NESTING: usize = 8;

fn parse_command_line(s: &[u8]) -> ParsedLine {
    let mut p = ParsedLine::default();
    p.read(s, 0);
    p
}

fn bytes_text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => gatekit::lossy_string(b),
    }
}

fn is_fd(w: &[u8]) -> bool {
    if w.is_empty() {
        return false;
    }
    if w == b"-" {
        return true;
    }
    w.iter().all(|c| c.is_ascii_digit())
}

/// NAME=value.
fn is_assignment(w: &[u8]) -> bool {
    let eq = match w.iter().position(|&c| c == b'=') {
        Some(e) if e > 0 => e,
        _ => return false,
    };
    w[..eq].iter().enumerate().all(|(i, &c)| c == b'_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit()))
}

fn index_byte(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|&x| x == c)
}

/// The reader's state for one command line (one nesting level).
struct LineState {
    cur: SimpleCommand,
    word: Vec<u8>,
    in_word: bool,
    redirect: bool,
    redir_out: bool,
}

impl ParsedLine {
    fn end_word(&mut self, st: &mut LineState) {
        if !st.in_word {
            return;
        }
        let w = std::mem::take(&mut st.word);
        st.in_word = false;
        let text = bytes_text(&w);
        self.words.push(text.clone());
        if st.redirect {
            st.redirect = false;
            if st.redir_out && w != b"/dev/null" && !is_fd(&w) {
                self.writes = true;
            }
            return;
        }
        if st.cur.words.is_empty() && is_assignment(&w) {
            st.cur.assigns = true;
            return;
        }
        st.cur.words.push(text);
    }

    fn end_command(&mut self, st: &mut LineState, piped: bool) {
        self.end_word(st);
        if st.redirect {
            self.opaque = true; // a redirection without a target
            st.redirect = false;
        }
        let cur = std::mem::take(&mut st.cur);
        if !cur.words.is_empty() || cur.assigns {
            self.commands.push(cur);
        }
        st.cur.piped = piped;
    }

    fn read(&mut self, s: &[u8], depth: usize) {
        if depth > MAX_NESTING {
            self.opaque = true;
            return;
        }
        let mut st = LineState { cur: SimpleCommand::default(), word: Vec::new(), in_word: false, redirect: false, redir_out: false };
        let mut heredocs: Vec<Vec<u8>> = Vec::new();
        let n = s.len();
        let mut i = 0;
        while i < n {
            let c = s[i];
            match c {
                b'\\' => {
                    if i + 1 < n {
                        if s[i + 1] != b'\n' {
                            st.word.push(s[i + 1]);
                            st.in_word = true;
                        }
                        i += 2;
                        continue;
                    }
                    i += 1;
                    continue;
                }
                b'\'' => {
                    let end = match index_byte(&s[i + 1..], b'\'') {
                        None => {
                            self.opaque = true;
                            return;
                        }
                        Some(e) => e,
                    };
                    st.word.extend_from_slice(&s[i + 1..i + 1 + end]);
                    st.in_word = true;
                    i += end + 2;
                    continue;
                }
                b'"' => {
                    let mut j = i + 1;
                    while j < n && s[j] != b'"' {
                        if s[j] == b'\\' && j + 1 < n {
                            if b"$`\"\\\n".contains(&s[j + 1]) {
                                st.word.push(s[j + 1]);
                            } else {
                                st.word.push(b'\\');
                                st.word.push(s[j + 1]);
                            }
                            j += 2;
                            continue;
                        }
                        if s[j] == b'$' && j + 1 < n && s[j + 1] == b'(' {
                            let e = match self.substitution(s, j + 1, depth) {
                                None => return,
                                Some(e) => e,
                            };
                            st.word.extend_from_slice(&s[j..e]);
                            j = e;
                            continue;
                        }
                        if s[j] == b'`' {
                            match self.backquote(s, j, depth) {
                                None => return,
                                Some(e) => j = e,
                            }
                            continue;
                        }
                        st.word.push(s[j]);
                        j += 1;
                    }
                    if j >= n {
                        self.opaque = true;
                        return;
                    }
                    st.in_word = true;
                    i = j + 1;
                    continue;
                }
                b'$' if i + 1 < n && s[i + 1] == b'(' => {
                    let e = match self.substitution(s, i + 1, depth) {
                        None => return,
                        Some(e) => e,
                    };
                    st.word.extend_from_slice(&s[i..e]);
                    st.in_word = true;
                    i = e;
                    continue;
                }
                b'`' => {
                    match self.backquote(s, i, depth) {
                        None => return,
                        Some(e) => i = e,
                    }
                    st.in_word = true;
                    continue;
                }
                b' ' | b'\t' => self.end_word(&mut st),
                b'\n' => {
                    self.end_command(&mut st, false);
                    for delim in &heredocs {
                        i = skip_heredoc(s, i + 1, delim) - 1;
                    }
                    heredocs.clear();
                }
                b';' => self.end_command(&mut st, false),
                b'&' => {
                    if i + 1 < n && s[i + 1] == b'&' {
                        self.end_command(&mut st, false);
                        i += 2;
                        continue;
                    }
                    if i + 1 < n && s[i + 1] == b'>' {
                        // &> and &>> redirect both streams.
                        self.end_word(&mut st);
                        st.redirect = true;
                        st.redir_out = true;
                        i += 2;
                        if i < n && s[i] == b'>' {
                            i += 1;
                        }
                        continue;
                    }
                    self.end_command(&mut st, false); // background: the next command runs too
                }
                b'|' => {
                    if i + 1 < n && s[i + 1] == b'|' {
                        self.end_command(&mut st, false);
                        i += 2;
                        continue;
                    }
                    self.end_command(&mut st, true);
                }
                b'(' | b')' => {
                    self.opaque = true; // subshells are not read
                    return;
                }
                b'{' if !st.in_word && (i + 1 == n || s[i + 1] == b' ' || s[i + 1] == b'\n') => {
                    self.opaque = true; // groups are not read
                    return;
                }
                b'>' | b'<' => {
                    // A file-descriptor number just before belongs to the operator.
                    if st.in_word && is_fd(&st.word) {
                        st.word.clear();
                        st.in_word = false;
                    } else {
                        self.end_word(&mut st);
                    }
                    if i + 1 < n && s[i + 1] == b'(' {
                        self.opaque = true; // process substitution
                        return;
                    }
                    if c == b'<' && i + 1 < n && s[i + 1] == b'<' {
                        if i + 2 < n && s[i + 2] == b'<' {
                            // here-string: a word of data
                            st.redirect = true;
                            st.redir_out = false;
                            i += 3;
                            continue;
                        }
                        i += 2;
                        if i < n && s[i] == b'-' {
                            i += 1;
                        }
                        while i < n && (s[i] == b' ' || s[i] == b'\t') {
                            i += 1;
                        }
                        let start = i;
                        while i < n && !b" \t\n;&|<>()".contains(&s[i]) {
                            i += 1;
                        }
                        let delim: Vec<u8> = s[start..i].iter().copied().filter(|&c| c != b'\'' && c != b'"' && c != b'\\').collect();
                        if delim.is_empty() {
                            self.opaque = true;
                            return;
                        }
                        heredocs.push(delim);
                        continue;
                    }
                    let is_out = c == b'>';
                    i += 1;
                    let mut dup = false;
                    while i < n && (s[i] == b'>' || s[i] == b'|' || (s[i] == b'&' && is_out)) {
                        if s[i] == b'&' {
                            // >&N duplicates a descriptor
                            i += 1;
                            let start = i;
                            while i < n && (s[i].is_ascii_digit() || s[i] == b'-') {
                                i += 1;
                            }
                            if i == start {
                                st.redirect = true;
                                st.redir_out = true;
                            }
                            dup = true;
                            break;
                        }
                        i += 1;
                    }
                    if !dup {
                        st.redirect = true;
                        st.redir_out = is_out;
                    }
                    continue;
                }
                _ => {
                    st.word.push(c);
                    st.in_word = true;
                }
            }
            i += 1;
        }
        self.end_command(&mut st, false);
    }

    /// The $(…) whose "(" is at s[open]: the index after its ")".
    fn substitution(&mut self, s: &[u8], open: usize, depth: usize) -> Option<usize> {
        let (mut level, mut j) = (0i32, open);
        while j < s.len() {
            match s[j] {
                b'\\' => {
                    j += 2;
                    continue;
                }
                b'\'' => match index_byte(&s[j + 1..], b'\'') {
                    None => {
                        self.opaque = true;
                        return None;
                    }
                    Some(end) => {
                        j += end + 2;
                        continue;
                    }
                },
                b'(' => level += 1,
                b')' => {
                    level -= 1;
                    if level == 0 {
                        self.read(&s[open + 1..j], depth + 1);
                        return Some(j + 1);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        self.opaque = true;
        None
    }

    /// The `…` starting at s[open]: the index after its closing backquote.
    fn backquote(&mut self, s: &[u8], open: usize, depth: usize) -> Option<usize> {
        let end = match index_byte(&s[open + 1..], b'`') {
            None => {
                self.opaque = true;
                return None;
            }
            Some(e) => e,
        };
        self.read(&s[open + 1..open + 1 + end], depth + 1);
        Some(open + end + 2)
    }
}

/// The index after the line that ends the here-document starting at
/// s[from] (leading tabs allowed, as <<- strips them).
fn skip_heredoc(s: &[u8], mut from: usize, delim: &[u8]) -> usize {
    while from < s.len() {
        let end = index_byte(&s[from..], b'\n');
        let line = match end {
            Some(e) => &s[from..from + e],
            None => &s[from..],
        };
        let mut k = 0;
        while k < line.len() && line[k] == b'\t' {
            k += 1;
        }
        if &line[k..] == delim {
            return match end {
                None => s.len(),
                Some(e) => from + e + 1,
            };
        }
        match end {
            None => return s.len(),
            Some(e) => from += e + 1,
        }
    }
    s.len()
}

// ---------------------------------------------------------------------------
// The configuration document (plugins/permission/README.md).

enum Family {
    Lion(Lion),
    AgentLane(AgentLane),
    Coding(Coding),
}

const FAMILIES: &str = "\"preset\", \"lionagi\", \"agentlane\", \"coding\"";

fn parse_lionagi(doc: &Doc, field: &str, id: u32) -> CResult<LionConfig> {
    let mut lc = LionConfig { mode: None, allow: Vec::new(), deny: Vec::new(), escalate: Vec::new() };
    for (k, v) in members(doc, id) {
        let f = field_path(field, k);
        match k.as_ref() {
            "mode" => match doc.node(*v) {
                Node::Str(s) => lc.mode = Some(s.to_string()),
                n => return wrong_type(&f, "a string", n),
            },
            "allow" => lc.allow = parse_rule_map(doc, &f, *v)?,
            "deny" => lc.deny = parse_rule_map(doc, &f, *v)?,
            "escalate" => lc.escalate = parse_rule_map(doc, &f, *v)?,
            "on_escalate" => {
                return config_err(
                    &f,
                    "not configurable: an escalation is answered require_approval and decided by the host's approval broker"
                        .to_string(),
                )
            }
            _ => return config_err(&f, "unknown field (want \"mode\", \"allow\", \"deny\", \"escalate\")".to_string()),
        }
    }
    Ok(lc)
}

fn parse_agentlane(doc: &Doc, field: &str, id: u32) -> CResult<AgentLaneConfig> {
    let mut ac = AgentLaneConfig { known_tools: Vec::new(), grants: None, whole_tool_grants: String::new(), side_effect: None };
    for (k, v) in members(doc, id) {
        let f = field_path(field, k);
        match k.as_ref() {
            "known_tools" => match doc.node(*v) {
                Node::Null => {}
                Node::Obj(tools) => {
                    for (t, ops) in tools {
                        let ops = parse_string_list(doc, &field_path(&f, t), *ops)?;
                        ac.known_tools.push((t.to_string(), ops));
                    }
                }
                n => return wrong_type(&f, "an object of tool name → list of operations", n),
            },
            "grants" => ac.grants = parse_optional_string(doc, &f, *v)?,
            "whole_tool_grants" => match doc.node(*v) {
                Node::Str(s) => ac.whole_tool_grants = s.to_string(),
                n => return wrong_type(&f, "a string", n),
            },
            "side_effect_approval" => match doc.node(*v) {
                Node::Null => {}
                _ => ac.side_effect = Some(parse_side_effect(doc, &f, *v)?),
            },
            _ => {
                return config_err(
                    &f,
                    "unknown field (want \"known_tools\", \"grants\", \"whole_tool_grants\", \"side_effect_approval\")".to_string(),
                )
            }
        }
    }
    Ok(ac)
}

fn parse_side_effect(doc: &Doc, field: &str, id: u32) -> CResult<SideEffectConfig> {
    match doc.node(id) {
        Node::Bool(true) => return Ok(SideEffectConfig::default()),
        Node::Bool(false) => {
            return config_err(field, "must be true or an object (omit it, or use null, for no approval layer)".to_string())
        }
        Node::Obj(_) => {}
        n => return wrong_type(field, "an object or true", n),
    }
    let mut sc = SideEffectConfig::default();
    for (k, v) in members(doc, id) {
        let f = field_path(field, k);
        match k.as_ref() {
            "operations" => {
                if !matches!(doc.node(*v), Node::Null) {
                    sc.operations = Some(parse_string_list(doc, &f, *v)?);
                }
            }
            "grants" => sc.grants = parse_optional_string(doc, &f, *v)?,
            "grants_downgrade" => match doc.node(*v) {
                Node::Bool(b) => sc.grants_downgrade = *b,
                n => return wrong_type(&f, "a boolean", n),
            },
            _ => return config_err(&f, "unknown field (want \"operations\", \"grants\", \"grants_downgrade\")".to_string()),
        }
    }
    Ok(sc)
}

fn parse_coding(doc: &Doc, field: &str, id: u32) -> CResult<CodingConfig> {
    let mut cc = CodingConfig { tools: Vec::new(), operations: Vec::new(), unclassified: String::new(), commands: None };
    for (k, v) in members(doc, id) {
        let f = field_path(field, k);
        match k.as_ref() {
            "tools" | "operations" => {
                let m = match doc.node(*v) {
                    Node::Obj(m) => m,
                    n => return wrong_type(&f, "an object of name → decision", n),
                };
                let mut ds = Vec::with_capacity(m.len());
                for (name, d) in m {
                    match doc.node(*d) {
                        Node::Str(s) => ds.push((name.to_string(), s.to_string())),
                        n => return wrong_type(&field_path(&f, name), "a string", n),
                    }
                }
                if k == "tools" {
                    cc.tools = ds;
                } else {
                    cc.operations = ds;
                }
            }
            "unclassified" => match doc.node(*v) {
                Node::Str(s) => cc.unclassified = s.to_string(),
                n => return wrong_type(&f, "a string", n),
            },
            "commands" => match doc.node(*v) {
                Node::Obj(_) => cc.commands = Some(parse_commands(doc, &f, *v)?),
                n => return wrong_type(&f, "an object", n),
            },
            _ => {
                return config_err(
                    &f,
                    "unknown field (want \"tools\", \"operations\", \"unclassified\", \"commands\")".to_string(),
                )
            }
        }
    }
    Ok(cc)
}

fn parse_commands(doc: &Doc, field: &str, id: u32) -> CResult<CommandsConfig> {
    let mut c = CommandsConfig::default();
    for (k, v) in members(doc, id) {
        let f = field_path(field, k);
        match k.as_ref() {
            "read_only" => c.read_only = parse_string_list(doc, &f, *v)?,
            "deny_words" => c.deny_words = parse_string_list(doc, &f, *v)?,
            "pipe_into" => c.pipe_into = parse_string_list(doc, &f, *v)?,
            "forbid" => c.forbid = parse_rule_map(doc, &f, *v)?,
            "otherwise" => match doc.node(*v) {
                Node::Str(s) => c.otherwise = s.to_string(),
                n => return wrong_type(&f, "a string", n),
            },
            _ => {
                return config_err(
                    &f,
                    "unknown field (want \"read_only\", \"forbid\", \"deny_words\", \"pipe_into\", \"otherwise\")".to_string(),
                )
            }
        }
    }
    Ok(c)
}

/// ParseConfig then NewFromConfig of the Go reference, check for check and
/// in the same order, so that the first problem found is the same.
fn build(config: &[u8]) -> CResult<Family> {
    let doc = match Doc::parse(config) {
        Some(d) => d,
        None => return config_err("", "invalid JSON".to_string()),
    };
    let root = match doc.node(0) {
        Node::Obj(m) => m,
        n => return wrong_type("", "an object", n),
    };
    enum Parsed {
        Preset(String),
        Lion(LionConfig),
        AgentLane(AgentLaneConfig),
        Coding(CodingConfig),
    }
    let mut parsed: Option<Parsed> = None;
    let mut families = 0;
    for (k, v) in root {
        match k.as_ref() {
            "preset" => match doc.node(*v) {
                Node::Str(s) => {
                    preset_policy("preset", s)?;
                    parsed = Some(Parsed::Preset(s.to_string()));
                    families += 1;
                }
                n => return wrong_type("preset", "a string", n),
            },
            "lionagi" => {
                match doc.node(*v) {
                    Node::Str(s) => {
                        preset_policy("lionagi", s)?;
                        parsed = Some(Parsed::Preset(s.to_string()));
                    }
                    Node::Obj(_) => parsed = Some(Parsed::Lion(parse_lionagi(&doc, "lionagi", *v)?)),
                    n => return wrong_type("lionagi", "an object or a preset name", n),
                }
                families += 1;
            }
            "agentlane" => match doc.node(*v) {
                Node::Obj(_) => {
                    parsed = Some(Parsed::AgentLane(parse_agentlane(&doc, "agentlane", *v)?));
                    families += 1;
                }
                n => return wrong_type("agentlane", "an object", n),
            },
            "coding" => match doc.node(*v) {
                Node::Obj(_) => {
                    parsed = Some(Parsed::Coding(parse_coding(&doc, "coding", *v)?));
                    families += 1;
                }
                n => return wrong_type("coding", "an object", n),
            },
            _ => {
                return config_err(
                    &field_path("", k),
                    format!("unknown field (want exactly one of {})", FAMILIES),
                )
            }
        }
    }
    if families != 1 {
        return config_err("", format!("want exactly one of {}; got {}", FAMILIES, families));
    }
    match parsed {
        Some(Parsed::Preset(name)) => Ok(Family::Lion(preset_policy("preset", &name)?)),
        Some(Parsed::Lion(lc)) => Ok(Family::Lion(Lion::new(lc))),
        Some(Parsed::Coding(cc)) => Ok(Family::Coding(Coding::new(cc)?)),
        Some(Parsed::AgentLane(ac)) => Ok(Family::AgentLane(AgentLane::new(ac)?)),
        None => config_err("", format!("want exactly one of {}; got 0", FAMILIES)),
    }
}

struct Permission {
    family: Family,
}

/// The text of the last configuration refused (ConfigError.Error of the Go
/// reference), read through gate_config_error.
static mut LAST_CONFIG_ERROR: String = String::new();

impl Gate for Permission {
    fn configure(config: &[u8]) -> Option<Self> {
        match build(config) {
            Ok(family) => {
                unsafe { LAST_CONFIG_ERROR.clear() };
                Some(Permission { family })
            }
            Err(e) => {
                unsafe { LAST_CONFIG_ERROR = e.text() };
                None
            }
        }
    }

    fn evaluate(&self, input: &Input) -> Answer<'_> {
        match &self.family {
            Family::Lion(p) => p.evaluate(input),
            Family::AgentLane(p) => p.evaluate(input).into(),
            Family::Coding(p) => p.evaluate(input).into(),
        }
    }
}

/// gate_config_error: why the last gate_configure refused its document
/// (the field path and problem, as `permission: config field F: …`); empty
/// after an accepted one. Not part of ABI v1: a host that knows it can
/// show the reason behind gate.config_rejected.
#[no_mangle]
pub extern "C" fn gate_config_error() -> i64 {
    unsafe { gatekit::pack(LAST_CONFIG_ERROR.as_bytes()) }
}

// NB: a native test build (`make plugins-test`) has no Wasm start-up to export.
#[cfg(not(test))]
export_gate!(
    Permission,
    r#"{"name":"permission","version":"1.0.0","summary":"LionAGI PermissionPolicy and AgentLane grant and side-effect approval policies"}"#
);

#[cfg(test)]
mod tests {
    use super::*;

    fn member<'d>(doc: &'d Doc, obj: u32, key: &str) -> Option<&'d str> {
        members(doc, obj).iter().find(|(k, _)| k == key).and_then(|(_, v)| match doc.node(*v) {
            Node::Str(s) => Some(s.as_ref()),
            _ => None,
        })
    }

    /// Every refused configuration of plugins/permission/testdata/config_errors.json
    /// is refused with exactly its error text (field path and problem).
    #[test]
    fn config_error_table() {
        let raw = include_str!("../permission/testdata/config_errors.json");
        let doc = Doc::parse(raw.as_bytes()).expect("the table is JSON");
        let cases = match doc.get("cases").map(|id| doc.node(id)) {
            Some(Node::Arr(v)) => v.clone(),
            _ => panic!("the table has no cases"),
        };
        assert!(cases.len() > 50, "the table lost its rows");
        for id in cases {
            let name = member(&doc, id, "name").unwrap_or("?");
            let config = member(&doc, id, "config").expect("a config");
            let want = member(&doc, id, "error").expect("an error");
            match build(config.as_bytes()) {
                Ok(_) => panic!("{}: {} accepted", name, config),
                Err(e) => assert_eq!(e.text(), want, "{}", name),
            }
        }
    }
}
