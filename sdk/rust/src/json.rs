//! A JSON reader and string writer just sufficient for the ABI's documents.

/// A JSON value. Objects keep their members in document order (a repeated
/// name keeps every occurrence; [`Json::get`] returns the first).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Why a document is not JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonError(pub &'static str);

const MAX_DEPTH: usize = 64;

impl Json {
    /// Parses a whole document: one value, surrounded only by whitespace.
    pub fn parse(data: &[u8]) -> Result<Json, JsonError> {
        let mut p = Parser { b: data, i: 0 };
        p.ws();
        let v = p.value(0)?;
        p.ws();
        if p.i != data.len() {
            return Err(JsonError("trailing data"));
        }
        Ok(v)
    }

    /// The member key of an object (the first of that name).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(*n),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(m) => Some(m),
            _ => None,
        }
    }
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn literal(&mut self, lit: &[u8], v: Json) -> Result<Json, JsonError> {
        if self.b[self.i..].starts_with(lit) {
            self.i += lit.len();
            Ok(v)
        } else {
            Err(JsonError("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError("nested too deeply"));
        }
        match self.peek() {
            None => Err(JsonError("unexpected end")),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'"') => self.string().map(Json::String),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Array(items));
                        }
                        _ => return Err(JsonError("expected , or ]")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Json::Object(members));
                }
                loop {
                    self.ws();
                    if self.peek() != Some(b'"') {
                        return Err(JsonError("expected a member name"));
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.peek() != Some(b':') {
                        return Err(JsonError("expected :"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    members.push((k, v));
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Object(members));
                        }
                        _ => return Err(JsonError("expected , or }")),
                    }
                }
            }
            Some(_) => self.number(),
        }
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.i;
        let digits = |p: &mut Parser| {
            let s = p.i;
            while p.i < p.b.len() && p.b[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i > s
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        if self.peek() == Some(b'0') {
            self.i += 1;
        } else if !digits(self) {
            return Err(JsonError("invalid number"));
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(JsonError("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e') | Some(b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+') | Some(b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return Err(JsonError("invalid number"));
            }
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).map_err(|_| JsonError("invalid number"))?;
        text.parse::<f64>().map(Json::Number).map_err(|_| JsonError("invalid number"))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        if self.i + 4 > self.b.len() {
            return Err(JsonError("short \\u escape"));
        }
        let s = std::str::from_utf8(&self.b[self.i..self.i + 4]).map_err(|_| JsonError("bad \\u escape"))?;
        let v = u32::from_str_radix(s, 16).map_err(|_| JsonError("bad \\u escape"))?;
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = match self.peek() {
                None => return Err(JsonError("unterminated string")),
                Some(c) => c,
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.peek().ok_or(JsonError("unterminated string"))?;
                    self.i += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.b[self.i..].starts_with(b"\\u") {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    self.i = save;
                                }
                            }
                            char::from_u32(cp).unwrap_or('\u{FFFD}')
                        }
                        _ => return Err(JsonError("bad escape")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                c if c < 0x20 => return Err(JsonError("control character in string")),
                c => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|_| JsonError("string is not UTF-8"))
    }
}

/// Appends s as a JSON string (quotes, backslashes and control characters
/// escaped).
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b if b < 0x20 => out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_documents() {
        let v = Json::parse(br#" {"a": [1, -2.5e3, true, false, null], "b": "x\u00e9\ud83d\ude00\n", "a": 2} "#).unwrap();
        assert_eq!(v.get("a").unwrap().as_array().unwrap().len(), 5, "first of a repeated name");
        assert_eq!(v.get("b").unwrap().as_str().unwrap(), "x\u{e9}\u{1F600}\n");
        assert_eq!(Json::parse(b"\"\\ud800\"").unwrap().as_str().unwrap(), "\u{FFFD}", "lone surrogate");
    }

    #[test]
    fn refuses_bad_documents() {
        for doc in [&b""[..], b"{", b"[1,]", b"{\"a\"}", b"01", b"1.", b"\"a\x01\"", b"\"\\x\"", b"tru", b"{} x", b"\"\\u12\"", b"\xff"] {
            assert!(Json::parse(doc).is_err(), "{:?}", String::from_utf8_lossy(doc));
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(Json::parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn writes_strings() {
        let mut out = Vec::new();
        write_string(&mut out, "a\"b\\c\n\u{1b}é");
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\c\\u000a\\u001bé\"");
    }
}
