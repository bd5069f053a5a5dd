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

/// The bytes of x (little-endian) that are not PLAIN: below 0x20, '"',
/// '\\' or not ASCII, each marked by its high bit (the bit tricks of "Bit
/// Twiddling Hacks": hasless and haszero). A borrow can mark a byte above
/// a marked one falsely, never below: the lowest mark is exact.
fn special_mask(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let ctl = x.wrapping_sub(LO * 0x20) & !x & HI;
    let q = x ^ (LO * b'"' as u64);
    let quote = q.wrapping_sub(LO) & !q & HI;
    let e = x ^ (LO * b'\\' as u64);
    let esc = e.wrapping_sub(LO) & !e & HI;
    ctl | quote | esc | (x & HI)
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

/// The eight bytes at b[i..i + 8] as a little-endian word; i + 8 <=
/// b.len() is the caller's to ensure.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> u64 {
    debug_assert!(i + 8 <= b.len());
    // NB: unchecked: every caller has compared i + 8 with b.len() already,
    // and a bounds check a word is a compare and a branch more in Wasm.
    u64::from_le(unsafe { (b.as_ptr().add(i) as *const u64).read_unaligned() })
}

/// a == b, for the short texts a gate compares a call's with (a tool, an
/// actor, a duty): eight bytes at a time, the tail in one to three steps.
/// Why: == on slices is a call of memcmp in Wasm, a byte loop.
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// same for bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let mut i = 0;
    while i + 8 <= n {
        if word_at(a, i) != word_at(b, i) {
            return false;
        }
        i += 8;
    }
    // NB: unchecked: i + 4 (i + 2, i) <= n, the length of both.
    unsafe {
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        if i + 4 <= n {
            if (pa.add(i) as *const u32).read_unaligned() != (pb.add(i) as *const u32).read_unaligned() {
                return false;
            }
            i += 4;
        }
        if i + 2 <= n {
            if (pa.add(i) as *const u16).read_unaligned() != (pb.add(i) as *const u16).read_unaligned() {
                return false;
            }
            i += 2;
        }
        i == n || *pa.add(i) == *pb.add(i)
    }
}

/// The word of the bytes from b[i] to the end of b (fewer than eight, b
/// at least eight long), zero above them: a zero byte is a control
/// byte, which special_mask marks.
#[inline(always)]
fn tail_word(b: &[u8], i: usize) -> u64 {
    word_at(b, b.len() - 8) >> (8 * (i + 8 - b.len()))
}

/// Scans the string literal whose quote is b[i] and returns its end (one
/// past the closing quote), whether it holds escapes, and whether its body
/// is all ASCII; None when it is not closed or holds a control byte or a
/// malformed escape.
#[inline(always)]
fn scan_str(b: &[u8], i: usize) -> Option<(usize, bool, bool)> {
    let s = scan_str_packed(b, i);
    if s == 0 {
        return None;
    }
    Some(((s as u32) as usize, s & SCAN_ESCAPED != 0, s & SCAN_NOT_ASCII == 0))
}

/// scan_str's answer packed in one word, so that it is returned in a
/// register, not through the stack: the end in the low half, and these
/// two flags; 0 for None (an end is at least 2).
const SCAN_ESCAPED: u64 = 1 << 32;
const SCAN_NOT_ASCII: u64 = 1 << 33;

/// scan_str, packed. Eight bytes at a time to the first byte that is not
/// plain (most strings of a GateInput are short and have no escape); the
/// last word of the document is read back from its end. Out of line: one
/// copy of the loop serves every string the readers meet (inlined at each
/// member it was ~20 KB of each module, and no faster).
#[inline(never)]
fn scan_str_packed(b: &[u8], i: usize) -> u64 {
    let mut j = i + 1;
    let mut flags = 0u64;
    loop {
        let w = if j + 8 <= b.len() {
            word_at(b, j)
        } else if b.len() >= 8 && j < b.len() {
            tail_word(b, j)
        } else {
            return scan_str_short(b, j, flags);
        };
        let m = special_mask(w);
        if m == 0 {
            j += 8;
            continue;
        }
        j += (m.trailing_zeros() / 8) as usize;
        if j >= b.len() {
            return 0;
        }
        let c = b[j];
        if c == b'"' {
            return (j + 1) as u64 | flags;
        }
        if c == b'\\' {
            flags |= SCAN_ESCAPED;
            match escape_len(b, j) {
                0 => return 0,
                n => j += n,
            }
            continue;
        }
        if c < 0x20 {
            return 0;
        }
        flags |= SCAN_NOT_ASCII; // c >= 0x80
        j += 1;
    }
}

/// The bytes of the escape at b[j] == '\\' (0 when malformed).
#[inline(never)]
fn escape_len(b: &[u8], j: usize) -> usize {
    match b.get(j + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
        Some(b'u') if hex4(b, j + 2).is_some() => 6,
        _ => 0,
    }
}

/// scan_str_packed from b[j] in a document shorter than eight bytes, or
/// past its end: byte by byte.
#[cold]
#[inline(never)]
fn scan_str_short(b: &[u8], mut j: usize, mut flags: u64) -> u64 {
    while j < b.len() {
        let c = b[j];
        if PLAIN[c as usize] {
            j += 1;
        } else if c == b'"' {
            return (j + 1) as u64 | flags;
        } else if c == b'\\' {
            flags |= SCAN_ESCAPED;
            match escape_len(b, j) {
                0 => return 0,
                n => j += n,
            }
        } else if c < 0x20 {
            return 0;
        } else {
            flags |= SCAN_NOT_ASCII;
            j += 1;
        }
    }
    0
}

/// Closes the innermost of skip's open containers.
#[inline(always)]
fn close(kinds: &mut u64, open: &mut usize, deeper: &mut Vec<u64>) {
    *kinds >>= 1;
    *open -= 1;
    if *open % 64 == 0 && *open > 0 {
        *kinds = deeper.pop().unwrap_or(0);
    }
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, i: 0, depth: 0 }
    }

    #[inline(always)]
    pub fn ws(&mut self) {
        // NB: compact JSON has no whitespace: one compare in the usual case.
        if self.i < self.b.len() && self.b[self.i] > b' ' {
            return;
        }
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    #[inline(always)]
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
    #[inline]
    pub fn literal(&mut self, lit: &[u8]) -> bool {
        // NB: the first byte is looked at before the rest is compared (a
        // slice compare is a call of memcmp, a byte loop, in Wasm): most
        // values are not the literal asked for.
        let rest = &self.b[self.i..];
        if rest.len() < lit.len() || lit.is_empty() || rest[0] != lit[0] {
            return false;
        }
        for k in 1..lit.len() {
            if rest[k] != lit[k] {
                return false;
            }
        }
        self.i += lit.len();
        true
    }

    /// Scans the string literal at i (b[i] == '"') and returns its end (one
    /// past the closing quote), whether it holds escapes, and whether its
    /// body is all ASCII.
    #[inline(always)]
    pub fn scan_string(&mut self) -> Option<(usize, bool, bool)> {
        if self.peek() != b'"' {
            return None;
        }
        let s = scan_str(self.b, self.i)?;
        self.i = s.0;
        Some(s)
    }

    /// Reads a string value: borrowed from the document unless it holds
    /// escapes or invalid UTF-8.
    #[inline(always)]
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
    #[inline(never)]
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

    /// Skips one value and returns its raw bytes. It loops instead of
    /// recursing: a document nested 10 000 deep must not hit the host's
    /// call-depth bound (gate.stack_limit) where the Go decoder answers. The
    /// open containers' kinds are a bit stack (1: object) in one word; past
    /// 64 open containers the full words are kept in a Vec: no allocation
    /// for the usual value.
    pub fn skip(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        let mut kinds: u64 = 0;
        let mut deeper: Vec<u64> = Vec::new();
        let mut open: usize = 0;
        'value: loop {
            match self.peek() {
                b'"' => {
                    self.scan_string()?;
                }
                c @ (b'{' | b'[') => {
                    let obj = c == b'{';
                    if open % 64 == 0 && open > 0 {
                        deeper.push(kinds);
                        kinds = 0;
                    }
                    kinds = (kinds << 1) | obj as u64;
                    open += 1;
                    if self.depth + open > MAX_DEPTH {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    if self.peek() == if obj { b'}' } else { b']' } {
                        self.i += 1;
                        close(&mut kinds, &mut open, &mut deeper);
                    } else {
                        if obj {
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
                if open == 0 {
                    return Some(&self.b[start..self.i]);
                }
                let obj = kinds & 1 == 1;
                self.ws();
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.ws();
                        if obj {
                            self.member_name()?;
                        }
                        continue 'value;
                    }
                    b'}' if obj => {
                        self.i += 1;
                        close(&mut kinds, &mut open, &mut deeper);
                    }
                    b']' if !obj => {
                        self.i += 1;
                        close(&mut kinds, &mut open, &mut deeper);
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Reads a member name and its colon, leaving the reader at the value.
    #[inline(always)]
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

/// A string of the GateInput: borrowed from the document, or, when it holds
/// escapes or invalid UTF-8, decoded into the call's kept strings (keep).
/// Unlike a Cow it is a copy of two words with nothing to drop: reading a
/// member is a store.
pub type Text<'a> = &'a str;

std::thread_local! {
    /// The strings decoded for the call being read (see keep).
    static KEPT: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
}

/// Keeps s until forget_kept and lends it for as long as the document.
/// NB: sound because the kept strings are only dropped by forget_kept,
/// which Runtime::evaluate_bytes calls before it reads the next document,
/// when the previous call's Input is gone; a String's bytes do not move
/// when the String itself is moved into the list.
fn keep<'a>(s: String) -> &'a str {
    let t: &'a str = unsafe { &*(s.as_str() as *const str) };
    KEPT.with(|k| k.borrow_mut().push(s));
    t
}

/// Drops the strings kept for the previous call, and their list (whose
/// buffer may be in the arena, which the next call reuses).
fn forget_kept() {
    let old = KEPT.with(|k| std::mem::take(&mut *k.borrow_mut()));
    drop(old);
}

/// The text of a string literal's body that is not plain ASCII.
#[inline(never)]
fn decoded<'a>(body: &'a [u8], escaped: bool) -> &'a str {
    if escaped {
        return keep(decode_body(body));
    }
    match std::str::from_utf8(body) {
        Ok(s) => s,
        Err(_) => keep(lossy_string(body)),
    }
}

impl<'a> Reader<'a> {
    /// Reads a GateInput string member: a string, or null (as "").
    #[inline(never)]
    fn text_or_null(&mut self) -> Option<Text<'a>> {
        let start = self.i;
        if self.peek() == b'"' {
            let (end, escaped, ascii) = self.scan_string()?;
            let body = &self.b[start + 1..end - 1];
            if !escaped && ascii {
                // NB: ASCII bytes are UTF-8.
                return Some(unsafe { std::str::from_utf8_unchecked(body) });
            }
            return Some(decoded(body, escaped));
        }
        if self.literal(b"null") {
            return Some("");
        }
        None
    }

    /// Reads a GateInput string (not null).
    #[inline(always)]
    fn text(&mut self) -> Option<Text<'a>> {
        if self.peek() != b'"' {
            return None;
        }
        self.text_or_null()
    }
}

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
    pub kind: Text<'a>,
    pub id: Text<'a>,
}

#[derive(Default)]
pub struct Assignment<'a> {
    pub actor: Actor<'a>,
    pub duty: Text<'a>,
}

#[derive(Default)]
pub struct Context<'a> {
    pub operation_id: Text<'a>,
    pub actor: Option<Actor<'a>>,
    pub run_id: Text<'a>,
    pub agent_name: Text<'a>,
    pub tool_call_id: Text<'a>,
    pub metadata: Vec<(Text<'a>, Text<'a>)>,
    /// None when absent (outside a task).
    pub assignments: Option<Vec<Assignment<'a>>>,
}

#[derive(Default)]
pub struct Input<'a> {
    pub gate_id: Text<'a>,
    pub phase: Text<'a>,
    pub tool: Text<'a>,
    pub operation: Text<'a>,
    pub action: Text<'a>,
    /// The raw JSON of the arguments (empty when absent).
    pub arguments: &'a [u8],
    pub argument_order: Vec<Text<'a>>,
    pub cwd: Text<'a>,
    pub workspace: Text<'a>,
    pub paths: Vec<PathFact<'a>>,
    pub context: Context<'a>,
}

// The member names of GateInput's objects, known by the first sixteen bytes
// of the name packed into two words (every name is shorter): one compare a
// name instead of a chain of memcmp calls.

const fn name_word(s: &[u8], from: usize) -> u64 {
    let mut w = 0u64;
    let mut k = 0;
    while k < 8 && from + k < s.len() {
        w |= (s[from + k] as u64) << (8 * k);
        k += 1;
    }
    w
}

/// A member name as (length, first word, second word).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Name(usize, u64, u64);

const fn name(s: &str) -> Name {
    let b = s.as_bytes();
    Name(b.len(), name_word(b, 0), name_word(b, 8))
}

const N_GATE_ID: Name = name("gate_id");
const N_PHASE: Name = name("phase");
const N_TOOL: Name = name("tool");
const N_OPERATION: Name = name("operation");
const N_ACTION: Name = name("action");
const N_CWD: Name = name("cwd");
const N_WORKSPACE: Name = name("workspace");
const N_ARGUMENTS: Name = name("arguments");
const N_ARGUMENT_ORDER: Name = name("argument_order");
const N_PATHS: Name = name("paths");
const N_CONTEXT: Name = name("context");
const N_OPERATION_ID: Name = name("operation_id");
const N_RUN_ID: Name = name("run_id");
const N_AGENT_NAME: Name = name("agent_name");
const N_TOOL_CALL_ID: Name = name("tool_call_id");
const N_ACTOR: Name = name("actor");
const N_METADATA: Name = name("metadata");
const N_ASSIGNMENTS: Name = name("assignments");
const N_KIND: Name = name("kind");
const N_ID: Name = name("id");
const N_DUTY: Name = name("duty");
const N_ARG: Name = name("arg");
const N_RAW: Name = name("raw");
const N_RESOLVED: Name = name("resolved");
const N_EXISTS: Name = name("exists");
const N_LINK: Name = name("link");
const N_NEAREST_EXISTING: Name = name("nearest_existing");

/// A name that is none of the above (too long to be one).
const N_OTHER: Name = Name(usize::MAX, 0, 0);

fn name_of(k: &[u8]) -> Name {
    if k.len() > 16 {
        return N_OTHER;
    }
    Name(k.len(), name_word(k, 0), name_word(k, 8))
}

/// name_of for the name body b[s..e]: when sixteen bytes can be read from
/// s, as two words masked to the name's length.
#[inline]
fn name_at(b: &[u8], s: usize, e: usize) -> Name {
    let n = e - s;
    if n > 16 {
        return N_OTHER;
    }
    if s + 16 > b.len() {
        return name_of(&b[s..e]);
    }
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[s..s + 8]);
    let w0 = u64::from_le_bytes(w);
    w.copy_from_slice(&b[s + 8..s + 16]);
    let w1 = u64::from_le_bytes(w);
    let mask = |k: usize| if k >= 8 { u64::MAX } else { (1u64 << (8 * k)) - 1 };
    Name(n, w0 & mask(n), if n > 8 { w1 & mask(n - 8) } else { 0 })
}

impl<'a> Reader<'a> {
    /// Reads a member name (decoded when it holds escapes) and its colon,
    /// leaving the reader at the value.
    fn member(&mut self) -> Option<Name> {
        let start = self.i;
        let (end, escaped, _) = self.scan_string()?;
        let body = &self.b[start + 1..end - 1];
        let n = if escaped { name_of(decode_body(body).as_bytes()) } else { name_at(self.b, start + 1, end - 1) };
        self.ws();
        if self.peek() != b':' {
            return None;
        }
        self.i += 1;
        self.ws();
        Some(n)
    }

    /// Opens the container at the reader (open is '{' or '['): Some(true)
    /// when a member or element follows, at it; Some(false) when it is
    /// empty (and closed).
    pub fn open(&mut self, open: u8) -> Option<bool> {
        if self.peek() != open {
            return None;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek() == open + 2 {
            // NB: '{' + 2 == '}', '[' + 2 == ']'.
            self.i += 1;
            self.depth -= 1;
            return Some(false);
        }
        Some(true)
    }

    /// After a member or element: Some(true) when another follows (the
    /// reader at it), Some(false) at the container's close (consumed).
    pub fn next(&mut self, close: u8) -> Option<bool> {
        self.ws();
        match self.peek() {
            b',' => {
                self.i += 1;
                self.ws();
                Some(true)
            }
            c if c == close => {
                self.i += 1;
                self.depth -= 1;
                Some(false)
            }
            _ => None,
        }
    }
}

/// Reads an actor object into a (null: false, a untouched).
#[inline(never)]
fn read_actor<'a>(r: &mut Reader<'a>, a: &mut Actor<'a>) -> Option<bool> {
    if r.literal(b"null") {
        return Some(false);
    }
    let mut more = r.open(b'{')?;
    while more {
        match r.member()? {
            N_KIND => a.kind = r.text_or_null()?,
            N_ID => a.id = r.text_or_null()?,
            _ => {
                r.skip()?;
            }
        }
        more = r.next(b'}')?;
    }
    Some(true)
}

#[inline(never)]
fn read_metadata<'a>(r: &mut Reader<'a>, c: &mut Context<'a>) -> Option<()> {
    if r.literal(b"null") {
        return Some(());
    }
    let mut more = r.open(b'{')?;
    while more {
        let k = r.text()?;
        r.ws();
        if r.peek() != b':' {
            return None;
        }
        r.i += 1;
        r.ws();
        let v = r.text_or_null()?;
        match c.metadata.iter_mut().find(|(mk, _)| *mk == k) {
            Some(m) => m.1 = v,
            None => c.metadata.push((k, v)),
        }
        more = r.next(b'}')?;
    }
    Some(())
}

#[inline(never)]
fn read_assignments<'a>(r: &mut Reader<'a>) -> Option<Option<Vec<Assignment<'a>>>> {
    if r.literal(b"null") {
        return Some(None);
    }
    let mut list: Vec<Assignment<'a>> = Vec::new();
    let mut more = r.open(b'[')?;
    while more {
        list.push(Assignment::default());
        let a = list.last_mut()?;
        if !r.literal(b"null") {
            let mut members = r.open(b'{')?;
            while members {
                match r.member()? {
                    N_ACTOR => {
                        if !read_actor(r, &mut a.actor)? {
                            a.actor = Actor::default();
                        }
                    }
                    N_DUTY => a.duty = r.text_or_null()?,
                    _ => {
                        r.skip()?;
                    }
                }
                members = r.next(b'}')?;
            }
        }
        more = r.next(b']')?;
    }
    Some(Some(list))
}

#[inline(never)]
fn read_context<'a>(r: &mut Reader<'a>, c: &mut Context<'a>) -> Option<()> {
    if r.literal(b"null") {
        return Some(());
    }
    let mut more = r.open(b'{')?;
    while more {
        match r.member()? {
            N_OPERATION_ID => c.operation_id = r.text_or_null()?,
            N_RUN_ID => c.run_id = r.text_or_null()?,
            N_AGENT_NAME => c.agent_name = r.text_or_null()?,
            N_TOOL_CALL_ID => c.tool_call_id = r.text_or_null()?,
            N_ACTOR => {
                let mut a = Actor::default();
                c.actor = if read_actor(r, &mut a)? { Some(a) } else { None };
            }
            N_METADATA => read_metadata(r, c)?,
            N_ASSIGNMENTS => c.assignments = read_assignments(r)?,
            _ => {
                r.skip()?;
            }
        }
        more = r.next(b'}')?;
    }
    Some(())
}

#[inline(never)]
fn read_path_fact<'a>(r: &mut Reader<'a>, p: &mut PathFact<'a>) -> Option<()> {
    if r.literal(b"null") {
        return Some(());
    }
    let mut more = r.open(b'{')?;
    while more {
        match r.member()? {
            N_ARG => p.arg = Cow::Borrowed(r.text_or_null()?),
            N_RAW => p.raw = Cow::Borrowed(r.text_or_null()?),
            N_RESOLVED => p.resolved = Cow::Borrowed(r.text_or_null()?),
            N_KIND => p.kind = Cow::Borrowed(r.text_or_null()?),
            N_NEAREST_EXISTING => p.nearest_existing = Cow::Borrowed(r.text_or_null()?),
            N_EXISTS => {
                if let Some(v) = r.boolean()? {
                    p.exists = v;
                }
            }
            N_LINK => {
                if let Some(v) = r.boolean()? {
                    p.link = v;
                }
            }
            _ => {
                r.skip()?;
            }
        }
        more = r.next(b'}')?;
    }
    Some(())
}

#[inline(never)]
fn read_paths<'a>(r: &mut Reader<'a>, paths: &mut Vec<PathFact<'a>>) -> Option<()> {
    paths.clear();
    if r.literal(b"null") {
        return Some(());
    }
    let mut more = r.open(b'[')?;
    while more {
        paths.push(PathFact::default());
        read_path_fact(r, paths.last_mut()?)?;
        more = r.next(b']')?;
    }
    Some(())
}

#[inline(never)]
fn read_argument_order<'a>(r: &mut Reader<'a>, order: &mut Vec<Text<'a>>) -> Option<()> {
    order.clear();
    if r.literal(b"null") {
        return Some(());
    }
    let mut more = r.open(b'[')?;
    while more {
        order.push(r.text_or_null()?);
        more = r.next(b']')?;
    }
    Some(())
}

// ---------------------------------------------------------------------------
// The GateInput as the host writes it.
//
// Why: the host writes every GateInput the same way (abi.AppendGateInput:
// compact, members in one order, each optional member left out when empty),
// and reading it member by member (read_members) costs a name to scan, to
// pack and to dispatch, whitespace checks, and a call or more a member: in
// Wasm under the host's instrumentation that was ~1.4 µs a call for a
// 440-byte input, more than twice what only validating the same bytes costs.
// read_canonical expects that layout: the fixed text between the values
// (`,"tool":`, `},"duty":`, ...) is compared a few bytes at a time against
// constants, and only the values are scanned. Every byte is still checked:
// the fixed text is compared, strings are scanned and decoded as
// Reader::string does, and the arguments are validated by Reader::skip.
//
// read_canonical only ever says yes: on the first byte that is not the
// host's layout (whitespace, another order, a null, an unknown member, a
// duplicate, a malformed value, ...) it gives up and read_members reads the
// document from the start; its answer stands. When read_canonical takes a
// document, it holds each member once, under its plain name, so both
// readers give the same Input (plugins/builtin/regression_test.go holds the
// modules to an earlier build of read_members alone).

/// A fixed text of up to 24 bytes as three little-endian words, each with
/// the mask of the text's bytes in it.
struct Lit {
    len: usize,
    w: [u64; 3],
    m: [u64; 3],
}

const fn lit(s: &str) -> Lit {
    let b = s.as_bytes();
    assert!(b.len() <= 24);
    let mut m = [0u64; 3];
    let mut k = 0;
    while k < 3 {
        let n = if b.len() > 8 * k { b.len() - 8 * k } else { 0 };
        m[k] = if n >= 8 { u64::MAX } else { (1u64 << (8 * n)) - 1 };
        k += 1;
    }
    Lit { len: b.len(), w: [name_word(b, 0), name_word(b, 8), name_word(b, 16)], m }
}

// NB: statics, not consts: a Lit is passed by its address, not copied to
// the stack at each use.
static L_START: Lit = lit("{\"abi_version\":");
static L_GATE_ID: Lit = lit(",\"gate_id\":");
static L_PHASE: Lit = lit(",\"phase\":");
static L_TOOL: Lit = lit(",\"tool\":");
static L_OPERATION: Lit = lit(",\"operation\":");
static L_ACTION: Lit = lit(",\"action\":");
static L_ARGUMENTS: Lit = lit(",\"arguments\":");
static L_ONE_COMMAND: Lit = lit("{\"command\":");
static L_ARGUMENT_ORDER: Lit = lit(",\"argument_order\":[");
static L_CWD: Lit = lit(",\"cwd\":");
static L_WORKSPACE: Lit = lit(",\"workspace\":");
static L_PATHS: Lit = lit(",\"paths\":[");
static L_FACT_ARG: Lit = lit("{\"arg\":");
static L_FACT_RAW: Lit = lit(",\"raw\":");
static L_FACT_RESOLVED: Lit = lit(",\"resolved\":");
static L_FACT_EXISTS: Lit = lit(",\"exists\":");
static L_FACT_KIND: Lit = lit(",\"kind\":");
static L_FACT_NEAREST: Lit = lit(",\"nearest_existing\":");
static L_FACT_LINK: Lit = lit(",\"link\":true}");
static L_CONTEXT: Lit = lit(",\"context\":{");
static L_OPERATION_ID: Lit = lit("\"operation_id\":");
static L_ACTOR: Lit = lit("\"actor\":{\"kind\":");
static L_ID: Lit = lit(",\"id\":");
static L_RUN_ID: Lit = lit("\"run_id\":");
static L_AGENT_NAME: Lit = lit("\"agent_name\":");
static L_TOOL_CALL_ID: Lit = lit("\"tool_call_id\":");
static L_METADATA: Lit = lit("\"metadata\":{");
static L_ASSIGNMENTS: Lit = lit("\"assignments\":[");
static L_ASSIGNMENT: Lit = lit("{\"actor\":{\"kind\":");
static L_DUTY: Lit = lit("},\"duty\":");

/// l at b[i], compared byte by byte (near the end of a document, where
/// the words l spans are not all in it).
#[inline(never)]
#[cold]
fn lit_at(b: &[u8], i: usize, l: &Lit) -> bool {
    if i + l.len > b.len() {
        return false;
    }
    for k in 0..l.len {
        if b[i + k] as u64 != (l.w[k / 8] >> (8 * (k % 8))) & 0xFF {
            return false;
        }
    }
    true
}

/// A cursor over a document laid out as the host writes a GateInput. It
/// is a pair of locals: no function it is lent to is out of line, so that
/// the position stays in a register (a Reader lent to a call lives in
/// memory, and each step of it is a load and a store).
struct Canonical<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Canonical<'a> {
    /// Consumes l when the document goes on with it.
    #[inline(always)]
    fn at(&mut self, l: &'static Lit) -> bool {
        let (b, i) = (self.b, self.i);
        let words = (l.len + 7) / 8;
        if i + 8 * words <= b.len() {
            if word_at(b, i) & l.m[0] != l.w[0] {
                return false;
            }
            if words > 1 && word_at(b, i + 8) & l.m[1] != l.w[1] {
                return false;
            }
            if words > 2 && word_at(b, i + 16) & l.m[2] != l.w[2] {
                return false;
            }
        } else if !lit_at(b, i, l) {
            return false;
        }
        self.i = i + l.len;
        true
    }

    /// Consumes the byte c when it is next.
    #[inline(always)]
    fn byte(&mut self, c: u8) -> bool {
        if self.i < self.b.len() && self.b[self.i] == c {
            self.i += 1;
            return true;
        }
        false
    }

    /// A string value (not null: the host writes "" for an empty member it
    /// does not leave out) as Reader::text_or_null reads it.
    #[inline(always)]
    fn text(&mut self) -> Option<Text<'a>> {
        let (b, i) = (self.b, self.i);
        if i >= b.len() || b[i] != b'"' {
            return None;
        }
        let (end, escaped, ascii) = scan_str(b, i)?;
        self.i = end;
        // NB: i + 1 <= end - 1 <= b.len(): scan_str found the closing quote.
        let body = unsafe { b.get_unchecked(i + 1..end - 1) };
        if !escaped && ascii {
            // NB: ASCII bytes are UTF-8.
            return Some(unsafe { std::str::from_utf8_unchecked(body) });
        }
        Some(decoded(body, escaped))
    }

    /// Consumes a string value (as skip does: any valid string).
    #[inline(always)]
    fn text_end(&mut self) -> bool {
        if self.i >= self.b.len() || self.b[self.i] != b'"' {
            return false;
        }
        match scan_str(self.b, self.i) {
            Some((end, _, _)) => {
                self.i = end;
                true
            }
            None => false,
        }
    }

    /// The member l, when it is next, into *to.
    #[inline(always)]
    fn opt_text(&mut self, l: &'static Lit, to: &mut Text<'a>) -> Option<()> {
        if self.at(l) {
            *to = self.text()?;
        }
        Some(())
    }

    /// Consumes the member name l of an object whose members the host
    /// writes each after a comma but the first; *first tells whether one
    /// was read.
    #[inline(always)]
    fn member(&mut self, first: &mut bool, l: &'static Lit) -> bool {
        let save = self.i;
        if !*first && !self.byte(b',') {
            return false;
        }
        if self.at(l) {
            *first = false;
            return true;
        }
        self.i = save;
        false
    }

    fn input(&mut self, in_: &mut Input<'a>) -> Option<()> {
        if !self.at(&L_START) {
            return None;
        }
        // abi_version: one digit in the host's documents.
        let (b, i) = (self.b, self.i);
        if i + 1 < b.len() && b[i].wrapping_sub(b'0') < 10 && b[i + 1] == b',' {
            self.i = i + 1;
        } else {
            let mut r = Reader::new(b);
            r.i = i;
            r.number()?;
            self.i = r.i;
        }
        if !self.at(&L_GATE_ID) {
            return None;
        }
        in_.gate_id = self.text()?;
        if !self.at(&L_PHASE) {
            return None;
        }
        in_.phase = self.text()?;
        if !self.at(&L_TOOL) {
            return None;
        }
        in_.tool = self.text()?;
        self.opt_text(&L_OPERATION, &mut in_.operation)?;
        self.opt_text(&L_ACTION, &mut in_.action)?;
        if !self.at(&L_ARGUMENTS) {
            return None;
        }
        let start = self.i;
        // NB: the arguments of one command, {"command":"<text>"}, as skip
        // would read them (one string member), without its walk.
        if self.at(&L_ONE_COMMAND) && self.text_end() && self.byte(b'}') {
            in_.arguments = &self.b[start..self.i];
        } else {
            // NB: read_members skips the arguments from inside the
            // document's object: the same depth bound.
            let mut r = Reader { b: self.b, i: start, depth: 1 };
            in_.arguments = r.skip()?;
            self.i = r.i;
        }
        if self.at(&L_ARGUMENT_ORDER) {
            in_.argument_order = Vec::with_capacity(4);
            loop {
                in_.argument_order.push(self.text()?);
                if !self.byte(b',') {
                    break;
                }
            }
            if !self.byte(b']') {
                return None;
            }
        }
        self.opt_text(&L_CWD, &mut in_.cwd)?;
        self.opt_text(&L_WORKSPACE, &mut in_.workspace)?;
        if self.at(&L_PATHS) {
            loop {
                in_.paths.push(PathFact::default());
                self.i = after(canonical_path_fact(self.b, self.i, in_.paths.last_mut()?))?;
                if !self.byte(b',') {
                    break;
                }
            }
            if !self.byte(b']') {
                return None;
            }
        }
        if !self.at(&L_CONTEXT) {
            return None;
        }
        self.context(&mut in_.context)?;
        if self.byte(b'}') && self.i == self.b.len() {
            return Some(());
        }
        None
    }

    /// The members of the context object after its '{', and its '}', in
    /// the host's order, each at most once.
    #[inline(always)]
    fn context(&mut self, c: &mut Context<'a>) -> Option<()> {
        let mut first = true;
        if self.member(&mut first, &L_OPERATION_ID) {
            c.operation_id = self.text()?;
        }
        if self.member(&mut first, &L_ACTOR) {
            let kind = self.text()?;
            if !self.at(&L_ID) {
                return None;
            }
            let id = self.text()?;
            if !self.byte(b'}') {
                return None;
            }
            c.actor = Some(Actor { kind, id });
        }
        if self.member(&mut first, &L_RUN_ID) {
            c.run_id = self.text()?;
        }
        if self.member(&mut first, &L_AGENT_NAME) {
            c.agent_name = self.text()?;
        }
        if self.member(&mut first, &L_TOOL_CALL_ID) {
            c.tool_call_id = self.text()?;
        }
        if self.member(&mut first, &L_METADATA) {
            self.i = after(canonical_metadata(self.b, self.i, c))?;
        }
        if self.member(&mut first, &L_ASSIGNMENTS) {
            self.i = after(canonical_assignments(self.b, self.i, c))?;
        }
        if self.byte(b'}') {
            return Some(());
        }
        None
    }
}

/// The position an out-of-line step of read_canonical returns: 0 when it
/// failed (no step ends at the document's start). Why not an Option: an
/// Option<usize> is returned through the stack in Wasm.
#[inline(always)]
fn after(i: usize) -> Option<usize> {
    if i == 0 {
        None
    } else {
        Some(i)
    }
}

/// A path fact at b[i] into *p; the position after it (0: not the
/// host's layout).
#[inline(never)]
fn canonical_path_fact<'a>(b: &'a [u8], i: usize, p: &mut PathFact<'a>) -> usize {
    canonical_path_fact_at(b, i, p).unwrap_or(0)
}

#[inline(always)]
fn canonical_path_fact_at<'a>(b: &'a [u8], i: usize, p: &mut PathFact<'a>) -> Option<usize> {
    let mut c = Canonical { b, i };
    if !c.at(&L_FACT_ARG) {
        return None;
    }
    p.arg = Cow::Borrowed(c.text()?);
    if !c.at(&L_FACT_RAW) {
        return None;
    }
    p.raw = Cow::Borrowed(c.text()?);
    if !c.at(&L_FACT_RESOLVED) {
        return None;
    }
    p.resolved = Cow::Borrowed(c.text()?);
    if !c.at(&L_FACT_EXISTS) {
        return None;
    }
    let mut r = Reader { b, i: c.i, depth: 0 };
    p.exists = r.boolean()??;
    c.i = r.i;
    if !c.at(&L_FACT_KIND) {
        return None;
    }
    p.kind = Cow::Borrowed(c.text()?);
    if !c.at(&L_FACT_NEAREST) {
        return None;
    }
    p.nearest_existing = Cow::Borrowed(c.text()?);
    if c.at(&L_FACT_LINK) {
        p.link = true;
        return Some(c.i);
    }
    if !c.byte(b'}') {
        return None;
    }
    Some(c.i)
}

/// The metadata object's members after its '{', and its '}'; the position
/// after it (0: not the host's layout).
#[inline(never)]
fn canonical_metadata<'a>(b: &'a [u8], i: usize, ctx: &mut Context<'a>) -> usize {
    canonical_metadata_at(b, i, ctx).unwrap_or(0)
}

#[inline(always)]
fn canonical_metadata_at<'a>(b: &'a [u8], i: usize, ctx: &mut Context<'a>) -> Option<usize> {
    let mut c = Canonical { b, i };
    if c.byte(b'}') {
        return Some(c.i);
    }
    loop {
        let k = c.text()?;
        if !c.byte(b':') {
            return None;
        }
        let v = c.text()?;
        // NB: the host writes each key once, but a key may be spelt
        // twice (escaped): the last value wins, in the first's place.
        match ctx.metadata.iter_mut().find(|(mk, _)| *mk == k) {
            Some(m) => m.1 = v,
            None => ctx.metadata.push((k, v)),
        }
        if !c.byte(b',') {
            break;
        }
    }
    if c.byte(b'}') {
        return Some(c.i);
    }
    None
}

/// The assignments array's elements after its '[', and its ']'; the
/// position after it (0: not the host's layout).
#[inline(never)]
fn canonical_assignments<'a>(b: &'a [u8], i: usize, ctx: &mut Context<'a>) -> usize {
    canonical_assignments_at(b, i, ctx).unwrap_or(0)
}

#[inline(always)]
fn canonical_assignments_at<'a>(b: &'a [u8], i: usize, ctx: &mut Context<'a>) -> Option<usize> {
    let mut c = Canonical { b, i };
    let mut list: Vec<Assignment<'a>> = Vec::new();
    if !c.byte(b']') {
        list = Vec::with_capacity(4);
        loop {
            if !c.at(&L_ASSIGNMENT) {
                return None;
            }
            let kind = c.text()?;
            if !c.at(&L_ID) {
                return None;
            }
            let id = c.text()?;
            if !c.at(&L_DUTY) {
                return None;
            }
            let duty = c.text()?;
            if !c.byte(b'}') {
                return None;
            }
            list.push(Assignment { actor: Actor { kind, id }, duty });
            if !c.byte(b',') {
                break;
            }
        }
        if !c.byte(b']') {
            return None;
        }
    }
    ctx.assignments = Some(list);
    Some(c.i)
}

/// Reads b into in_ (a default Input) when it is laid out as the host
/// writes a GateInput; None otherwise (then in_ is not to be used).
fn read_canonical<'a>(b: &'a [u8], in_: &mut Input<'a>) -> Option<()> {
    Canonical { b, i: 0 }.input(in_)
}

impl<'a> Input<'a> {
    /// Decodes a GateInput document; None when it is not one. Members are
    /// read in one loop a object (no closure: LLVM inlined the closures of
    /// Reader::object into one function too large for wazero to compile
    /// well), their names compared as two words, and a string is borrowed
    /// from the document unless it holds escapes or invalid UTF-8.
    pub fn parse(b: &'a [u8]) -> Option<Input<'a>> {
        let mut in_ = Input::default();
        if Input::read(b, &mut in_) {
            Some(in_)
        } else {
            None
        }
    }

    /// parse into in_ (a default Input), false when b is not a GateInput.
    /// NB: in place: an Input is a few hundred bytes, and a move of it is
    /// a memcpy call in Wasm.
    pub fn read(b: &'a [u8], in_: &mut Input<'a>) -> bool {
        if read_canonical(b, in_).is_some() {
            return true;
        }
        // NB: the document is not laid out as the host writes it: the
        // member reader decides, from a fresh Input.
        *in_ = Input::default();
        Input::read_members(b, in_).is_some()
    }

    #[inline(never)]
    fn read_members(b: &'a [u8], in_: &mut Input<'a>) -> Option<()> {
        let mut r = Reader::new(b);
        r.ws();
        if r.literal(b"null") {
            return if r.at_end() { Some(()) } else { None };
        }
        let mut more = r.open(b'{')?;
        while more {
            match r.member()? {
                N_GATE_ID => in_.gate_id = r.text_or_null()?,
                N_PHASE => in_.phase = r.text_or_null()?,
                N_TOOL => in_.tool = r.text_or_null()?,
                N_OPERATION => in_.operation = r.text_or_null()?,
                N_ACTION => in_.action = r.text_or_null()?,
                N_CWD => in_.cwd = r.text_or_null()?,
                N_WORKSPACE => in_.workspace = r.text_or_null()?,
                N_ARGUMENTS => in_.arguments = r.skip()?,
                N_ARGUMENT_ORDER => read_argument_order(&mut r, &mut in_.argument_order)?,
                N_PATHS => read_paths(&mut r, &mut in_.paths)?,
                N_CONTEXT => read_context(&mut r, &mut in_.context)?,
                _ => {
                    r.skip()?;
                }
            }
            more = r.next(b'}')?;
        }
        if r.at_end() {
            Some(())
        } else {
            None
        }
    }
}

/// The command of arguments the host wrote for one plain command:
/// `{"command":"<text>"}`, compact, the text plain ASCII (no escape); None
/// for any other arguments, which a gate then reads in full. Why: it is
/// the usual call of a shell tool, and permission and destructive both
/// read its command (one string scan instead of an object's walk).
pub fn plain_command(raw: &[u8]) -> Option<&str> {
    const ONE: &[u8] = b"{\"command\":\"";
    if raw.len() > ONE.len() + 1 && same_bytes(&raw[..ONE.len()], ONE) && raw[raw.len() - 1] == b'}' {
        if let Some((end, false, true)) = scan_str(raw, ONE.len() - 1) {
            if end == raw.len() - 1 {
                // NB: ASCII bytes are UTF-8.
                return Some(unsafe { std::str::from_utf8_unchecked(&raw[ONE.len()..end - 1]) });
            }
        }
    }
    None
}

// ---------------------------------------------------------------------------
// GateOutput (abi/README.md §5).

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Output {
    pub decision: &'static str,
    pub reason_code: &'static str,
    pub detail: String,
    pub message: String,
    pub matched_rule: String,
    pub deny_message: String,
}

pub const ALLOW: &str = "allow";
pub const DENY: &str = "deny";
pub const REQUIRE_APPROVAL: &str = "require_approval";

impl Output {
    pub fn new(decision: &'static str, reason_code: &'static str) -> Output {
        Output { decision, reason_code, ..Output::default() }
    }
    pub fn allow(reason_code: &'static str) -> Output {
        Output::new(ALLOW, reason_code)
    }
    pub fn deny(reason_code: &'static str) -> Output {
        Output::new(DENY, reason_code)
    }

    /// The GateOutput JSON, for an answer a gate encodes once (Answer).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }

    /// Appends the GateOutput JSON, in abi.AppendGateOutput's field order.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        let fields = [
            (&b",\"detail\":"[..], &self.detail),
            (&b",\"message\":"[..], &self.message),
            (&b",\"matched_rule\":"[..], &self.matched_rule),
            (&b",\"deny_message\":"[..], &self.deny_message),
        ];
        // NB: room for the whole answer when nothing needs escaping, so
        // that the appends below do not grow the buffer one by one.
        let mut room = 64 + self.reason_code.len();
        for (_, v) in fields {
            room += 20 + v.len();
        }
        out.reserve(room);
        out.extend_from_slice(b"{\"decision\":");
        write_string(out, self.decision);
        out.extend_from_slice(b",\"reason_code\":");
        write_string(out, self.reason_code);
        for (name, v) in fields {
            if !v.is_empty() {
                out.extend_from_slice(name);
                write_string(out, v);
            }
        }
        out.push(b'}');
    }
}

/// A gate's answer to one call: an Output to encode, or a GateOutput
/// encoded once (Output::encode, at configuration), which the runtime
/// copies as it is. Why: a gate's usual answer is the same text call after
/// call (an allow and its reason code, or the rule that allowed it), and
/// building and encoding it was a tenth of a call (docs/performance.md).
pub enum Answer<'g> {
    Out(Output),
    Encoded(&'g [u8]),
}

impl From<Output> for Answer<'_> {
    fn from(o: Output) -> Self {
        Answer::Out(o)
    }
}

/// The bytes of x (little-endian) that a JSON string must escape: below
/// 0x20, '"' and '\\', each marked by its high bit; as special_mask, only
/// the lowest mark is exact.
#[inline(always)]
fn escape_mask(x: u64) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let ctl = x.wrapping_sub(LO * 0x20) & !x & HI;
    let q = x ^ (LO * b'"' as u64);
    let quote = q.wrapping_sub(LO) & !q & HI;
    let e = x ^ (LO * b'\\' as u64);
    let esc = e.wrapping_sub(LO) & !e & HI;
    ctl | quote | esc
}

/// Appends s as a JSON string: quotes, backslashes and control characters
/// escaped. The runs between them are appended whole (found eight bytes
/// at a time): most texts of an answer have nothing to escape.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = s.as_bytes();
    out.push(b'"');
    let mut run = 0; // the start of the bytes not yet appended
    let mut i = 0;
    loop {
        // To the next byte to escape (the lowest mark is exact), or the end.
        loop {
            if i + 8 <= b.len() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&b[i..i + 8]);
                let m = escape_mask(u64::from_le_bytes(w));
                if m == 0 {
                    i += 8;
                    continue;
                }
                i += (m.trailing_zeros() / 8) as usize;
                break;
            }
            while i < b.len() && !matches!(b[i], 0..=0x1f | b'"' | b'\\') {
                i += 1;
            }
            break;
        }
        out.extend_from_slice(&b[run..i]);
        if i == b.len() {
            break;
        }
        match b[i] {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            c => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
        }
        i += 1;
        run = i;
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
    fn evaluate(&self, input: &Input) -> Answer<'_>;
}

// ---------------------------------------------------------------------------
// The per-call arena.
//
// Why: a call allocates a few dozen small blocks (decoded strings, lists of
// the input, the Output's texts, formatted messages) and frees them all when
// it returns; wasi-libc's dlmalloc spends more on that than the gate's logic
// does. While a call is being decided, allocations are carved from a fixed
// arena by a bump pointer and freeing one is a no-op (the last block is
// given back, so that a growing Vec extends in place); the arena is emptied
// when the call has been answered. What does not fit, and every allocation
// outside a call (the configuration, the module's input and output
// buffers), goes to the system allocator. Nothing allocated during a call
// may outlive it: Runtime::evaluate leaves arena mode before it writes the
// answer into its own buffer.

#[cfg(target_arch = "wasm32")]
mod arena {
    use std::alloc::{GlobalAlloc, Layout, System};

    const SIZE: usize = 64 << 10;

    #[repr(C, align(16))]
    struct Block([u8; SIZE]);

    static mut BLOCK: Block = Block([0; SIZE]);
    static mut ON: bool = false;
    static mut TOP: usize = 0;

    fn base() -> usize {
        unsafe { BLOCK.0.as_ptr() as usize }
    }

    fn inside(p: *mut u8) -> bool {
        (p as usize).wrapping_sub(base()) < SIZE
    }

    /// Starts a call: allocations come from the (empty) arena.
    pub fn begin() {
        unsafe {
            TOP = 0;
            ON = true;
        }
    }

    /// Ends arena mode; the blocks stay readable until the next begin.
    pub fn end() {
        unsafe { ON = false }
    }

    pub struct Arena;

    unsafe impl GlobalAlloc for Arena {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            if ON {
                let start = (TOP + l.align() - 1) & !(l.align() - 1);
                if start <= SIZE && l.size() <= SIZE - start {
                    TOP = start + l.size();
                    return (base() + start) as *mut u8;
                }
            }
            System.alloc(l)
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            if inside(p) {
                if p as usize - base() + l.size() == TOP {
                    TOP = p as usize - base();
                }
                return;
            }
            System.dealloc(p, l)
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
            if !inside(p) {
                return System.realloc(p, l, new_size);
            }
            let off = p as usize - base();
            if ON && off + l.size() == TOP && new_size <= SIZE - off {
                TOP = off + new_size;
                return p;
            }
            let q = self.alloc(Layout::from_size_align_unchecked(new_size, l.align()));
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                self.dealloc(p, l);
            }
            q
        }
    }
}

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static GATEKIT_ALLOC: arena::Arena = arena::Arena;

#[cfg(target_arch = "wasm32")]
fn arena_begin() {
    arena::begin()
}
#[cfg(target_arch = "wasm32")]
fn arena_end() {
    arena::end()
}
#[cfg(not(target_arch = "wasm32"))]
fn arena_begin() {}
#[cfg(not(target_arch = "wasm32"))]
fn arena_end() {}

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
        forget_kept();
        arena_begin();
        let mut in_ = Input::default();
        let v = match self.gate.as_ref() {
            Some(g) if Input::read(input, &mut in_) => g.evaluate(&in_),
            _ => Answer::Out(Output::deny("sdk.bad_input")),
        };
        // NB: the answer buffer outlives the call: it must not grow into
        // the arena.
        arena_end();
        self.out.clear();
        match v {
            Answer::Out(o) => o.write_json(&mut self.out),
            Answer::Encoded(b) => self.out.extend_from_slice(b),
        }
        &self.out
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

// ---------------------------------------------------------------------------
// Python text (the ports of LionAGI and AgentLane quote with repr()).

include!("unitables.rs");

/// Go's unicode.IsPrint.
pub fn is_print(r: u32) -> bool {
    if r < 0x80 {
        return (0x20..0x7f).contains(&r);
    }
    PRINT_RANGES
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

/// The lower-case ASCII letter in r's simple case-folding orbit (Go's
/// unicode.SimpleFold), if any.
pub fn ascii_fold(r: u32) -> Option<u8> {
    ASCII_FOLDS.iter().find(|(x, _)| *x == r).map(|(_, c)| *c)
}

/// Python's repr() of a str.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut b = String::with_capacity(s.len() + 2);
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
        } else if ch == ' ' || (is_print(r) && r != RUNE_ERROR) {
            b.push(ch);
        } else if r < 0x100 {
            b.push_str(&format!("\\x{:02x}", r));
        } else if r < 0x10000 {
            b.push_str(&format!("\\u{:04x}", r));
        } else {
            b.push_str(&format!("\\U{:08x}", r));
        }
    }
    b.push(quote);
    b
}

// ---------------------------------------------------------------------------
// fnmatch.fnmatchcase (plugins/internal/fnmatch): CPython's translate
// followed by the re module's reading of sets.

#[derive(Clone, Debug)]
enum Tok {
    Lit(char),
    Any,
    Class(Box<CharClass>),
    Star,
}

#[derive(Clone, Debug, Default)]
struct CharClass {
    negate: bool,
    runes: Vec<char>,
    ranges: Vec<(char, char)>,
}

impl CharClass {
    fn contains(&self, r: char) -> bool {
        let hit = self.runes.contains(&r) || self.ranges.iter().any(|&(lo, hi)| lo <= r && r <= hi);
        hit != self.negate
    }
}

/// A compiled fnmatch pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    toks: Vec<Tok>,
    never: bool,
    literal: Option<String>,
    /// The literal text before the one star of a pattern that is only
    /// that ("ls *", a rule's usual shape): the pattern matches a text
    /// that starts with it.
    prefix: Option<String>,
}

impl Pattern {
    pub fn compile(pattern: &str) -> Pattern {
        let pat: Vec<char> = pattern.chars().collect();
        let mut p = Pattern { toks: Vec::new(), never: false, literal: None, prefix: None };
        let n = pat.len();
        let mut i = 0;
        while i < n {
            let c = pat[i];
            i += 1;
            match c {
                '*' => {
                    if !matches!(p.toks.last(), Some(Tok::Star)) {
                        p.toks.push(Tok::Star);
                    }
                }
                '?' => p.toks.push(Tok::Any),
                '[' => match compile_set(&pat, i) {
                    None => p.toks.push(Tok::Lit('[')),
                    Some((tok, next)) => {
                        i = next;
                        match tok {
                            None => p.never = true,
                            Some(t) => p.toks.push(t),
                        }
                    }
                },
                _ => p.toks.push(Tok::Lit(c)),
            }
        }
        if p.toks.iter().all(|t| matches!(t, Tok::Lit(_))) {
            p.literal = Some(pattern.to_string());
        }
        if let Some((Tok::Star, lits)) = p.toks.split_last() {
            let mut prefix = String::new();
            for t in lits {
                match t {
                    Tok::Lit(c) => prefix.push(*c),
                    _ => return p,
                }
            }
            p.prefix = Some(prefix);
        }
        p
    }

    /// fnmatch.fnmatchcase(text, pattern).
    pub fn matches(&self, text: &str) -> bool {
        if self.never {
            return false;
        }
        if let Some(l) = &self.literal {
            return l == text;
        }
        if let Some(p) = &self.prefix {
            return text.len() >= p.len() && same_bytes(&text.as_bytes()[..p.len()], p.as_bytes());
        }
        // NB: an ASCII text is matched byte by byte, without a Vec of its
        // chars (a call's usual text: a command line).
        if text.is_ascii() {
            let b = text.as_bytes();
            return self.run(b.len(), |k| b[k] as char);
        }
        let t: Vec<char> = text.chars().collect();
        self.run(t.len(), |k| t[k])
    }

    /// The match of the text of n chars, the k-th being at(k).
    #[inline(always)]
    fn run<F: Fn(usize) -> char>(&self, n: usize, at: F) -> bool {
        let toks = &self.toks;
        let (mut ti, mut pos) = (0usize, 0usize);
        let (mut star_ti, mut star_pos): (Option<usize>, usize) = (None, 0);
        loop {
            if ti < toks.len() {
                if let Tok::Star = toks[ti] {
                    star_ti = Some(ti);
                    star_pos = pos;
                    ti += 1;
                    continue;
                }
                if pos < n {
                    let r = at(pos);
                    let ok = match &toks[ti] {
                        Tok::Lit(c) => *c == r,
                        Tok::Any => true,
                        Tok::Class(cl) => cl.contains(r),
                        Tok::Star => false,
                    };
                    if ok {
                        ti += 1;
                        pos += 1;
                        continue;
                    }
                }
            } else if pos == n || star_ti.map(|s| s + 1 == toks.len()).unwrap_or(false) {
                return true;
            }
            match star_ti {
                Some(s) if star_pos < n => {
                    star_pos += 1;
                    ti = s + 1;
                    pos = star_pos;
                }
                _ => return false,
            }
        }
    }
}

/// The set whose '[' is at pat[i-1]: None when it is not closed (then '['
/// is a literal); Some((None, next)) for an empty set, which never matches.
fn compile_set(pat: &[char], i0: usize) -> Option<(Option<Tok>, usize)> {
    let n = pat.len();
    let mut i = i0;
    let mut j = i;
    if j < n && pat[j] == '!' {
        j += 1;
    }
    if j < n && pat[j] == ']' {
        j += 1;
    }
    while j < n && pat[j] != ']' {
        j += 1;
    }
    if j >= n {
        return None;
    }
    let next = j + 1;
    // (char, is a range separator)
    let mut stuff: Vec<(char, bool)> = Vec::new();
    let index_of = |from: usize, to: usize| (from..to).find(|&k| pat[k] == '-');
    if index_of(i, j).is_none() {
        for &r in &pat[i..j] {
            stuff.push((r, false));
        }
    } else {
        let mut chunks: Vec<Vec<char>> = Vec::new();
        let mut k = if pat[i] == '!' { i + 2 } else { i + 1 };
        loop {
            let found = if k < j { index_of(k, j) } else { None };
            match found {
                None => break,
                Some(h) => {
                    chunks.push(pat[i..h].to_vec());
                    i = h + 1;
                    k = h + 3;
                }
            }
        }
        if i < j {
            chunks.push(pat[i..j].to_vec());
        } else if let Some(last) = chunks.last_mut() {
            last.push('-');
        }
        let mut k = chunks.len();
        while k > 1 {
            k -= 1;
            let (prev_last, cur_first) = (*chunks[k - 1].last().unwrap_or(&'\0'), *chunks[k].first().unwrap_or(&'\0'));
            if !chunks[k - 1].is_empty() && !chunks[k].is_empty() && prev_last > cur_first {
                let mut merged: Vec<char> = chunks[k - 1][..chunks[k - 1].len() - 1].to_vec();
                merged.extend_from_slice(&chunks[k][1..]);
                chunks[k - 1] = merged;
                chunks.remove(k);
            }
        }
        for (ci, ch) in chunks.iter().enumerate() {
            if ci > 0 {
                stuff.push(('-', true));
            }
            for &r in ch {
                stuff.push((r, false));
            }
        }
    }
    if stuff.is_empty() {
        return Some((None, next));
    }
    if stuff.len() == 1 && !stuff[0].1 && stuff[0].0 == '!' {
        return Some((Some(Tok::Any), next));
    }
    let mut cls = CharClass::default();
    let mut s = &stuff[..];
    if !s[0].1 && s[0].0 == '!' {
        cls.negate = true;
        s = &s[1..];
    }
    let mut k = 0;
    while k < s.len() {
        let this = s[k];
        k += 1;
        if k + 1 < s.len() && s[k].1 {
            cls.ranges.push((this.0, s[k + 1].0));
            k += 2;
            continue;
        }
        cls.runes.push(this.0);
    }
    Some((Some(Tok::Class(Box::new(cls))), next))
}

#[cfg(test)]
mod canonical_tests {
    use super::*;

    /// Every member of an Input, spelt out (Input has no Debug).
    fn dump(in_: &Input) -> String {
        let mut s = format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
            in_.gate_id,
            in_.phase,
            in_.tool,
            in_.operation,
            in_.action,
            String::from_utf8_lossy(in_.arguments),
            in_.argument_order,
            in_.cwd,
            in_.workspace
        );
        for p in &in_.paths {
            s += &format!(" path({:?} {:?} {:?} {} {:?} {:?} {})", p.arg, p.raw, p.resolved, p.exists, p.kind, p.nearest_existing, p.link);
        }
        let c = &in_.context;
        s += &format!(" ctx({:?} {:?} {:?} {:?} {:?})", c.operation_id, c.run_id, c.agent_name, c.tool_call_id, c.metadata);
        if let Some(a) = &c.actor {
            s += &format!(" actor({:?} {:?})", a.kind, a.id);
        }
        if let Some(list) = &c.assignments {
            for a in list {
                s += &format!(" assignment({:?} {:?} {:?})", a.actor.kind, a.actor.id, a.duty);
            }
        }
        s
    }

    /// A GateInput with every member, as abi.AppendGateInput writes it.
    const HOST_DOC: &str = concat!(
        r#"{"abi_version":1,"gate_id":"g","phase":"check","tool":"bash","operation":"execute_command","action":"ls -la src","#,
        r#""arguments":{"command":"ls -la src"},"argument_order":["command","x"],"cwd":"/tmp/w","workspace":"/tmp/w\u2028","#,
        r#""paths":[{"arg":"path","raw":"a/../b","resolved":"/tmp/w/b","exists":false,"kind":"missing","nearest_existing":"/tmp/w","link":true},"#,
        r#"{"arg":"p2","raw":"x","resolved":"/tmp/w/x","exists":true,"kind":"file","nearest_existing":"/tmp/w/x"}],"#,
        r#""context":{"operation_id":"op","actor":{"kind":"agent","id":"coder"},"run_id":"r","agent_name":"a","tool_call_id":"t","#,
        r#""metadata":{"k":"v","é":"\u2028"},"assignments":[{"actor":{"kind":"agent","id":"coder"},"duty":"bash"},"#,
        r#"{"actor":{"kind":"user","id":"ann"},"duty":"merge"}]}}"#
    );

    /// The host's layout is read by read_canonical, into the Input
    /// read_members gives; any other layout is left to read_members.
    #[test]
    fn canonical_reader_takes_the_hosts_layout() {
        let doc = HOST_DOC.as_bytes();
        let mut fast = Input::default();
        assert!(read_canonical(doc, &mut fast).is_some(), "the host's layout was not taken");
        let mut slow = Input::default();
        assert!(Input::read_members(doc, &mut slow).is_some());
        assert_eq!(dump(&fast), dump(&slow));
        assert!(dump(&fast).contains("assignment(\"user\" \"ann\" \"merge\")"), "{}", dump(&fast));

        // The smallest input the host writes: no optional member.
        let small = br#"{"abi_version":1,"gate_id":"g","phase":"check","tool":"t","arguments":null,"context":{}}"#;
        let mut fast = Input::default();
        assert!(read_canonical(small, &mut fast).is_some());
        let mut slow = Input::default();
        assert!(Input::read_members(small, &mut slow).is_some());
        assert_eq!(dump(&fast), dump(&slow));

        // Another layout (whitespace, another order, a repeated member):
        // not taken, and Input::read gives read_members' Input.
        for other in [
            HOST_DOC.replacen(",\"phase\"", ", \"phase\"", 1),
            HOST_DOC.replacen("\"gate_id\":\"g\",\"phase\":\"check\"", "\"phase\":\"check\",\"gate_id\":\"g\"", 1),
            HOST_DOC.replacen("\"cwd\":\"/tmp/w\"", "\"cwd\":\"/tmp/w\",\"cwd\":\"/other\"", 1),
        ] {
            let mut fast = Input::default();
            assert!(read_canonical(other.as_bytes(), &mut fast).is_none(), "{}", other);
            let mut read = Input::default();
            assert!(Input::read(other.as_bytes(), &mut read));
            let mut slow = Input::default();
            assert!(Input::read_members(other.as_bytes(), &mut slow).is_some());
            assert_eq!(dump(&read), dump(&slow));
        }
    }
}

#[cfg(test)]
mod word_tests {
    use super::*;

    /// same_bytes answers as == does, at every length and every position
    /// of a difference (its word, half-word, pair and byte steps).
    #[test]
    fn same_bytes_is_eq() {
        let a: Vec<u8> = (0..40u8).map(|k| b'a' + k % 26).collect();
        for n in 0..=24 {
            assert!(same_bytes(&a[..n], &a[..n]));
            assert!(!same_bytes(&a[..n], &a[..n + 1]));
            for k in 0..n {
                let mut b = a[..n].to_vec();
                b[k] ^= 0x20;
                assert!(!same_bytes(&a[..n], &b), "n {} k {}", n, k);
            }
        }
    }

    /// The byte-by-byte reading scan_str_packed's words stand for.
    fn scan_ref(b: &[u8], i: usize) -> Option<(usize, bool, bool)> {
        let s = scan_str_short(b, i + 1, 0);
        if s == 0 {
            return None;
        }
        Some(((s as u32) as usize, s & SCAN_ESCAPED != 0, s & SCAN_NOT_ASCII == 0))
    }

    /// scan_str reads each word, and the last one back from the end, as
    /// the byte-by-byte reading does: strings ending at every distance from
    /// the document's end, with an escape, a control byte, a non-ASCII byte
    /// or no closing quote at every position.
    #[test]
    fn scan_str_reads_words_as_bytes() {
        let bodies: [&[u8]; 6] = [b"plain text", b"a\\\"b", b"a\\u00e9z", b"caf\xc3\xa9", b"ctl\x01x", b"bad\\xq"];
        for body in bodies {
            for pad in 0..12 {
                for cut in 0..=body.len() + 1 {
                    let mut doc = b"\"".to_vec();
                    doc.extend_from_slice(&body[..cut.min(body.len())]);
                    if cut <= body.len() {
                        doc.push(b'"');
                    }
                    doc.extend(std::iter::repeat(b'}').take(pad));
                    assert_eq!(scan_str(&doc, 0), scan_ref(&doc, 0), "{:?}", String::from_utf8_lossy(&doc));
                }
            }
        }
    }

    /// skip past 64 open containers (where the kinds spill to a Vec) takes
    /// the whole value, and refuses a close of the wrong kind at any depth.
    #[test]
    fn skip_at_every_depth() {
        for depth in [1usize, 63, 64, 65, 127, 128, 129, 300] {
            let mut doc = String::new();
            for k in 0..depth {
                doc.push_str(if k % 3 == 0 { "{\"k\":" } else { "[" });
            }
            doc.push_str("\"x\"");
            for k in (0..depth).rev() {
                doc.push_str(if k % 3 == 0 { ",\"e\":[]}" } else { ",1]" });
            }
            let mut r = Reader::new(doc.as_bytes());
            assert_eq!(r.skip(), Some(doc.as_bytes()), "depth {}", depth);
            for at in [doc.len() - 1, doc.len() / 2 + depth] {
                let mut bad = doc.clone().into_bytes();
                let c = bad[at];
                if c == b'}' || c == b']' {
                    bad[at] = if c == b'}' { b']' } else { b'}' };
                    assert_eq!(Reader::new(&bad).skip(), None, "depth {} at {}", depth, at);
                }
            }
        }
    }
}
