// app.js: the console's pages. Every value from the server goes into the
// page as text (textContent), never as HTML. State changes carry the
// session's CSRF token; the session cookie itself is HttpOnly.
"use strict";

const state = { csrf: "", approvals: new Map(), decisions: [], tasks: [] };
const $ = (id) => document.getElementById(id);

// el builds an element: el("td", {class: "x"}, "text", child, …).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") e.addEventListener("click", v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c ?? ""));
  return e;
}
const code = (t) => el("code", {}, t);
const short = (h) => (h ? h.slice(0, 12) + "…" : "");

async function api(path, options = {}) {
  const res = await fetch("/ui/api/" + path, { credentials: "same-origin", ...options });
  if (res.status === 401) { signedOut(); throw new Error("signed out"); }
  return res;
}
async function getJSON(path) { return (await api(path)).json(); }

function signedOut() {
  $("signed-out").hidden = false;
  document.querySelectorAll("main section").forEach((s) => (s.hidden = true));
}

// ---- pages (hash routing: #approvals, #decisions, #tasks, #task/<id>, #policy)

function show() {
  const [page, arg] = (location.hash.slice(1) || "approvals").split("/");
  document.querySelectorAll("main section").forEach((s) => (s.hidden = s.id !== page));
  document.querySelectorAll("header nav a").forEach((a) => a.classList.toggle("active", a.id === "nav-" + page));
  if (page === "tasks") loadTasks();
  if (page === "task") openTask(arg);
  if (page === "policy") loadPolicy();
}

// ---- approvals

function waited(since) {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(since)) / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

function approvalCard(a) {
  const reason = el("input", { placeholder: "reason shown to the agent (with a deny)", maxlength: "500", class: "reason" });
  const answer = (decision) => async () => {
    card.querySelectorAll("button").forEach((b) => (b.disabled = true));
    const res = await api("approvals/" + encodeURIComponent(a.approval_id), {
      method: "POST", headers: { "Content-Type": "application/json", "X-CSRF-Token": state.csrf },
      body: JSON.stringify({ decision, argument_digest: a.argument_digest, reason: reason.value }),
    });
    if (!res.ok) {
      const body = await res.json().catch(() => ({}));
      card.append(el("p", { class: "problem" }, body.error ? body.error.message : "refused: " + res.status));
    }
  };
  const paths = (a.path_facts || []).map((f) =>
    el("p", { class: "path" }, code(f.resolved), " ", el("span", { class: "muted" }, `${f.kind}${f.exists ? "" : ", does not exist yet"} (from ${f.arg} = ${f.raw})`)));
  const who = [a.agent_name ? "agent " + a.agent_name : "agent (unnamed)", a.run_id ? "run " + a.run_id : "", a.actor ? `actor ${a.actor.kind}:${a.actor.id}` : ""].filter(Boolean).join(" · ");
  const card = el("div", { class: "card approval", "data-approval-id": a.approval_id },
    el("h2", {}, code(a.tool), " ", a.operation || "", " ", el("span", { class: "muted" }, a.action || ""),
      " ", el("span", { class: "muted waited", "data-since": a.since }, "waiting " + waited(a.since))),
    ...paths,
    el("p", {}, "Asked by gate ", code(a.gate_id), ": ", code(a.reason_code), a.matched_rule ? ", rule " : "", a.matched_rule ? code(a.matched_rule) : ""),
    a.message ? el("p", { class: "muted" }, a.message) : "",
    el("p", {}, who),
    el("pre", { class: "args" }, a.arguments ? JSON.stringify(a.arguments, null, 2) : "(arguments no longer held)"),
    el("p", { class: "muted" }, "arguments sha256 ", code(a.argument_digest), " · ", a.approval_id),
    el("div", { class: "actions" },
      el("button", { class: "approve", onclick: answer("allow") }, "Approve"),
      el("button", { class: "deny", onclick: answer("deny") }, "Deny"), reason));
  return card;
}

function renderApprovals() {
  const list = $("approval-list");
  list.replaceChildren(...[...state.approvals.values()].map(approvalCard));
  $("no-approvals").hidden = state.approvals.size > 0;
  $("pending-count").textContent = state.approvals.size;
  $("pending-count").classList.toggle("zero", state.approvals.size === 0);
  document.title = (state.approvals.size ? `(${state.approvals.size}) ` : "") + "govhost console";
}

async function loadApprovals() {
  const body = await getJSON("approvals");
  state.approvals = new Map(body.approvals.map((a) => [a.approval_id, a]));
  renderApprovals();
}

setInterval(() => document.querySelectorAll(".waited").forEach((e) => (e.textContent = "waiting " + waited(e.dataset.since))), 1000);

// ---- live decisions

function decisionShown(d) {
  const f = (id) => $(id).value.trim().toLowerCase();
  const has = (v, want) => !want || (v || "").toLowerCase().includes(want);
  return has(d.agent_name, f("f-agent")) && has(d.run_id, f("f-run")) && has(d.tool, f("f-tool")) && (!f("f-verdict") || d.verdict === f("f-verdict"));
}

function decisionRow(d) {
  return el("tr", { class: "decision", "data-verdict": d.verdict },
    el("td", {}, new Date(d.at).toLocaleTimeString()),
    el("td", { class: "v-" + d.verdict }, d.verdict),
    el("td", {}, code(d.tool), " ", d.operation || ""),
    el("td", {}, d.agent_name || ""), el("td", {}, d.run_id || ""),
    el("td", {}, d.gate_id ? code(d.gate_id) : "", d.reason_code ? " · " + d.reason_code : ""),
    el("td", {}, d.message || ""));
}

function renderDecisions() {
  $("decision-rows").replaceChildren(...state.decisions.filter(decisionShown).map(decisionRow));
}
$("filters").addEventListener("input", renderDecisions);

// ---- live stream

function connect() {
  const es = new EventSource("/ui/api/events");
  es.onopen = () => { $("live").textContent = "● live"; loadApprovals(); };
  es.onerror = () => { $("live").textContent = "○ reconnecting"; };
  es.addEventListener("pending", (e) => { const a = JSON.parse(e.data); state.approvals.set(a.approval_id, a); renderApprovals(); });
  es.addEventListener("resolved", (e) => { state.approvals.delete(JSON.parse(e.data).approval_id); renderApprovals(); });
  es.addEventListener("decision", (e) => {
    state.decisions.unshift(JSON.parse(e.data));
    state.decisions.length = Math.min(state.decisions.length, 500);
    renderDecisions();
  });
}

// ---- tasks and evidence

async function loadTasks() {
  const body = await getJSON("tasks");
  $("task-rows").replaceChildren(...body.tasks.map((t) => el("tr", { class: "task" },
    el("td", {}, el("a", { href: "#task/" + t.task_id, class: "task-link" }, t.task_id)),
    el("td", {}, t.state), el("td", {}, t.policy_version),
    el("td", {}, t.head ? code(short(t.head)) : ""),
    el("td", {}, t.certificate_id || ""))));
  state.tasks = body.tasks;
}

async function openTask(taskID) {
  if (!state.tasks.length) await loadTasks();
  const t = state.tasks.find((x) => x.task_id === taskID);
  $("task-id").textContent = taskID;
  const verdict = $("verdict");
  if (!t) { verdict.className = "verdict bad"; verdict.textContent = "Unknown task."; return; }
  $("task-meta").textContent = `${t.state} · chain ${t.chain_id} · policy ${t.policy_id}@${t.policy_version}`;
  $("chain-link").href = "/ui/api/chains/" + t.chain_id;
  $("bundle-link").hidden = t.state !== "closed";
  $("bundle-link").href = `/ui/api/tasks/${t.task_id}/bundle`;
  verdict.className = "verdict pending";
  verdict.textContent = "Verifying in this browser…";
  const records = GovVerify.parseLines(await (await api("chains/" + t.chain_id)).text());
  const rows = records.map((r) => el("tr", { class: "record", "data-record-id": r.record_id },
    el("td", {}, r.sequence), el("td", {}, code(r.record_id)), el("td", {}, r.record_type),
    el("td", {}, r.operation_id ? code(short(r.operation_id)) : ""), el("td", {}, r.created_at),
    el("td", {}, code(short(r.chain_hash))), el("td", { class: "mark" }, "…")));
  $("record-rows").replaceChildren(...rows);
  // The head to trust: the certificate's when one was minted, else the
  // chain's last record as served (then only the links are proven).
  let head = records.length ? records[records.length - 1].chain_hash : "";
  let headFrom = "the server's current head (no certificate yet)";
  if (t.certificate_id) {
    const cert = await getJSON("certificates/" + t.certificate_id);
    head = cert.certificate.evidence_chain_head;
    headFrom = "certificate " + t.certificate_id;
  }
  if (!window.crypto || !crypto.subtle) {
    verdict.className = "verdict bad";
    verdict.textContent = "This browser offers no WebCrypto here (a page not served from loopback or https): nothing was verified.";
    return;
  }
  const res = await GovVerify.verifyChain(records, head, (i, ok) => {
    rows[i].querySelector(".mark").textContent = ok ? "✓" : "✗";
    if (!ok) rows[i].classList.add("bad");
  });
  if (res.valid) {
    verdict.className = "verdict ok";
    verdict.textContent = `Verified in this browser: ${res.checked} records, every payload digest and chain hash recomputed; the chain ends at ${short(res.head)}, the head of ${headFrom}.`;
  } else {
    const f = res.failure;
    rows.slice(f.sequence + 1).forEach((row) => (row.querySelector(".mark").textContent = "not checked"));
    verdict.className = "verdict bad";
    verdict.textContent = `Verification FAILED at record ${f.recordId ?? "-"} (#${f.sequence}): ${f.code}: ${f.reason}.`;
  }
  verdict.dataset.valid = res.valid;
}

// ---- gates and policy

async function loadPolicy() {
  const res = await api("policy");
  const p = await res.json();
  if (!res.ok) { $("policy-meta").textContent = p.error.message; return; }
  $("policy-meta").replaceChildren("Policy ", code(p.policy.policy_id), "@", code(p.policy.version), ", ", p.policy.release_state, ", digest ", code(p.policy.digest));
  $("binding-rows").replaceChildren(...p.bindings.map((b) => el("tr", { class: "binding" },
    el("td", {}, b.order), el("td", {}, code(b.gate_id), b.transform ? " (transform)" : ""), el("td", {}, b.level),
    el("td", {}, (b.tool_ids || []).join(", ") || "every tool"),
    el("td", {}, code(b.module_digest), b.builtin ? ` (built-in ${b.builtin})` : ""), el("td", {}, b.abi_kind || "?"),
    el("td", {}, b.pool ? `${b.pool.live} / ${b.pool.idle} / ${b.pool.size}` : "not loaded yet"))));
}

// ---- start

(async () => {
  const res = await fetch("/ui/api/session", { credentials: "same-origin" });
  if (!res.ok) { signedOut(); return; }
  const s = await res.json();
  state.csrf = s.csrf_token;
  $("who").textContent = "signed in as " + s.approver;
  window.addEventListener("hashchange", show);
  show();
  connect();
})();
