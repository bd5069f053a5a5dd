//! The built-in guard_destructive gate (ADR-0086 D2) as a native-ABI v1
//! module: denies a call whose "command" argument contains a destructive
//! shell or SQL command and allows anything else. Specified in
//! plugins/destructive/README.md; a port of the Go package
//! plugins/destructive, kept identical by plugins/builtin's differential
//! fuzz target. Built by `make plugins`.

#[path = "gatekit.rs"]
mod gatekit;

use gatekit::{Answer, Gate, Input, Output};

const REASON_ALLOWED: &str = "destructive.none";
const REASON_NO_COMMAND: &str = "destructive.no_command";
const REASON_INVALID_COMMAND: &str = "destructive.invalid_command";

const DETAIL_SUFFIX: &str = "\nIf you need this, explain why and ask the user to run it manually.";

// Families in report order: when a command matches several, the first wins.
const FAM_NONE: usize = 0;
const FAM_RM: usize = 1;
const FAM_GIT_PUSH: usize = 2;
const FAM_GIT_RESET: usize = 3;
const FAM_GIT_CLEAN: usize = 4;
const FAM_SQL_DROP: usize = 5;
const FAM_SQL_TRUNCATE: usize = 6;
const FAM_MKFS: usize = 7;
const FAM_DD: usize = 8;
const FAM_BLOCK: usize = 9;

const FAMILY_CODES: [&str; 10] = [
    REASON_ALLOWED,
    "destructive.rm_recursive_force",
    "destructive.git_push_force",
    "destructive.git_reset_hard",
    "destructive.git_clean_force",
    "destructive.sql_drop",
    "destructive.sql_truncate",
    "destructive.mkfs",
    "destructive.dd",
    "destructive.block_device_write",
];

/// LionAGI's _DESTRUCTIVE_PATTERNS, reported as matched_rule.
const LION_RULES: [&str; 10] = [
    r"\brm\s+-rf\b",
    r"\bgit\s+push\s+--force\b",
    r"\bgit\s+reset\s+--hard\b",
    r"\bgit\s+clean\s+-fd\b",
    r"\bdrop\s+table\b",
    r"\bdrop\s+database\b",
    r"\btruncate\s+table\b",
    r"\bmkfs\b",
    r"\bdd\s+if=",
    r">\s*/dev/sd[a-z]",
];

const RULE_FAMILY: [usize; 10] = [
    FAM_RM,
    FAM_GIT_PUSH,
    FAM_GIT_RESET,
    FAM_GIT_CLEAN,
    FAM_SQL_DROP,
    FAM_SQL_DROP,
    FAM_SQL_TRUNCATE,
    FAM_MKFS,
    FAM_DD,
    FAM_BLOCK,
];

struct Destructive {
    /// The allows, encoded once.
    allowed: Vec<u8>,
    no_command: Vec<u8>,
}

impl Gate for Destructive {
    /// No options: only an empty object is accepted.
    fn configure(config: &[u8]) -> Option<Self> {
        let mut r = gatekit::Reader::new(config);
        r.ws();
        let mut members = 0;
        r.object(|r, _| {
            members += 1;
            r.skip().map(|_| ())
        })?;
        if members == 0 && r.at_end() {
            Some(Destructive { allowed: Output::allow(REASON_ALLOWED).encode(), no_command: Output::allow(REASON_NO_COMMAND).encode() })
        } else {
            None
        }
    }

    fn evaluate(&self, input: &Input) -> Answer<'_> {
        // NB: the host's one plain command, read without lookup_key.
        if let Some(cmd) = gatekit::plain_command(input.arguments) {
            let (fam, _) = classify_folded(fold_plain(cmd.as_bytes()));
            if fam == FAM_NONE {
                return Answer::Encoded(&self.allowed);
            }
        }
        let val = match lookup_key(input.arguments, b"command") {
            None => return invalid(input, "arguments are not a JSON object").into(),
            Some(None) => return Answer::Encoded(&self.no_command),
            Some(Some(v)) => v,
        };
        if val.len() < 2 || val[0] != b'"' {
            return invalid(input, "command is not a string").into();
        }
        let body = &val[1..val.len() - 1];
        let (fam, rule) = classify_folded(fold_json(body));
        if fam == FAM_NONE {
            return Answer::Encoded(&self.allowed);
        }
        let cmd = gatekit::decode_body(body);
        let mut o = Output::deny(FAMILY_CODES[fam]);
        o.detail = format!("Blocked destructive command: {}{}", cmd, DETAIL_SUFFIX);
        o.message = denied_message(&input.tool);
        o.matched_rule = rule.to_string();
        o.into()
    }
}

fn invalid(input: &Input, why: &str) -> Output {
    let mut o = Output::deny(REASON_INVALID_COMMAND);
    o.detail = format!("guard_destructive could not evaluate: {}", why);
    o.message = denied_message(&input.tool);
    o
}

/// AgentLane's format_tool_permission_result for a deny with no reason and
/// a command subject.
fn denied_message(tool: &str) -> String {
    let tool = if tool.is_empty() { "bash" } else { tool };
    format!("permission denied: {} is not allowed for this command", tool)
}

/// The raw value of the last top-level member named key of the arguments
/// object: None when the arguments are not an object, Some(None) when the
/// key is absent. Empty or null arguments are an object with no members.
fn lookup_key<'a>(raw: &'a [u8], key: &[u8]) -> Option<Option<&'a [u8]>> {
    let mut r = gatekit::Reader::new(raw);
    r.ws();
    if r.i == raw.len() {
        return Some(None);
    }
    if r.literal(b"null") {
        return if r.at_end() { Some(None) } else { None };
    }
    let mut found: Option<&'a [u8]> = None;
    if r.peek() != b'{' {
        return None;
    }
    r.i += 1;
    r.ws();
    if r.peek() == b'}' {
        r.i += 1;
        return if r.at_end() { Some(None) } else { None };
    }
    loop {
        let kstart = r.i;
        let (kend, escaped, _) = r.scan_string()?;
        let body = &raw[kstart + 1..kend - 1];
        let matches = if escaped { gatekit::decode_body(body).as_bytes() == key } else { body == key };
        r.ws();
        if r.peek() != b':' {
            return None;
        }
        r.i += 1;
        r.ws();
        let vstart = r.i;
        r.i = skip_value(raw, r.i, 0)?;
        let v = &raw[vstart..r.i];
        if matches {
            found = Some(v);
        }
        r.ws();
        match r.peek() {
            b',' => {
                r.i += 1;
                r.ws();
            }
            b'}' => {
                r.i += 1;
                return if r.at_end() { Some(found) } else { None };
            }
            _ => return None,
        }
    }
}

/// The end of the JSON value at b[i], with Go's skipValue nesting bound
/// (a value inside more than 512 containers of the member is refused).
fn skip_value(b: &[u8], i: usize, depth: usize) -> Option<usize> {
    if i >= b.len() || depth > 512 {
        return None;
    }
    let c = b[i];
    let mut r = gatekit::Reader::new(b);
    r.i = i;
    match c {
        b'"' => r.scan_string().map(|(end, _, _)| end),
        b'{' | b'[' => {
            let closer = if c == b'{' { b'}' } else { b']' };
            r.i += 1;
            r.ws();
            if r.peek() == closer {
                return Some(r.i + 1);
            }
            loop {
                if c == b'{' {
                    r.scan_string()?;
                    r.ws();
                    if r.peek() != b':' {
                        return None;
                    }
                    r.i += 1;
                    r.ws();
                }
                r.i = skip_value(b, r.i, depth + 1)?;
                r.ws();
                if r.i >= b.len() {
                    return None;
                }
                if b[r.i] == closer {
                    return Some(r.i + 1);
                }
                if b[r.i] != b',' {
                    return None;
                }
                r.i += 1;
                r.ws();
            }
        }
        b'-' | b'0'..=b'9' => r.number().map(|_| r.i),
        _ => {
            if r.literal(b"true") || r.literal(b"false") || r.literal(b"null") {
                Some(r.i)
            } else {
                None
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Folding (plugins/destructive/fold.go).

/// Any other non-ASCII rune after folding: neither word nor whitespace.
const PLACEHOLDER: u8 = 0x80;

const CL_WORD: u8 = 1;
const CL_SPACE: u8 = 2;
const CL_SEP: u8 = 4;
const CL_BREAK: u8 = 8;
const CL_QUOTE: u8 = 16;

const fn class_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut c = b'a';
    while c <= b'z' {
        t[c as usize] |= CL_WORD;
        c += 1;
    }
    c = b'0';
    while c <= b'9' {
        t[c as usize] |= CL_WORD;
        c += 1;
    }
    t[b'_' as usize] |= CL_WORD;
    t[b' ' as usize] |= CL_SPACE | CL_BREAK;
    t[b'\n' as usize] |= CL_SPACE | CL_SEP;
    t[b';' as usize] |= CL_SEP;
    t[b'&' as usize] |= CL_SEP;
    t[b'|' as usize] |= CL_SEP;
    t[b'(' as usize] |= CL_SEP;
    t[b')' as usize] |= CL_SEP;
    t[b'`' as usize] |= CL_SEP;
    t[b'<' as usize] |= CL_BREAK;
    t[b'>' as usize] |= CL_BREAK;
    t[b'\'' as usize] |= CL_QUOTE;
    t[b'"' as usize] |= CL_QUOTE;
    t[b'\\' as usize] |= CL_QUOTE;
    t
}

static CLASS: [u8; 256] = class_table();

fn fold_ascii(c: u8) -> u8 {
    match c {
        b'A'..=b'Z' => c + 32,
        b'\t' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f => b' ',
        _ => c,
    }
}

fn fold_rune(r: u32) -> u8 {
    if r < 0x80 {
        return fold_ascii(r as u8);
    }
    match r {
        0x017f => b's',
        0x212a => b'k',
        0x0130 | 0x0131 => b'i',
        0x85 | 0xa0 | 0x1680 | 0x2028 | 0x2029 | 0x202f | 0x205f | 0x3000 => b' ',
        0x2000..=0x200a => b' ',
        _ => PLACEHOLDER,
    }
}

/// The folded image of a plain ASCII body (no escape, no control byte:
/// a JSON string's): upper-case letters lowered, eight bytes at a time.
fn fold_plain(body: &[u8]) -> Vec<u8> {
    const LO: u64 = 0x0101_0101_0101_0101;
    let mut out = Vec::with_capacity(body.len() + 8);
    let mut i = 0;
    while i + 8 <= body.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&body[i..i + 8]);
        let x = u64::from_le_bytes(w);
        // NB: each byte is below 0x80: the sums do not carry into the
        // next byte; the high bit of a byte is set where it is in A..=Z.
        let upper = (x + LO * (0x80 - b'A' as u64)) & !(x + LO * (0x80 - b'Z' as u64 - 1)) & (LO * 0x80);
        out.extend_from_slice(&(x | (upper >> 2)).to_le_bytes());
        i += 8;
    }
    for &c in &body[i..] {
        out.push(fold_ascii(c));
    }
    out
}

/// The folded image of a JSON string literal's body (escapes validated).
fn fold_json(body: &[u8]) -> Vec<u8> {
    // NB: a plain ASCII body (the usual command) folds by words.
    if body.iter().all(|&c| c < 0x80 && c != b'\\') {
        return fold_plain(body);
    }
    let mut dst = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c == b'\\' {
            let (r, n) = gatekit::unescape(body, i).unwrap_or((gatekit::RUNE_ERROR, body.len() - i));
            dst.push(fold_rune(r));
            i += n;
        } else if c < 0x80 {
            dst.push(fold_ascii(c));
            i += 1;
        } else {
            let (r, n) = gatekit::decode_rune(&body[i..]);
            dst.push(fold_rune(r));
            i += n;
        }
    }
    dst
}

fn is_word(c: u8) -> bool {
    CLASS[c as usize] & CL_WORD != 0
}
fn is_space(c: u8) -> bool {
    CLASS[c as usize] & CL_SPACE != 0
}
fn is_lower(c: u8) -> bool {
    c.is_ascii_lowercase()
}
fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

// ---------------------------------------------------------------------------
// Classification (plugins/destructive/gate.go, baseline.go, tokens.go).

fn classify_folded(mut b: Vec<u8>) -> (usize, &'static str) {
    let (rules, mut ext) = baseline(&b);
    ext |= extended(&mut b);
    let mut base: u16 = 0;
    for (k, f) in RULE_FAMILY.iter().enumerate() {
        if rules & (1 << k) != 0 {
            base |= 1 << f;
        }
    }
    for f in FAM_RM..=FAM_BLOCK {
        let bit = 1u16 << f;
        if base & bit != 0 {
            for (k, rf) in RULE_FAMILY.iter().enumerate() {
                if *rf == f && rules & (1 << k) != 0 {
                    return (f, LION_RULES[k]);
                }
            }
        }
        if ext & bit != 0 {
            return (f, "");
        }
    }
    (FAM_NONE, "")
}

fn has_at(b: &[u8], i: usize, s: &[u8]) -> bool {
    i <= b.len() && b.len() - i >= s.len() && &b[i..i + s.len()] == s
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}

/// \b between b[i-1] (a word byte in every caller) and b[i].
fn boundary_at(b: &[u8], i: usize) -> bool {
    i >= b.len() || !is_word(b[i])
}

/// words[0] \s+ words[1] ... \b at i.
fn seq(b: &[u8], mut i: usize, words: &[&[u8]]) -> bool {
    for (k, w) in words.iter().enumerate() {
        if k > 0 {
            let j = skip_space(b, i);
            if j == i {
                return false;
            }
            i = j;
        }
        if !has_at(b, i, w) {
            return false;
        }
        i += w.len();
    }
    boundary_at(b, i)
}

/// LionAGI's ten patterns over the folded image, in one pass, plus the
/// extended SQL and redirection scans (families in ext).
fn baseline(b: &[u8]) -> (u16, u16) {
    let (mut rules, mut ext) = (0u16, 0u16);
    for i in 0..b.len() {
        let c = b[i];
        if c == b'>' {
            let j = skip_space(b, i + 1);
            if has_at(b, j, b"/dev/sd") && j + 7 < b.len() && is_lower(b[j + 7]) {
                rules |= 1 << 9;
            } else if ext & (1 << FAM_BLOCK) == 0 && redirect_at(b, i) {
                ext |= 1 << FAM_BLOCK;
            }
            continue;
        }
        if !is_lower(c) || (i > 0 && is_word(b[i - 1])) {
            continue;
        }
        match c {
            b'r' => {
                if has_at(b, i, b"rm") && seq(b, i, &[b"rm", b"-rf"]) {
                    rules |= 1 << 0;
                }
            }
            b'g' => {
                if !has_at(b, i, b"git") {
                    continue;
                }
                if seq(b, i, &[b"git", b"push", b"--force"]) {
                    rules |= 1 << 1;
                }
                if seq(b, i, &[b"git", b"reset", b"--hard"]) {
                    rules |= 1 << 2;
                }
                if seq(b, i, &[b"git", b"clean", b"-fd"]) {
                    rules |= 1 << 3;
                }
            }
            b'd' => {
                if has_at(b, i, b"drop") {
                    if seq(b, i, &[b"drop", b"table"]) {
                        rules |= 1 << 4;
                    }
                    if seq(b, i, &[b"drop", b"database"]) {
                        rules |= 1 << 5;
                    }
                    ext |= sql_at(b, i);
                }
                if has_at(b, i, b"dd") {
                    let j = i + 2;
                    let k = skip_space(b, j);
                    if k > j && has_at(b, k, b"if=") {
                        rules |= 1 << 8;
                    }
                }
            }
            b't' => {
                if has_at(b, i, b"truncate") {
                    if seq(b, i, &[b"truncate", b"table"]) {
                        rules |= 1 << 6;
                    }
                    ext |= sql_at(b, i);
                }
            }
            b'm' => {
                if has_at(b, i, b"mkfs") && boundary_at(b, i + 4) {
                    rules |= 1 << 7;
                }
            }
            _ => {}
        }
    }
    (rules, ext)
}

#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

/// A command's tokens: the first TOKS_INLINE in place, the rest (and
/// then all) in a Vec. Why: a Vec is grown by calls that cost more than
/// the scan of a short command (docs/performance.md).
struct Toks {
    inline: [Span; TOKS_INLINE],
    n: usize,
    heap: Vec<Span>,
}

const TOKS_INLINE: usize = 8;

impl Toks {
    fn new() -> Toks {
        Toks { inline: [Span { start: 0, end: 0 }; TOKS_INLINE], n: 0, heap: Vec::new() }
    }

    fn push(&mut self, s: Span) {
        if self.heap.is_empty() {
            if self.n < TOKS_INLINE {
                self.inline[self.n] = s;
                self.n += 1;
                return;
            }
            self.heap.extend_from_slice(&self.inline);
        }
        self.heap.push(s);
    }

    fn is_empty(&self) -> bool {
        self.n == 0 && self.heap.is_empty()
    }

    fn as_slice(&self) -> &[Span] {
        if self.heap.is_empty() {
            &self.inline[..self.n]
        } else {
            &self.heap
        }
    }

    fn clear(&mut self) {
        self.n = 0;
        self.heap.clear();
    }
}

/// The token scan: compacts each token (without quotes and backslashes)
/// in place and checks each command's tokens. b is rewritten.
fn extended(b: &mut Vec<u8>) -> u16 {
    let mut mask = 0u16;
    let mut toks = Toks::new();
    let mut w = 0;
    let n = b.len();
    let mut i = 0;
    while i <= n {
        if i == n || CLASS[b[i] as usize] & CL_SEP != 0 {
            if !toks.is_empty() {
                mask |= scan_command(b, toks.as_slice());
            }
            toks.clear();
            i += 1;
            w = i;
            continue;
        }
        if CLASS[b[i] as usize] & CL_BREAK != 0 {
            i += 1;
            continue;
        }
        let start = w;
        while i < n {
            let c = b[i];
            let cl = CLASS[c as usize];
            if cl & (CL_SEP | CL_BREAK) != 0 {
                break;
            }
            if cl & CL_QUOTE == 0 {
                b[w] = c;
                w += 1;
            }
            i += 1;
        }
        if w > start {
            toks.push(Span { start, end: w });
        }
    }
    mask
}

fn scan_command(norm: &[u8], toks: &[Span]) -> u16 {
    let mut mask = 0u16;
    for k in 0..toks.len() {
        let t = &norm[toks[k].start..toks[k].end];
        if has_at(t, 0, b"of=") && is_block_device(&t[3..]) {
            mask |= 1 << FAM_BLOCK;
        }
        let name = match t.iter().rposition(|&c| c == b'/') {
            Some(j) => &t[j + 1..],
            None => t,
        };
        if name.len() < 2 {
            continue;
        }
        if !matches!(name[0], b'r' | b'g' | b'd' | b't' | b'm' | b'n') {
            continue;
        }
        let rest = &toks[k + 1..];
        if name == b"rm" {
            if rm_recursive_force(norm, rest) {
                mask |= 1 << FAM_RM;
            }
        } else if name == b"git" {
            mask |= git_scan(norm, rest);
        } else if name == b"dd" {
            for s in rest {
                if has_at(&norm[s.start..s.end], 0, b"if=") {
                    mask |= 1 << FAM_DD;
                }
            }
        } else if name == b"tee" {
            for s in rest {
                if is_block_device(&norm[s.start..s.end]) {
                    mask |= 1 << FAM_BLOCK;
                }
            }
        } else if is_mkfs_name(name) {
            mask |= 1 << FAM_MKFS;
        }
    }
    mask
}

/// A non-empty prefix of word (abbreviated long options).
fn is_prefix_of(p: &[u8], word: &[u8]) -> bool {
    !p.is_empty() && p.len() <= word.len() && p == &word[..p.len()]
}

/// A long option's name: "--force=x" → "force".
fn long_name(a: &[u8]) -> &[u8] {
    let a = &a[2..];
    match a.iter().position(|&c| c == b'=') {
        Some(i) => &a[..i],
        None => a,
    }
}

fn rm_recursive_force(norm: &[u8], args: &[Span]) -> bool {
    let (mut rec, mut force) = (false, false);
    for s in args {
        let a = &norm[s.start..s.end];
        if a.len() < 2 || a[0] != b'-' {
            continue;
        }
        if a[1] == b'-' {
            let name = long_name(a);
            rec = rec || is_prefix_of(name, b"recursive");
            force = force || is_prefix_of(name, b"force");
        } else {
            for &c in &a[1..] {
                if !is_lower(c) && !is_digit(c) {
                    break;
                }
                rec = rec || c == b'r';
                force = force || c == b'f';
            }
        }
        if rec && force {
            return true;
        }
    }
    false
}

fn git_scan(norm: &[u8], args: &[Span]) -> u16 {
    let mut j = 0;
    while j < args.len() {
        let a = &norm[args[j].start..args[j].end];
        if a[0] != b'-' {
            break;
        }
        j += 1;
        if a == b"-c" || a == b"--git-dir" || a == b"--work-tree" || a == b"--namespace" || a == b"--super-prefix" || a == b"--config-env" {
            j += 1;
        }
    }
    if j >= args.len() {
        return 0;
    }
    let sub = &norm[args[j].start..args[j].end];
    let rest = &args[j + 1..];
    if sub == b"push" {
        for s in rest {
            if force_push_arg(&norm[s.start..s.end]) {
                return 1 << FAM_GIT_PUSH;
            }
        }
    } else if sub == b"reset" {
        for s in rest {
            let a = &norm[s.start..s.end];
            if a.len() > 2 && a[0] == b'-' && a[1] == b'-' && is_prefix_of(long_name(a), b"hard") {
                return 1 << FAM_GIT_RESET;
            }
        }
    } else if sub == b"clean" {
        let (mut force, mut dir) = (false, false);
        for s in rest {
            let a = &norm[s.start..s.end];
            if a.len() > 2 && a[0] == b'-' && a[1] == b'-' {
                force = force || is_prefix_of(long_name(a), b"force");
            } else if a.len() > 1 && a[0] == b'-' {
                force = force || a[1..].contains(&b'f');
                dir = dir || a[1..].contains(&b'd');
            }
            if force && dir {
                return 1 << FAM_GIT_CLEAN;
            }
        }
    }
    0
}

fn force_push_arg(a: &[u8]) -> bool {
    if a.len() > 1 && a[0] == b'+' {
        true
    } else if a.starts_with(b"--") {
        long_name(a).starts_with(b"for")
    } else if a.len() > 1 && a[0] == b'-' {
        a[1..].contains(&b'f')
    } else {
        false
    }
}

fn is_mkfs_name(name: &[u8]) -> bool {
    for p in [&b"mkfs"[..], b"newfs"] {
        if name.starts_with(p) && (name.len() == p.len() || !is_lower(name[p.len()])) {
            return true;
        }
    }
    matches!(name, b"mke2fs" | b"mkdosfs" | b"mkntfs" | b"mkexfatfs" | b"mkswap")
}

/// Prefixes after "/dev/"; the first four need a drive letter.
const BLOCK_DEVICE_PREFIXES: [&[u8]; 17] = [
    b"sd", b"hd", b"vd", b"xvd", b"nvme", b"mmcblk", b"disk", b"rdisk", b"md", b"dm-", b"mapper/", b"loop", b"nbd", b"zd",
    b"rbd", b"root", b"block/",
];

fn contains(h: &[u8], n: &[u8]) -> bool {
    h.windows(n.len()).any(|w| w == n)
}

fn is_block_device(p: &[u8]) -> bool {
    if p.len() < 6 || p[0] != b'/' || !contains(p, b"dev") {
        return false;
    }
    // NB: Go's path.Clean works on bytes; the folded image is ASCII but for
    // the placeholder byte 0x80, which clean_path never splits.
    let s = clean_bytes(p);
    if s.len() < 6 || &s[..5] != b"/dev/" {
        return false;
    }
    let s = &s[5..];
    for (k, pre) in BLOCK_DEVICE_PREFIXES.iter().enumerate() {
        if s.len() < pre.len() || &s[..pre.len()] != *pre {
            continue;
        }
        if k < 4 {
            return s.len() > pre.len() && is_lower(s[pre.len()]);
        }
        return true;
    }
    false
}

/// path.Clean over bytes (the folded image may hold the byte 0x80).
fn clean_bytes(p: &[u8]) -> Vec<u8> {
    // Map 0x80 to a private ASCII stand-in absent from p's alphabet? The
    // image's only non-ASCII byte is 0x80: swap it for NUL (which Clean
    // treats like any non-slash byte) and back.
    let ascii: String = p.iter().map(|&c| if c == PLACEHOLDER { '\0' } else { c as char }).collect();
    gatekit::clean_path(&ascii).bytes().map(|c| if c == 0 { PLACEHOLDER } else { c }).collect()
}

/// An output redirection at b[i] == '>' onto a block device.
fn redirect_at(b: &[u8], i: usize) -> bool {
    let mut j = i + 1;
    while j < b.len() && (b[j] == b'>' || b[j] == b'|' || b[j] == b'&') {
        j += 1;
    }
    while j < b.len() && is_space(b[j]) {
        j += 1;
    }
    let mut target = Vec::new();
    while j < b.len() {
        let cl = CLASS[b[j] as usize];
        if cl & (CL_SEP | CL_BREAK) != 0 {
            break;
        }
        if cl & CL_QUOTE == 0 {
            target.push(b[j]);
        }
        j += 1;
    }
    is_block_device(&target)
}

fn word(b: &[u8], i: usize, w: &[u8]) -> bool {
    has_at(b, i, w) && boundary_at(b, i + w.len())
}

fn sql_at(b: &[u8], i: usize) -> u16 {
    if word(b, i, b"drop") {
        let mut j = match sql_gap(b, i + 4) {
            Some(j) => j,
            None => return 0,
        };
        if word(b, j, b"temporary") {
            j = match sql_gap(b, j + 9) {
                Some(j) => j,
                None => return 0,
            };
        }
        if word(b, j, b"table") || word(b, j, b"database") || word(b, j, b"schema") {
            return 1 << FAM_SQL_DROP;
        }
    } else if word(b, i, b"truncate") {
        if let Some(j) = sql_gap(b, i + 8) {
            if word(b, j, b"table") {
                return 1 << FAM_SQL_TRUNCATE;
            }
        }
    }
    0
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Skips at least one run of whitespace or SQL comments from i.
fn sql_gap(b: &[u8], mut i: usize) -> Option<usize> {
    let start = i;
    while i < b.len() {
        if is_space(b[i]) {
            i += 1;
        } else if has_at(b, i, b"/*") {
            let end = find(&b[i + 2..], b"*/")?;
            i += 2 + end + 2;
        } else if has_at(b, i, b"--") || b[i] == b'#' {
            let end = b[i..].iter().position(|&c| c == b'\n')?;
            i += end + 1;
        } else {
            if i == start {
                return None;
            }
            return Some(i);
        }
    }
    None
}

export_gate!(
    Destructive,
    r#"{"name":"destructive","version":"1.0.0","summary":"guard_destructive: denies recursive force deletes, force pushes, hard resets, SQL drops, mkfs, dd and block-device writes"}"#
);
