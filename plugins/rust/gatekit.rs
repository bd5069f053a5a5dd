//! gatekit: what govhost's four built-in gates share, compiled into each of
//! them (`#[path = "gatekit.rs"] mod gatekit;`): the gate ABI v1 runtime and
//! exports (abi/README.md), a JSON reader over bytes that decodes strings as
//! Go's encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD,
//! one per bad byte), the GateOutput writer, and the text helpers the
//! LionAGI and AgentLane ports need (Go's path.Clean).
//!
//! It is not a crate: Debian's rustc 1.63 builds each gate with one call and
//! no cargo (Makefile `plugins`). The Go gate packages in plugins/<gate>
//! are the reference these ports are fuzzed against (plugins/builtin's
//! differential fuzz targets).

#![allow(dead_code)]

use std::borrow::Cow;

// ---------------------------------------------------------------------------
// UTF-8, as Go's unicode/utf8 reads it.

/// U+FFFD, Go's utf8.RuneError.
pub const RUNE_ERROR: u32 = 0xFFFD;

/// Decodes the first rune of b as utf8.DecodeRune does: an invalid or
/// truncated sequence is (RUNE_ERROR, 1). b must not be empty.
pub fn decode_rune(b: &[u8]) -> (u32, usize) {
    let c0 = b[0];
    if c0 < 0x80 {
        return (c0 as u32, 1);
    }
    let (need, lo, hi, init) = match c0 {
        0xC2..=0xDF => (1, 0x80, 0xBF, (c0 & 0x1F) as u32),
        0xE0 => (2, 0xA0, 0xBF, (c0 & 0x0F) as u32),
        0xE1..=0xEC | 0xEE..=0xEF => (2, 0x80, 0xBF, (c0 & 0x0F) as u32),
        0xED => (2, 0x80, 0x9F, (c0 & 0x0F) as u32),
        0xF0 => (3, 0x90, 0xBF, (c0 & 0x07) as u32),
        0xF1..=0xF3 => (3, 0x80, 0xBF, (c0 & 0x07) as u32),
        0xF4 => (3, 0x80, 0x8F, (c0 & 0x07) as u32),
        _ => return (RUNE_ERROR, 1),
    };
    if b.len() < need + 1 {
        return (RUNE_ERROR, 1);
    }
    let c1 = b[1];
    if c1 < lo || c1 > hi {
        return (RUNE_ERROR, 1);
    }
    let mut r = (init << 6) | (c1 & 0x3F) as u32;
    for k in 2..=need {
        let c = b[k];
        if !(0x80..=0xBF).contains(&c) {
            return (RUNE_ERROR, 1);
        }
        r = (r << 6) | (c & 0x3F) as u32;
    }
    (r, need + 1)
}

/// Appends rune r as UTF-8 (a surrogate or out-of-range value as U+FFFD,
/// as utf8.AppendRune does).
pub fn push_rune(out: &mut Vec<u8>, r: u32) {
    let ch = char::from_u32(r).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
}

/// The text of b with every invalid byte replaced by U+FFFD, as Go's
/// string conversions through encoding/json do.
pub fn lossy_string(b: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(b) {
        return s.to_string();
    }
    let mut out = Vec::with_capacity(b.len() + 8);
    let mut i = 0;
    while i < b.len() {
        let (r, n) = decode_rune(&b[i..]);
        if r == RUNE_ERROR && n == 1 {
            push_rune(&mut out, RUNE_ERROR);
        } else {
            out.extend_from_slice(&b[i..i + n]);
        }
        i += n;
    }
    // NB: only valid sequences and U+FFFD were written.
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------------------
// JSON reading.

/// A decoded JSON string: borrowed from the document when it can be.
pub type Str<'a> = Cow<'a, str>;

/// Bytes a string scan passes over: printable ASCII but '"' and '\\'.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0x20;
    while c < 0x80 {
        t[c] = c != b'"' as usize && c != b'\\' as usize;
        c += 1;
    }
    t
};

/// Reports a byte of x that is not PLAIN: below 0x20, '"', '\\' or not
/// ASCII (the bit tricks of "Bit Twiddling Hacks": hasless and haszero).
fn special_bytes(x: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let ctl = x.wrapping_sub(LO * 0x20) & !x & HI;
    let q = x ^ (LO * b'"' as u64);
    let quote = q.wrapping_sub(LO) & !q & HI;
    let e = x ^ (LO * b'\\' as u64);
    let esc = e.wrapping_sub(LO) & !e & HI;
    (ctl | quote | esc | (x & HI)) != 0
}

/// A cursor over a JSON document. Every reader returns None on a syntax
/// error; nothing panics on any input.
pub struct Reader<'a> {
    pub b: &'a [u8],
    pub i: usize,
    depth: usize,
}

const MAX_DEPTH: usize = 10000;

fn hex_val(c: u8) -> Option<u32> {
    match c {
        b'0'..=b'9' => Some((c - b'0') as u32),
        b'a'..=b'f' => Some((c - b'a' + 10) as u32),
        b'A'..=b'F' => Some((c - b'A' + 10) as u32),
        _ => None,
    }
}

/// The four hex digits at b[i..i+4].
pub fn hex4(b: &[u8], i: usize) -> Option<u32> {
    if i + 4 > b.len() {
        return None;
    }
    let mut r = 0;
    for k in 0..4 {
        r = (r << 4) | hex_val(b[i + k])?;
    }
    Some(r)
}

fn is_surrogate(r: u32) -> bool {
    (0xD800..0xE000).contains(&r)
}

/// Decodes the escape at body[i] == '\\' and returns the rune and the bytes
/// it spans (None when malformed). A surrogate pair is one rune; a lone
/// surrogate is U+FFFD, as in encoding/json.
pub fn unescape(body: &[u8], i: usize) -> Option<(u32, usize)> {
    let e = *body.get(i + 1)?;
    let r = match e {
        b'"' | b'\\' | b'/' => e as u32,
        b'b' => 8,
        b'f' => 12,
        b'n' => 10,
        b'r' => 13,
        b't' => 9,
        b'u' => {
            let r = hex4(body, i + 2)?;
            if !is_surrogate(r) {
                return Some((r, 6));
            }
            if (0xD800..0xDC00).contains(&r) && body.get(i + 6) == Some(&b'\\') && body.get(i + 7) == Some(&b'u') {
                if let Some(r2) = hex4(body, i + 8) {
                    if (0xDC00..0xE000).contains(&r2) {
                        return Some((0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00), 12));
                    }
                }
            }
            return Some((RUNE_ERROR, 6));
        }
        _ => return None,
    };
    Some((r, 2))
}

/// Decodes the body of a JSON string literal (without its quotes, escapes
/// already valid) as encoding/json does.
pub fn decode_body(body: &[u8]) -> String {
    if !body.contains(&b'\\') {
        return lossy_string(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c == b'\\' {
            match unescape(body, i) {
                Some((r, n)) => {
                    push_rune(&mut out, r);
                    i += n;
                }
                None => return String::new(),
            }
        } else if c < 0x80 {
            out.push(c);
            i += 1;
        } else {
            let (r, n) = decode_rune(&body[i..]);
            if r == RUNE_ERROR && n == 1 {
                push_rune(&mut out, RUNE_ERROR);
            } else {
                out.extend_from_slice(&body[i..i + n]);
            }
            i += n;
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, i: 0, depth: 0 }
    }

    pub fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    pub fn peek(&self) -> u8 {
        if self.i < self.b.len() {
            self.b[self.i]
        } else {
            0
        }
    }

    /// True at the end of the document (after whitespace).
    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    /// Consumes lit when it is next.
    pub fn literal(&mut self, lit: &[u8]) -> bool {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    /// Scans the string literal at i (b[i] == '"') and returns its end (one
    /// past the closing quote), whether it holds escapes, and whether its
    /// body is all ASCII.
    pub fn scan_string(&mut self) -> Option<(usize, bool, bool)> {
        if self.peek() != b'"' {
            return None;
        }
        let b = self.b;
        let mut j = self.i + 1;
        let (mut escaped, mut ascii) = (false, true);
        loop {
            // NB: the plain bytes are passed over eight at a time, then one
            // at a time: most strings of a GateInput have no escape.
            while j + 8 <= b.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[j..j + 8]);
                if special_bytes(u64::from_le_bytes(w)) {
                    break;
                }
                j += 8;
            }
            while j < b.len() && PLAIN[b[j] as usize] {
                j += 1;
            }
            if j >= b.len() {
                return None;
            }
            let c = b[j];
            if c == b'"' {
                self.i = j + 1;
                return Some((j + 1, escaped, ascii));
            }
            if c == b'\\' {
                escaped = true;
                let e = *b.get(j + 1)?;
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        hex4(b, j + 2)?;
                        j += 6;
                    }
                    _ => return None,
                }
                continue;
            }
            if c < 0x20 {
                return None;
            }
            ascii = false; // c >= 0x80
            j += 1;
        }
    }

    /// Reads a string value: borrowed from the document unless it holds
    /// escapes or invalid UTF-8.
    pub fn string(&mut self) -> Option<Str<'a>> {
        let start = self.i;
        let (end, escaped, ascii) = self.scan_string()?;
        let body = &self.b[start + 1..end - 1];
        if escaped {
            return Some(Cow::Owned(decode_body(body)));
        }
        if ascii {
            // NB: ASCII bytes are UTF-8.
            return Some(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(body) }));
        }
        match std::str::from_utf8(body) {
            Ok(s) => Some(Cow::Borrowed(s)),
            Err(_) => Some(Cow::Owned(lossy_string(body))),
        }
    }

    /// Reads a string value or null (as ""), as a Go string field does.
    pub fn string_or_null(&mut self) -> Option<Str<'a>> {
        if self.literal(b"null") {
            return Some(Cow::Borrowed(""));
        }
        self.string()
    }

    /// Reads true or false (null leaves the default).
    pub fn boolean(&mut self) -> Option<Option<bool>> {
        if self.literal(b"true") {
            Some(Some(true))
        } else if self.literal(b"false") {
            Some(Some(false))
        } else if self.literal(b"null") {
            Some(None)
        } else {
            None
        }
    }

    /// Skips a number and returns its text.
    pub fn number(&mut self) -> Option<&'a [u8]> {
        let b = self.b;
        let start = self.i;
        let mut i = self.i;
        if i < b.len() && b[i] == b'-' {
            i += 1;
        }
        if i < b.len() && b[i] == b'0' {
            i += 1;
        } else if i < b.len() && b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            return None;
        }
        if i < b.len() && b[i] == b'.' {
            let j = i + 1;
            i = j;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == j {
                return None;
            }
        }
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                i += 1;
            }
            let j = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == j {
                return None;
            }
        }
        self.i = i;
        Some(&b[start..i])
    }

    /// Skips one value and returns its raw bytes. It loops with a stack of
    /// open containers instead of recursing: a document nested 10 000 deep
    /// must not hit the host's call-depth bound (gate.stack_limit) where the
    /// Go decoder answers.
    pub fn skip(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        let mut open: Vec<u8> = Vec::new(); // the closers of the open containers
        'value: loop {
            match self.peek() {
                b'"' => {
                    self.scan_string()?;
                }
                c @ (b'{' | b'[') => {
                    let closer = if c == b'{' { b'}' } else { b']' };
                    open.push(closer);
                    if self.depth + open.len() > MAX_DEPTH {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    if self.peek() == closer {
                        self.i += 1;
                        open.pop();
                    } else {
                        if closer == b'}' {
                            self.member_name()?;
                        }
                        continue 'value;
                    }
                }
                b't' => {
                    if !self.literal(b"true") {
                        return None;
                    }
                }
                b'f' => {
                    if !self.literal(b"false") {
                        return None;
                    }
                }
                b'n' => {
                    if !self.literal(b"null") {
                        return None;
                    }
                }
                _ => {
                    self.number()?;
                }
            }
            // After a value: close containers, or go on to the next member.
            loop {
                let closer = match open.last() {
                    None => return Some(&self.b[start..self.i]),
                    Some(&c) => c,
                };
                self.ws();
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.ws();
                        if closer == b'}' {
                            self.member_name()?;
                        }
                        continue 'value;
                    }
                    c if c == closer => {
                        self.i += 1;
                        open.pop();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Reads a member name and its colon, leaving the reader at the value.
    fn member_name(&mut self) -> Option<()> {
        self.scan_string()?;
        self.ws();
        if self.peek() != b':' {
            return None;
        }
        self.i += 1;
        self.ws();
        Some(())
    }

    /// Reads an object, calling member(reader, key) with the reader at each
    /// member's value; member must consume the value.
    pub fn object<F: FnMut(&mut Reader<'a>, Str<'a>) -> Option<()>>(&mut self, mut member: F) -> Option<()> {
        if self.peek() != b'{' {
            return None;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek() == b'}' {
            self.i += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            if self.peek() != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads an array, calling elem with the reader at each element.
    pub fn array<F: FnMut(&mut Reader<'a>) -> Option<()>>(&mut self, mut elem: F) -> Option<()> {
        if self.peek() != b'[' {
            return None;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek() == b']' {
            self.i += 1;
            self.depth -= 1;
            return Some(());
        }
        loop {
            self.ws();
            elem(self)?;
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    self.depth -= 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

// ---------------------------------------------------------------------------
// GateInput (abi/README.md §4), decoded as abi.DecodeGateInput does.

#[derive(Default, Clone)]
pub struct PathFact<'a> {
    pub arg: Str<'a>,
    pub raw: Str<'a>,
    pub resolved: Str<'a>,
    pub exists: bool,
    pub kind: Str<'a>,
    pub nearest_existing: Str<'a>,
    /// The path as asked for is a symlink itself (abi.PathFact.Link).
    pub link: bool,
}

#[derive(Default, Clone)]
pub struct Actor<'a> {
    pub kind: Str<'a>,
    pub id: Str<'a>,
}

#[derive(Default)]
pub struct Assignment<'a> {
    pub actor: Actor<'a>,
    pub duty: Str<'a>,
}

#[derive(Default)]
pub struct Context<'a> {
    pub operation_id: Str<'a>,
    pub actor: Option<Actor<'a>>,
    pub run_id: Str<'a>,
    pub agent_name: Str<'a>,
    pub tool_call_id: Str<'a>,
    pub metadata: Vec<(Str<'a>, Str<'a>)>,
    /// None when absent (outside a task).
    pub assignments: Option<Vec<Assignment<'a>>>,
}

#[derive(Default)]
pub struct Input<'a> {
    pub gate_id: Str<'a>,
    pub phase: Str<'a>,
    pub tool: Str<'a>,
    pub operation: Str<'a>,
    pub action: Str<'a>,
    /// The raw JSON of the arguments (empty when absent).
    pub arguments: &'a [u8],
    pub argument_order: Vec<Str<'a>>,
    pub cwd: Str<'a>,
    pub workspace: Str<'a>,
    pub paths: Vec<PathFact<'a>>,
    pub context: Context<'a>,
}

fn read_actor<'a>(r: &mut Reader<'a>) -> Option<Option<Actor<'a>>> {
    if r.literal(b"null") {
        return Some(None);
    }
    let mut a = Actor::default();
    r.object(|r, k| {
        match k.as_ref() {
            "kind" => a.kind = r.string_or_null()?,
            "id" => a.id = r.string_or_null()?,
            _ => {
                r.skip()?;
            }
        }
        Some(())
    })?;
    Some(Some(a))
}

fn read_context<'a>(r: &mut Reader<'a>, c: &mut Context<'a>) -> Option<()> {
    if r.literal(b"null") {
        return Some(());
    }
    r.object(|r, k| {
        match k.as_ref() {
            "operation_id" => c.operation_id = r.string_or_null()?,
            "run_id" => c.run_id = r.string_or_null()?,
            "agent_name" => c.agent_name = r.string_or_null()?,
            "tool_call_id" => c.tool_call_id = r.string_or_null()?,
            "actor" => c.actor = read_actor(r)?,
            "metadata" => {
                if !r.literal(b"null") {
                    r.object(|r, k| {
                        let v = r.string_or_null()?;
                        match c.metadata.iter_mut().find(|(mk, _)| *mk == k) {
                            Some(m) => m.1 = v,
                            None => c.metadata.push((k, v)),
                        }
                        Some(())
                    })?;
                }
            }
            "assignments" => {
                if r.literal(b"null") {
                    c.assignments = None;
                } else {
                    let mut list = Vec::new();
                    r.array(|r| {
                        let mut a = Assignment::default();
                        if !r.literal(b"null") {
                            r.object(|r, k| {
                                match k.as_ref() {
                                    "actor" => a.actor = read_actor(r)?.unwrap_or_default(),
                                    "duty" => a.duty = r.string_or_null()?,
                                    _ => {
                                        r.skip()?;
                                    }
                                }
                                Some(())
                            })?;
                        }
                        list.push(a);
                        Some(())
                    })?;
                    c.assignments = Some(list);
                }
            }
            _ => {
                r.skip()?;
            }
        }
        Some(())
    })
}

fn read_path_fact<'a>(r: &mut Reader<'a>) -> Option<PathFact<'a>> {
    let mut p = PathFact::default();
    if r.literal(b"null") {
        return Some(p);
    }
    r.object(|r, k| {
        match k.as_ref() {
            "arg" => p.arg = r.string_or_null()?,
            "raw" => p.raw = r.string_or_null()?,
            "resolved" => p.resolved = r.string_or_null()?,
            "kind" => p.kind = r.string_or_null()?,
            "nearest_existing" => p.nearest_existing = r.string_or_null()?,
            "exists" => {
                if let Some(v) = r.boolean()? {
                    p.exists = v;
                }
            }
            "link" => {
                if let Some(v) = r.boolean()? {
                    p.link = v;
                }
            }
            _ => {
                r.skip()?;
            }
        }
        Some(())
    })?;
    Some(p)
}

impl<'a> Input<'a> {
    /// Decodes a GateInput document; None when it is not one.
    pub fn parse(b: &'a [u8]) -> Option<Input<'a>> {
        let mut r = Reader::new(b);
        let mut in_ = Input::default();
        r.ws();
        if r.literal(b"null") {
            return if r.at_end() { Some(in_) } else { None };
        }
        r.object(|r, k| {
            match k.as_ref() {
                "gate_id" => in_.gate_id = r.string_or_null()?,
                "phase" => in_.phase = r.string_or_null()?,
                "tool" => in_.tool = r.string_or_null()?,
                "operation" => in_.operation = r.string_or_null()?,
                "action" => in_.action = r.string_or_null()?,
                "cwd" => in_.cwd = r.string_or_null()?,
                "workspace" => in_.workspace = r.string_or_null()?,
                "arguments" => in_.arguments = r.skip()?,
                "argument_order" => {
                    in_.argument_order.clear();
                    if !r.literal(b"null") {
                        r.array(|r| {
                            let s = r.string_or_null()?;
                            in_.argument_order.push(s);
                            Some(())
                        })?;
                    }
                }
                "paths" => {
                    in_.paths.clear();
                    if !r.literal(b"null") {
                        r.array(|r| {
                            let p = read_path_fact(r)?;
                            in_.paths.push(p);
                            Some(())
                        })?;
                    }
                }
                "context" => read_context(r, &mut in_.context)?,
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        if r.at_end() {
            Some(in_)
        } else {
            None
        }
    }
}

// ---------------------------------------------------------------------------
// GateOutput (abi/README.md §5).

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub decision: &'static str,
    pub reason_code: String,
    pub detail: String,
    pub message: String,
    pub matched_rule: String,
    pub deny_message: String,
}

pub const ALLOW: &str = "allow";
pub const DENY: &str = "deny";
pub const REQUIRE_APPROVAL: &str = "require_approval";

impl Output {
    pub fn new(decision: &'static str, reason_code: &str) -> Output {
        Output { decision, reason_code: reason_code.to_string(), ..Output::default() }
    }
    pub fn allow(reason_code: &str) -> Output {
        Output::new(ALLOW, reason_code)
    }
    pub fn deny(reason_code: &str) -> Output {
        Output::new(DENY, reason_code)
    }

    /// Appends the GateOutput JSON, in abi.AppendGateOutput's field order.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"decision\":");
        write_string(out, self.decision);
        out.extend_from_slice(b",\"reason_code\":");
        write_string(out, &self.reason_code);
        for (name, v) in [
            ("detail", &self.detail),
            ("message", &self.message),
            ("matched_rule", &self.matched_rule),
            ("deny_message", &self.deny_message),
        ] {
            if !v.is_empty() {
                out.extend_from_slice(b",\"");
                out.extend_from_slice(name.as_bytes());
                out.extend_from_slice(b"\":");
                write_string(out, v);
            }
        }
        out.push(b'}');
    }
}

/// Appends s as a JSON string: quotes, backslashes and control characters
/// escaped.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            c if c < 0x20 => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

// ---------------------------------------------------------------------------
// Text helpers.

/// Go's path.Clean: the shortest lexically equivalent slash path.
pub fn clean_path(p: &str) -> String {
    if p.is_empty() {
        return ".".to_string();
    }
    let b = p.as_bytes();
    let rooted = b[0] == b'/';
    let n = b.len();
    let mut out: Vec<u8> = Vec::with_capacity(n);
    let (mut r, mut dotdot) = (0, 0);
    if rooted {
        out.push(b'/');
        r = 1;
        dotdot = 1;
    }
    while r < n {
        if b[r] == b'/' {
            r += 1;
        } else if b[r] == b'.' && (r + 1 == n || b[r + 1] == b'/') {
            r += 1;
        } else if b[r] == b'.' && b[r + 1] == b'.' && (r + 2 == n || b[r + 2] == b'/') {
            r += 2;
            if out.len() > dotdot {
                let mut w = out.len() - 1;
                while w > dotdot && out[w] != b'/' {
                    w -= 1;
                }
                out.truncate(w);
            } else if !rooted {
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(b"..");
                dotdot = out.len();
            }
        } else {
            if (rooted && out.len() != 1) || (!rooted && !out.is_empty()) {
                out.push(b'/');
            }
            while r < n && b[r] != b'/' {
                out.push(b[r]);
                r += 1;
            }
        }
    }
    if out.is_empty() {
        return ".".to_string();
    }
    String::from_utf8(out).unwrap_or_default()
}

// ---------------------------------------------------------------------------
// The ABI v1 runtime.

/// A built-in gate: configured once per instance, then asked one request at
/// a time.
pub trait Gate: Sized {
    /// The gate for the binding's configuration (compact JSON; `{}` when
    /// none); None refuses it (gate.config_rejected).
    fn configure(config: &[u8]) -> Option<Self>;
    fn evaluate(&self, input: &Input) -> Output;
}

/// The state behind one module's exports; export_gate! declares it.
pub struct Runtime<G> {
    pub input: Vec<u8>,
    pub out: Vec<u8>,
    pub gate: Option<G>,
}

impl<G: Gate> Runtime<G> {
    pub const fn new() -> Runtime<G> {
        Runtime { input: Vec::new(), out: Vec::new(), gate: None }
    }

    pub fn alloc(&mut self, size: i32) -> i32 {
        if size < 0 {
            return 0;
        }
        let size = (size as usize).max(1);
        if self.input.len() < size {
            self.input = vec![0; size];
        }
        self.input.as_ptr() as usize as i32
    }

    fn check(&self, ptr: i32, len: i32) -> bool {
        len == 0 || (len > 0 && ptr as usize == self.input.as_ptr() as usize && len as usize <= self.input.len())
    }

    /// Configures from a document; false refuses it. Whitespace around it,
    /// empty and null mean none, as the Go SDK reads them.
    pub fn configure_bytes(&mut self, config: &[u8]) -> bool {
        let t = trim_ws(config);
        let t: &[u8] = if t.is_empty() || t == b"null" { b"{}" } else { t };
        match G::configure(t) {
            Some(g) => {
                self.gate = Some(g);
                true
            }
            None => false,
        }
    }

    pub fn configure(&mut self, ptr: i32, len: i32) -> i32 {
        if !self.check(ptr, len) {
            return 1;
        }
        let data = self.input[..len as usize].to_vec();
        if self.configure_bytes(&data) {
            0
        } else {
            1
        }
    }

    /// Decides one GateInput document; the answer is valid until the next
    /// call. The SDK's reason codes are the Go SDK's (sdk.ReasonBadInput,
    /// sdk.ReasonUnregistered).
    pub fn evaluate_bytes(&mut self, input: &[u8]) -> &[u8] {
        if self.gate.is_none() && !self.configure_bytes(b"{}") {
            return self.answer(&Output::deny("sdk.unregistered"));
        }
        let v = match (Input::parse(input), self.gate.as_ref()) {
            (Some(in_), Some(g)) => g.evaluate(&in_),
            _ => Output::deny("sdk.bad_input"),
        };
        self.answer(&v)
    }

    fn answer(&mut self, v: &Output) -> &[u8] {
        self.out.clear();
        v.write_json(&mut self.out);
        &self.out
    }

    pub fn evaluate(&mut self, ptr: i32, len: i32) -> i64 {
        if !self.check(ptr, len) {
            let out = self.answer(&Output::deny("sdk.bad_input"));
            return pack(out);
        }
        // NB: the input buffer is taken out for the call so that the gate
        // may borrow self; it is put back (same allocation) afterwards.
        let buf = std::mem::take(&mut self.input);
        self.evaluate_bytes(&buf[..len as usize]);
        self.input = buf;
        pack(&self.out)
    }
}

pub fn trim_ws(b: &[u8]) -> &[u8] {
    let mut s = 0;
    let mut e = b.len();
    while s < e && matches!(b[s], b' ' | b'\t' | b'\n' | b'\r') {
        s += 1;
    }
    while e > s && matches!(b[e - 1], b' ' | b'\t' | b'\n' | b'\r') {
        e -= 1;
    }
    &b[s..e]
}

pub fn pack(out: &[u8]) -> i64 {
    (((out.as_ptr() as usize as u64) << 32) | out.len() as u64) as i64
}

/// Exports a Gate type as the ABI v1 functions, with describe (a JSON
/// literal) as gate_describe's answer.
#[macro_export]
macro_rules! export_gate {
    ($gate:ty, $describe:expr) => {
        static mut GATEKIT_RUNTIME: gatekit::Runtime<$gate> = gatekit::Runtime::new();
        static GATEKIT_DESCRIBE: &str = $describe;

        extern "C" {
            fn __wasm_call_ctors();
        }

        #[no_mangle]
        pub extern "C" fn _initialize() {
            unsafe { __wasm_call_ctors() }
        }

        #[no_mangle]
        pub extern "C" fn gate_abi_version() -> i32 {
            1
        }

        #[no_mangle]
        pub extern "C" fn gate_alloc(size: i32) -> i32 {
            unsafe { GATEKIT_RUNTIME.alloc(size) }
        }

        #[no_mangle]
        pub extern "C" fn gate_configure(ptr: i32, len: i32) -> i32 {
            unsafe { GATEKIT_RUNTIME.configure(ptr, len) }
        }

        #[no_mangle]
        pub extern "C" fn gate_evaluate(ptr: i32, len: i32) -> i64 {
            unsafe { GATEKIT_RUNTIME.evaluate(ptr, len) }
        }

        #[no_mangle]
        pub extern "C" fn gate_describe() -> i64 {
            gatekit::pack(GATEKIT_DESCRIBE.as_bytes())
        }
    };
}
