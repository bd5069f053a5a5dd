// @govhost/gate: the AssemblyScript SDK for govhost gates (native ABI v1,
// abi/README.md). No dependencies beyond AssemblyScript's standard library.
//
// A gate registers two functions and re-exports the ABI functions from its
// entry file:
//
//   import { register, Json, GateInput, Verdict } from "@govhost/gate";
//   export { gate_abi_version, gate_alloc, gate_configure, gate_evaluate } from "@govhost/gate";
//
//   function configure(config: Json): bool { return true; }
//   function evaluate(input: GateInput): Verdict {
//     if (input.tool == "bash") return Verdict.requireApproval("mygate.bash").withMessage("bash needs approval");
//     return Verdict.allow("mygate.ok");
//   }
//   register(configure, evaluate);
//
// and is built with (README.md in this folder):
//
//   asc assembly/index.ts -O3 --runtime incremental --exportStart _initialize \
//     --use abort=<path of this file without .ts>/gateAbort -o gate.wasm
//
// --use abort makes the module import nothing (an AssemblyScript abort traps
// the instance: the host denies with gate.trap).

// ---------------------------------------------------------------------------
// JSON

export enum JsonKind { Null, Bool, Number, String, Array, Object }

// A JSON value. Objects keep their members in document order; get returns
// the first member of a name.
export class Json {
  kind: JsonKind = JsonKind.Null;
  bool: bool = false;
  num: f64 = 0;
  str: string = "";
  items: Array<Json> = new Array<Json>();
  keys: Array<string> = new Array<string>();

  // The member key of an object, or null.
  get(key: string): Json | null {
    if (this.kind != JsonKind.Object) return null;
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] == key) return this.items[i];
    }
    return null;
  }
  isString(): bool { return this.kind == JsonKind.String; }
  isBool(): bool { return this.kind == JsonKind.Bool; }
  isArray(): bool { return this.kind == JsonKind.Array; }
  isObject(): bool { return this.kind == JsonKind.Object; }
  // The string member key, or "" when absent or not a string.
  getString(key: string): string {
    const v = this.get(key);
    return v != null && v.kind == JsonKind.String ? v.str : "";
  }
}

const MAX_DEPTH = 64;

class Parser {
  s: string;
  i: i32 = 0;
  ok: bool = true;
  constructor(s: string) { this.s = s; }

  fail(): Json { this.ok = false; return new Json(); }
  peek(): i32 { return this.i < this.s.length ? this.s.charCodeAt(this.i) : -1; }
  ws(): void {
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.i++;
    }
  }
  literal(lit: string, v: Json): Json {
    if (this.s.substr(this.i, lit.length) != lit) return this.fail();
    this.i += lit.length;
    return v;
  }
  digits(): bool {
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c < 0x30 || c > 0x39) break;
      this.i++;
    }
    return this.i > start;
  }
  number(): Json {
    const start = this.i;
    if (this.peek() == 0x2d) this.i++;
    if (this.peek() == 0x30) this.i++;
    else if (!this.digits()) return this.fail();
    if (this.peek() == 0x2e) { this.i++; if (!this.digits()) return this.fail(); }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.i++;
      const sign = this.peek();
      if (sign == 0x2b || sign == 0x2d) this.i++;
      if (!this.digits()) return this.fail();
    }
    const v = new Json();
    v.kind = JsonKind.Number;
    v.num = parseFloat(this.s.substring(start, this.i));
    return v;
  }
  hex4(): i32 {
    if (this.i + 4 > this.s.length) { this.ok = false; return 0; }
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.s.charCodeAt(this.i + k);
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) { this.ok = false; return 0; }
      v = (v << 4) | d;
    }
    this.i += 4;
    return v;
  }
  // A string's value (the parser is on its opening quote).
  string(): string {
    this.i++;
    let out = "";
    let run = this.i; // start of the current run without escapes
    while (true) {
      if (this.i >= this.s.length) { this.ok = false; return ""; }
      const c = this.s.charCodeAt(this.i);
      if (c == 0x22) { out += this.s.substring(run, this.i); this.i++; return out; }
      if (c < 0x20) { this.ok = false; return ""; }
      if (c != 0x5c) { this.i++; continue; }
      out += this.s.substring(run, this.i);
      this.i++;
      const e = this.peek();
      this.i++;
      if (e == 0x22) out += "\"";
      else if (e == 0x5c) out += "\\";
      else if (e == 0x2f) out += "/";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x6e) out += "\n";
      else if (e == 0x72) out += "\r";
      else if (e == 0x74) out += "\t";
      else if (e == 0x75) {
        let cp = this.hex4();
        if (!this.ok) return "";
        if (cp >= 0xd800 && cp < 0xdc00 && this.s.substr(this.i, 2) == "\\u") {
          const save = this.i;
          this.i += 2;
          const lo = this.hex4();
          if (!this.ok) return "";
          if (lo >= 0xdc00 && lo < 0xe000) cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          else this.i = save;
        }
        if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd; // lone surrogate
        out += String.fromCodePoint(cp);
      } else { this.ok = false; return ""; }
      run = this.i;
    }
  }
  value(depth: i32): Json {
    if (depth > MAX_DEPTH) return this.fail();
    const c = this.peek();
    if (c == 0x6e) { return this.literal("null", new Json()); }
    if (c == 0x74 || c == 0x66) {
      const v = new Json();
      v.kind = JsonKind.Bool;
      v.bool = c == 0x74;
      return this.literal(c == 0x74 ? "true" : "false", v);
    }
    if (c == 0x22) {
      const v = new Json();
      v.kind = JsonKind.String;
      v.str = this.string();
      return v;
    }
    if (c == 0x5b || c == 0x7b) {
      const object = c == 0x7b;
      const close = object ? 0x7d : 0x5d;
      const v = new Json();
      v.kind = object ? JsonKind.Object : JsonKind.Array;
      this.i++;
      this.ws();
      if (this.peek() == close) { this.i++; return v; }
      while (this.ok) {
        this.ws();
        if (object) {
          if (this.peek() != 0x22) return this.fail();
          v.keys.push(this.string());
          this.ws();
          if (this.peek() != 0x3a) return this.fail();
          this.i++;
          this.ws();
        }
        v.items.push(this.value(depth + 1));
        this.ws();
        const sep = this.peek();
        this.i++;
        if (sep == close) return v;
        if (sep != 0x2c) return this.fail();
      }
      return v;
    }
    return this.number();
  }
}

// Parses a whole JSON document; null when it is not JSON.
export function parseJson(s: string): Json | null {
  const p = new Parser(s);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (!p.ok || p.i != s.length) return null;
  return v;
}

// Appends s to out as a JSON string.
export function jsonString(s: string): string {
  let out = "\"";
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c != 0x22 && c != 0x5c && c >= 0x20) continue;
    out += s.substring(run, i);
    if (c == 0x22) out += "\\\"";
    else if (c == 0x5c) out += "\\\\";
    else out += "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    run = i + 1;
  }
  return out + s.substring(run) + "\"";
}

// ---------------------------------------------------------------------------
// GateInput (abi/README.md §4). Absent optional strings are "".

export class PathFact {
  arg: string = "";
  raw: string = "";
  resolved: string = "";
  exists: bool = false;
  kind: string = ""; // file, dir, other or missing
  nearestExisting: string = "";
}

export class Actor {
  kind: string = "";
  id: string = "";
}

export class Context {
  operationId: string = "";
  actor: Actor | null = null;
  runId: string = "";
  agentName: string = "";
  toolCallId: string = "";
  metadata: Map<string, string> = new Map<string, string>();
}

export class GateInput {
  abiVersion: i32 = 0;
  gateId: string = "";
  phase: string = "";
  tool: string = "";
  operation: string = "";
  action: string = "";
  arguments: Json = new Json(); // always an object
  argumentOrder: Array<string> = new Array<string>();
  cwd: string = "";
  paths: Array<PathFact> = new Array<PathFact>();
  context: Context = new Context();
}

// Decodes a GateInput document; null when it is not an object with a
// string tool and an object arguments. Unknown fields are ignored.
export function parseInput(s: string): GateInput | null {
  const doc = parseJson(s);
  if (doc == null || !doc.isObject()) return null;
  const tool = doc.get("tool");
  const args = doc.get("arguments");
  if (tool == null || !tool.isString() || args == null || !args.isObject()) return null;
  const in_ = new GateInput();
  in_.tool = tool.str;
  in_.arguments = args;
  const v = doc.get("abi_version");
  if (v != null && v.kind == JsonKind.Number) in_.abiVersion = <i32>v.num;
  in_.gateId = doc.getString("gate_id");
  in_.phase = doc.getString("phase");
  in_.operation = doc.getString("operation");
  in_.action = doc.getString("action");
  in_.cwd = doc.getString("cwd");
  const order = doc.get("argument_order");
  if (order != null && order.isArray()) {
    for (let i = 0; i < order.items.length; i++) {
      if (order.items[i].isString()) in_.argumentOrder.push(order.items[i].str);
    }
  }
  const paths = doc.get("paths");
  if (paths != null && paths.isArray()) {
    for (let i = 0; i < paths.items.length; i++) {
      const p = paths.items[i];
      const f = new PathFact();
      f.arg = p.getString("arg");
      f.raw = p.getString("raw");
      f.resolved = p.getString("resolved");
      const e = p.get("exists");
      f.exists = e != null && e.isBool() && e.bool;
      f.kind = p.getString("kind");
      f.nearestExisting = p.getString("nearest_existing");
      in_.paths.push(f);
    }
  }
  const c = doc.get("context");
  if (c != null && c.isObject()) {
    in_.context.operationId = c.getString("operation_id");
    in_.context.runId = c.getString("run_id");
    in_.context.agentName = c.getString("agent_name");
    in_.context.toolCallId = c.getString("tool_call_id");
    const a = c.get("actor");
    if (a != null && a.isObject()) {
      const actor = new Actor();
      actor.kind = a.getString("kind");
      actor.id = a.getString("id");
      in_.context.actor = actor;
    }
    const m = c.get("metadata");
    if (m != null && m.isObject()) {
      for (let i = 0; i < m.keys.length; i++) {
        if (m.items[i].isString()) in_.context.metadata.set(m.keys[i], m.items[i].str);
      }
    }
  }
  return in_;
}

// ---------------------------------------------------------------------------
// Verdict (abi/README.md §5)

export class Verdict {
  decision: string;
  reasonCode: string;
  message: string = "";
  detail: string = "";
  matchedRule: string = "";
  constructor(decision: string, reasonCode: string) {
    this.decision = decision;
    this.reasonCode = reasonCode;
  }
  // Reason codes: [a-z0-9][a-z0-9_.-]*, at most 128 bytes.
  static allow(reasonCode: string): Verdict { return new Verdict("allow", reasonCode); }
  static deny(reasonCode: string): Verdict { return new Verdict("deny", reasonCode); }
  static requireApproval(reasonCode: string): Verdict { return new Verdict("require_approval", reasonCode); }
  // The text shown to the agent on deny / require_approval.
  withMessage(s: string): Verdict { this.message = s; return this; }
  // Free text for humans; never copied into evidence.
  withDetail(s: string): Verdict { this.detail = s; return this; }
  withMatchedRule(s: string): Verdict { this.matchedRule = s; return this; }

  toJSON(): string {
    let out = "{\"decision\":" + jsonString(this.decision) + ",\"reason_code\":" + jsonString(this.reasonCode);
    if (this.message.length > 0) out += ",\"message\":" + jsonString(this.message);
    if (this.detail.length > 0) out += ",\"detail\":" + jsonString(this.detail);
    if (this.matchedRule.length > 0) out += ",\"matched_rule\":" + jsonString(this.matchedRule);
    return out + "}";
  }
}

// ---------------------------------------------------------------------------
// Registration and the ABI exports

function acceptEmpty(config: Json): bool { return config.keys.length == 0; }
function unregistered(input: GateInput): Verdict { return Verdict.deny("sdk.unregistered"); }

let configureFn: (config: Json) => bool = acceptEmpty;
let evaluateFn: (input: GateInput) => Verdict = unregistered;
let configured = false;

// Registers the gate: configure is called once per instance with the
// binding's configuration object ({} when none) and returns false to refuse
// it (gate.config_rejected); evaluate decides one request.
export function register(configure: (config: Json) => bool, evaluate: (input: GateInput) => Verdict): void {
  configureFn = configure;
  evaluateFn = evaluate;
}

// Configures the registered gate from a configuration document (for tests
// and gate_configure); false refuses it.
export function configureWith(text: string): bool {
  const cfg = parseJson(text);
  if (cfg == null) return false;
  if (cfg.kind == JsonKind.Null) cfg.kind = JsonKind.Object;
  if (!cfg.isObject() || !configureFn(cfg)) return false;
  configured = true;
  return true;
}

// Decides one GateInput document (for tests and gate_evaluate).
export function evaluateWith(text: string): Verdict {
  if (!configured && !configureWith("{}")) return Verdict.deny("sdk.unconfigured");
  const in_ = parseInput(text);
  if (in_ == null) return Verdict.deny("sdk.bad_input");
  return evaluateFn(in_);
}

let inBuf: usize = 0;
let inCap: i32 = 0;
let lastOut: ArrayBuffer = new ArrayBuffer(0); // valid until the next call

export function gate_abi_version(): i32 { return 1; }

// One buffer, outside the garbage-collected heap, reused while large enough.
export function gate_alloc(size: i32): i32 {
  if (size < 0) return 0;
  if (size > inCap || inBuf == 0) {
    const n = size > 0 ? size : 1;
    inBuf = inBuf == 0 ? heap.alloc(<usize>n) : heap.realloc(inBuf, <usize>n);
    inCap = n;
  }
  return <i32>inBuf;
}

function read(ptr: i32, len: i32): string | null {
  if (len == 0) return "";
  if (len < 0 || <usize>ptr != inBuf || len > inCap) return null;
  return String.UTF8.decodeUnsafe(<usize>ptr, <usize>len);
}

export function gate_configure(ptr: i32, len: i32): i32 {
  const text = read(ptr, len);
  if (text == null) return 1;
  return configureWith(text) ? 0 : 1;
}

export function gate_evaluate(ptr: i32, len: i32): i64 {
  const text = read(ptr, len);
  const v = text == null ? Verdict.deny("sdk.bad_input") : evaluateWith(text);
  lastOut = String.UTF8.encode(v.toJSON());
  return (<i64>changetype<usize>(lastOut) << 32) | <i64>lastOut.byteLength;
}

// The abort handler of gate modules (--use abort=...): trap, import nothing.
export function gateAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  unreachable();
}
