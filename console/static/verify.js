// verify.js: re-verifies a govhost evidence chain in the browser, with
// WebCrypto SHA-256, by the rules of ADR-0087 D2/D3 (sha256-v1):
//   payload_digest = sha256(payload_json as stored, UTF-8)
//   chain_hash     = sha256(canonical JSON of the record's other thirteen
//                    fields: keys sorted, no whitespace, null for absent)
// and each record links to the one before it (sequence 0, 1, …;
// previous_chain_hash = the previous chain_hash). The last chain_hash
// must be the head the caller trusts (a certificate's, or the server's).
// Canonical JSON is Python's json.dumps(sort_keys, separators=(",",":"),
// ensure_ascii=False): JSON.stringify writes strings exactly so.
"use strict";

const GovVerify = (() => {
  const utf8 = new TextEncoder();

  async function sha256hex(text) {
    const sum = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(text)));
    return Array.from(sum, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // A number literal kept exactly as written (JSON.parse would round
  // integers past 2^53).
  class Num { constructor(source) { this.source = source; } }

  // parseExact parses JSON keeping every number's literal (JSON.parse's
  // reviver sees the source text of each primitive).
  function parseExact(text) {
    return JSON.parse(text, (key, value, context) =>
      typeof value === "number" ? new Num(context.source) : value);
  }

  // Code point order (JavaScript's default sort compares UTF-16 units,
  // which puts U+E000..U+FFFF after astral characters).
  function byCodePoint(a, b) {
    const x = Array.from(a, (c) => c.codePointAt(0));
    const y = Array.from(b, (c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return x[i] - y[i];
    }
    return x.length - y.length;
  }

  // canonical returns the canonical text of a value from parseExact; a
  // float (a literal with ".", "e" or "E") is refused, as in govhost.
  function canonical(v) {
    if (v === null || v === true || v === false) return String(v);
    if (v instanceof Num) {
      if (/[.eE]/.test(v.source)) throw new Error("float");
      return BigInt(v.source).toString();
    }
    if (typeof v === "number") {
      if (!Number.isSafeInteger(v)) throw new Error("float");
      return String(v);
    }
    if (typeof v === "string") return JSON.stringify(v);
    if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
    const keys = Object.keys(v).sort(byCodePoint);
    return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }

  // chainInput is the canonical text a record's chain_hash is computed over.
  function chainInput(r) {
    const fields = {
      chain_id: r.chain_id, created_at: r.created_at, hash_algorithm: r.hash_algorithm,
      operation_id: r.operation_id ?? null, payload_digest: r.payload_digest, payload_json: r.payload_json,
      policy_id: r.policy_id, policy_version: r.policy_version, previous_chain_hash: r.previous_chain_hash ?? null,
      record_id: r.record_id, record_type: r.record_type, sequence: r.sequence,
      supersedes_record_id: r.supersedes_record_id ?? null,
    };
    return canonical(fields);
  }

  function parseLines(text) {
    return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
  }

  // verifyChain checks records in order and stops at the first failure.
  // It returns {valid, checked, head, failure: {code, recordId, sequence,
  // reason}} and reports each record's outcome through onRecord(i, ok).
  async function verifyChain(records, expectedHead, onRecord) {
    let prevHash = null;
    let checked = 0;
    const fail = (code, r, i, reason) => ({ valid: false, checked, head: prevHash,
      failure: { code, recordId: r ? r.record_id : null, sequence: i, reason } });
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r.hash_algorithm !== "sha256-v1") {
        onRecord?.(i, false);
        return fail("UNSUPPORTED_ALGORITHM", r, i, `hash algorithm ${r.hash_algorithm}`);
      }
      if (r.sequence !== i || (r.previous_chain_hash ?? null) !== prevHash) {
        onRecord?.(i, false);
        return fail("BROKEN_LINK", r, i, r.sequence !== i ? `sequence ${r.sequence} at position ${i}` : "previous_chain_hash is not the previous record's chain_hash");
      }
      if (await sha256hex(r.payload_json) !== r.payload_digest) {
        onRecord?.(i, false);
        return fail("CONTENT_MISMATCH", r, i, "payload_digest does not match payload_json");
      }
      let canon;
      try { canon = canonical(parseExact(r.payload_json)); } catch (e) { canon = null; }
      if (canon !== r.payload_json) {
        onRecord?.(i, false);
        return fail("CONTENT_MISMATCH", r, i, "payload_json is not canonical JSON");
      }
      if (await sha256hex(chainInput(r)) !== r.chain_hash) {
        onRecord?.(i, false);
        return fail("CONTENT_MISMATCH", r, i, "chain_hash does not match the record's fields");
      }
      onRecord?.(i, true);
      prevHash = r.chain_hash;
      checked++;
    }
    if (checked === 0) return fail("BROKEN_LINK", null, 0, "the chain has no records");
    if (prevHash !== expectedHead) {
      const last = records[records.length - 1];
      return fail("BROKEN_LINK", last, records.length - 1, `the chain ends at ${prevHash}, not at the trusted head ${expectedHead}`);
    }
    return { valid: true, checked, head: prevHash, failure: null };
  }

  // checkVectors runs the shared reference vectors (canonical.jsonl and
  // chain.jsonl) and returns the cases that fail (empty: all pass).
  async function checkVectors(canonicalText, chainText) {
    const failures = [];
    for (const line of canonicalText.split("\n").filter((l) => l.trim() !== "")) {
      const c = parseExact(line);
      let got;
      try { got = canonical(c.input); } catch (e) { got = "reject:" + e.message; }
      if (c.reject !== undefined) {
        if (got !== "reject:" + c.reject) failures.push(`${line}: got ${got}`);
        continue;
      }
      if (got !== c.canonical) failures.push(`${line}: got ${got}`);
      else if (await sha256hex(got) !== c.sha256) failures.push(`${line}: sha256 differs`);
    }
    const recs = parseLines(chainText);
    const res = await verifyChain(recs, recs[recs.length - 1].chain_hash);
    if (!res.valid) failures.push("chain.jsonl: " + JSON.stringify(res.failure));
    return failures;
  }

  return { sha256hex, parseExact, canonical, chainInput, parseLines, verifyChain, checkVectors };
})();
