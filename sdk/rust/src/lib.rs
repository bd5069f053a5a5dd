//! govhost_gate: the Rust SDK for govhost gates (native ABI v1,
//! abi/README.md). Standard library only, no dependencies.
//!
//! A gate implements [`Gate`] and exports it with [`export_gate!`]:
//!
//! ```ignore
//! use govhost_gate::{export_gate, Gate, GateInput, Json, Verdict};
//!
//! struct MyGate;
//! impl Gate for MyGate {
//!     fn configure(_config: &Json) -> Result<Self, String> { Ok(MyGate) }
//!     fn evaluate(&mut self, input: &GateInput) -> Verdict {
//!         if input.tool == "bash" { Verdict::require_approval("mygate.bash").message("bash needs approval") }
//!         else { Verdict::allow("mygate.ok") }
//!     }
//! }
//! export_gate!(MyGate);
//! ```
//!
//! Build with Debian's rustc and libstd-rust-dev-wasm32, no cargo needed:
//!
//! ```text
//! rustc --edition 2021 --target wasm32-wasi -O -C strip=symbols --crate-type rlib \
//!     --crate-name govhost_gate sdk/rust/src/lib.rs --out-dir build
//! rustc --edition 2021 --target wasm32-wasi -O -C strip=symbols --crate-type cdylib \
//!     --extern govhost_gate=build/libgovhost_gate.rlib -o gate.wasm src/lib.rs
//! ```
//!
//! A panic in a gate aborts its instance: the host denies with gate.trap and
//! discards it.

mod json;

pub use json::{Json, JsonError};

/// The ABI version this SDK implements.
pub const ABI_VERSION: i32 = 1;

/// A gate's verdict (abi/README.md §5). Build one with [`Verdict::allow`],
/// [`Verdict::deny`] or [`Verdict::require_approval`] and the setters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub reason_code: String,
    pub message: String,
    pub detail: String,
    pub matched_rule: String,
}

/// The three decisions of ABI v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny,
    RequireApproval,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::RequireApproval => "require_approval",
        }
    }
}

impl Verdict {
    fn new(decision: Decision, reason_code: &str) -> Verdict {
        Verdict { decision, reason_code: reason_code.to_string(), message: String::new(), detail: String::new(), matched_rule: String::new() }
    }
    /// Allows the call. Reason codes: `[a-z0-9][a-z0-9_.-]*`, at most 128 bytes.
    pub fn allow(reason_code: &str) -> Verdict { Verdict::new(Decision::Allow, reason_code) }
    /// Denies the call.
    pub fn deny(reason_code: &str) -> Verdict { Verdict::new(Decision::Deny, reason_code) }
    /// Asks a human's approval.
    pub fn require_approval(reason_code: &str) -> Verdict { Verdict::new(Decision::RequireApproval, reason_code) }
    /// The text shown to the agent on deny / require_approval.
    pub fn message(mut self, s: &str) -> Verdict { self.message = s.to_string(); self }
    /// Free text for humans; never copied into evidence.
    pub fn detail(mut self, s: &str) -> Verdict { self.detail = s.to_string(); self }
    /// The rule that decided.
    pub fn matched_rule(mut self, s: &str) -> Verdict { self.matched_rule = s.to_string(); self }

    /// Appends the GateOutput JSON document to out.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"decision\":\"");
        out.extend_from_slice(self.decision.as_str().as_bytes());
        out.extend_from_slice(b"\",\"reason_code\":");
        json::write_string(out, &self.reason_code);
        for (name, v) in [("message", &self.message), ("detail", &self.detail), ("matched_rule", &self.matched_rule)] {
            if !v.is_empty() {
                out.push(b',');
                json::write_string(out, name);
                out.push(b':');
                json::write_string(out, v);
            }
        }
        out.push(b'}');
    }
}

/// One path fact of [`GateInput::paths`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathFact {
    pub arg: String,
    pub raw: String,
    pub resolved: String,
    pub exists: bool,
    /// "file", "dir", "other" or "missing".
    pub kind: String,
    pub nearest_existing: String,
}

/// Who acts, as the caller said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Actor {
    pub kind: String,
    pub id: String,
}

/// The operation context a gate may see.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    pub operation_id: String,
    pub actor: Option<Actor>,
    pub run_id: String,
    pub agent_name: String,
    pub tool_call_id: String,
    pub metadata: Vec<(String, String)>,
}

/// The request a gate evaluates (abi/README.md §4). Absent optional
/// strings are empty; unknown fields are ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct GateInput {
    pub abi_version: i64,
    pub gate_id: String,
    pub phase: String,
    pub tool: String,
    pub operation: String,
    pub action: String,
    /// The tool's arguments: always a JSON object.
    pub arguments: Json,
    pub argument_order: Vec<String>,
    pub cwd: String,
    pub paths: Vec<PathFact>,
    pub context: Context,
}

fn string_of(v: Option<&Json>) -> String {
    v.and_then(Json::as_str).unwrap_or("").to_string()
}

impl GateInput {
    /// Decodes a GateInput document; it must be an object with a string
    /// `tool` and an object `arguments`.
    pub fn parse(data: &[u8]) -> Result<GateInput, JsonError> {
        let doc = Json::parse(data)?;
        if doc.as_object().is_none() {
            return Err(JsonError("input is not an object"));
        }
        let tool = doc.get("tool").and_then(Json::as_str).ok_or(JsonError("input has no tool"))?.to_string();
        let arguments = match doc.get("arguments") {
            Some(a @ Json::Object(_)) => a.clone(),
            _ => return Err(JsonError("input has no arguments object")),
        };
        let mut paths = Vec::new();
        for p in doc.get("paths").and_then(Json::as_array).unwrap_or(&[]) {
            paths.push(PathFact {
                arg: string_of(p.get("arg")),
                raw: string_of(p.get("raw")),
                resolved: string_of(p.get("resolved")),
                exists: p.get("exists").and_then(Json::as_bool).unwrap_or(false),
                kind: string_of(p.get("kind")),
                nearest_existing: string_of(p.get("nearest_existing")),
            });
        }
        let mut context = Context::default();
        if let Some(c) = doc.get("context") {
            context.operation_id = string_of(c.get("operation_id"));
            context.run_id = string_of(c.get("run_id"));
            context.agent_name = string_of(c.get("agent_name"));
            context.tool_call_id = string_of(c.get("tool_call_id"));
            if let Some(a @ Json::Object(_)) = c.get("actor") {
                context.actor = Some(Actor { kind: string_of(a.get("kind")), id: string_of(a.get("id")) });
            }
            for (k, v) in c.get("metadata").and_then(Json::as_object).unwrap_or(&[]) {
                if let Some(s) = v.as_str() {
                    context.metadata.push((k.clone(), s.to_string()));
                }
            }
        }
        Ok(GateInput {
            abi_version: doc.get("abi_version").and_then(Json::as_f64).unwrap_or(0.0) as i64,
            gate_id: string_of(doc.get("gate_id")),
            phase: string_of(doc.get("phase")),
            tool,
            operation: string_of(doc.get("operation")),
            action: string_of(doc.get("action")),
            arguments,
            argument_order: doc
                .get("argument_order")
                .and_then(Json::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            cwd: string_of(doc.get("cwd")),
            paths,
            context,
        })
    }
}

/// A gate: built once per instance from the binding's configuration, then
/// asked about one request at a time.
pub trait Gate: Sized {
    /// Checks the configuration (a JSON object; `{}` when the binding has
    /// none). An error refuses the binding (gate.config_rejected).
    fn configure(config: &Json) -> Result<Self, String>;
    /// Decides one request.
    fn evaluate(&mut self, input: &GateInput) -> Verdict;
}

/// The state behind the exports of one gate module; [`export_gate!`]
/// declares it. Not for direct use.
pub struct Runtime<G> {
    input: Vec<u8>,
    out: Vec<u8>,
    gate: Option<G>,
}

impl<G: Gate> Runtime<G> {
    pub const fn new() -> Runtime<G> {
        Runtime { input: Vec::new(), out: Vec::new(), gate: None }
    }

    /// gate_alloc: one buffer, grown when too small, reused otherwise.
    pub fn alloc(&mut self, size: i32) -> i32 {
        if size < 0 {
            return 0;
        }
        let size = size as usize;
        if self.input.len() < size.max(1) {
            self.input = vec![0; size.max(1)];
        }
        self.input.as_ptr() as usize as i32
    }

    /// The bytes the host wrote into the buffer alloc handed out; an
    /// address it did not hand out is refused, never dereferenced.
    fn read(&self, ptr: i32, len: i32) -> Option<&[u8]> {
        if len == 0 {
            return Some(&[]);
        }
        if len < 0 || ptr as usize != self.input.as_ptr() as usize || len as usize > self.input.len() {
            return None;
        }
        Some(&self.input[..len as usize])
    }

    /// Configures the gate from a configuration document; false refuses it.
    pub fn configure_bytes(&mut self, config: &[u8]) -> bool {
        let cfg = match Json::parse(config) {
            Ok(c @ Json::Object(_)) => c,
            Ok(Json::Null) => Json::Object(Vec::new()),
            _ => return false,
        };
        match G::configure(&cfg) {
            Ok(g) => {
                self.gate = Some(g);
                true
            }
            Err(_) => false,
        }
    }

    /// gate_configure.
    pub fn configure(&mut self, ptr: i32, len: i32) -> i32 {
        let data = match self.read(ptr, len) {
            Some(d) => d.to_vec(),
            None => return 1,
        };
        if self.configure_bytes(&data) { 0 } else { 1 }
    }

    /// Decides one GateInput document; the answer is valid until the next call.
    pub fn evaluate_bytes(&mut self, input: &[u8]) -> &[u8] {
        if self.gate.is_none() && !self.configure_bytes(b"{}") {
            return self.answer(Verdict::deny("sdk.unconfigured"));
        }
        let verdict = match GateInput::parse(input) {
            Ok(in_) => self.gate.as_mut().map(|g| g.evaluate(&in_)).unwrap_or_else(|| Verdict::deny("sdk.unconfigured")),
            Err(_) => Verdict::deny("sdk.bad_input"),
        };
        self.answer(verdict)
    }

    fn answer(&mut self, v: Verdict) -> &[u8] {
        self.out.clear();
        v.write_json(&mut self.out);
        &self.out
    }

    /// gate_evaluate: returns (ptr << 32) | len of the answer.
    pub fn evaluate(&mut self, ptr: i32, len: i32) -> i64 {
        let input = match self.read(ptr, len) {
            Some(d) => d.to_vec(),
            None => {
                let out = self.answer(Verdict::deny("sdk.bad_input"));
                return pack(out);
            }
        };
        // NB: the input buffer stays the host's; the copy keeps the borrow
        // of self free for the gate.
        let out = self.evaluate_bytes(&input);
        pack(out)
    }
}

fn pack(out: &[u8]) -> i64 {
    (((out.as_ptr() as usize as u64) << 32) | out.len() as u64) as i64
}

/// Exports a [`Gate`] type as the module's ABI v1 functions
/// (`_initialize`, `gate_abi_version`, `gate_alloc`, `gate_configure`,
/// `gate_evaluate`). Use it once, in the cdylib crate.
#[macro_export]
macro_rules! export_gate {
    ($gate:ty) => {
        static mut GOVHOST_RUNTIME: $crate::Runtime<$gate> = $crate::Runtime::new();

        extern "C" {
            fn __wasm_call_ctors();
        }

        /// Reactor initialisation. Exporting it also stops the linker from
        /// wrapping every export in constructor / destructor calls.
        #[no_mangle]
        pub extern "C" fn _initialize() {
            unsafe { __wasm_call_ctors() }
        }

        #[no_mangle]
        pub extern "C" fn gate_abi_version() -> i32 {
            $crate::ABI_VERSION
        }

        #[no_mangle]
        pub extern "C" fn gate_alloc(size: i32) -> i32 {
            unsafe { GOVHOST_RUNTIME.alloc(size) }
        }

        #[no_mangle]
        pub extern "C" fn gate_configure(ptr: i32, len: i32) -> i32 {
            unsafe { GOVHOST_RUNTIME.configure(ptr, len) }
        }

        #[no_mangle]
        pub extern "C" fn gate_evaluate(ptr: i32, len: i32) -> i64 {
            unsafe { GOVHOST_RUNTIME.evaluate(ptr, len) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo {
        prefix: String,
    }

    impl Gate for Echo {
        fn configure(config: &Json) -> Result<Self, String> {
            match config.get("prefix") {
                None => Ok(Echo { prefix: "echo".into() }),
                Some(Json::String(s)) => Ok(Echo { prefix: s.clone() }),
                Some(_) => Err("prefix must be a string".into()),
            }
        }
        fn evaluate(&mut self, input: &GateInput) -> Verdict {
            let who = input.context.actor.as_ref().map(|a| a.id.as_str()).unwrap_or("");
            Verdict::deny(&format!("{}.{}", self.prefix, input.tool)).message(who).detail(&input.paths.len().to_string())
        }
    }

    #[test]
    fn runtime_round_trip() {
        let mut rt: Runtime<Echo> = Runtime::new();
        assert!(!rt.configure_bytes(br#"{"prefix": 1}"#));
        assert!(!rt.configure_bytes(b"[]"));
        assert!(rt.configure_bytes(br#"{"prefix": "t"}"#));
        let out = rt.evaluate_bytes(br#"{"abi_version":1,"tool":"bash","arguments":{},"paths":[{"arg":"p","exists":true}],"context":{"actor":{"kind":"user","id":"a\"b"}},"extra":1}"#).to_vec();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"decision":"deny","reason_code":"t.bash","message":"a\"b","detail":"1"}"#);
        let out = rt.evaluate_bytes(br#"{"tool":"bash"}"#).to_vec();
        assert_eq!(String::from_utf8(out).unwrap(), r#"{"decision":"deny","reason_code":"sdk.bad_input"}"#);
    }

    #[test]
    fn parses_input() {
        let in_ = GateInput::parse(br#"{"abi_version":1,"gate_id":"g","phase":"check","tool":"read","operation":"read","arguments":{"path":"a"},"argument_order":["path"],"cwd":"/w","paths":[{"arg":"path","raw":"a","resolved":"/w/a","exists":false,"kind":"missing","nearest_existing":"/w"}],"context":{"operation_id":"op","run_id":"r","metadata":{"k":"v"}}}"#).unwrap();
        assert_eq!(in_.tool, "read");
        assert_eq!(in_.argument_order, vec!["path".to_string()]);
        assert_eq!(in_.paths[0].nearest_existing, "/w");
        assert_eq!(in_.context.metadata, vec![("k".to_string(), "v".to_string())]);
        assert_eq!(in_.arguments.get("path").and_then(Json::as_str), Some("a"));
        assert!(GateInput::parse(br#"{"tool":"x","arguments":[]}"#).is_err());
    }
}
