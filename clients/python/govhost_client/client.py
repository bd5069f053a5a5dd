"""The client, the task handle and the @governed wrapper."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable, Dict, Optional, Tuple


class GovhostError(Exception):
    """The server refused a request: HTTP status, stable code, message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{code} (HTTP {status}): {message}")
        self.status = status
        self.code = code
        self.message = message


class Unreachable(Exception):
    """No answer from the server. A governed call must not run then."""


class GovernanceDenied(Exception):
    """A gate denied the call (recorded in evidence); the tool did not run."""

    def __init__(self, reason_code: str, message: str, gate_id: str = "", operation_id: str = ""):
        super().__init__(f"{reason_code}: {message}" if message else reason_code)
        self.reason_code = reason_code
        self.message = message
        self.gate_id = gate_id
        self.operation_id = operation_id


class ApprovalPending(Exception):
    """An approver has not answered within the wait; the tool did not run."""

    def __init__(self, authorization_id: str, approval_id: str):
        super().__init__(f"waiting for approval {approval_id} (authorization {authorization_id})")
        self.authorization_id = authorization_id
        self.approval_id = approval_id


class Client:
    """One server. Thread-safe (every call is its own HTTP request)."""

    def __init__(self, base_url: str, token: str, timeout: float = 90.0):
        self.base_url = base_url.rstrip("/")
        self.token = token.strip()
        self.timeout = timeout

    @classmethod
    def from_data_dir(cls, base_url: str, data_dir: str, operator: bool = False, **kw: Any) -> "Client":
        """Read the token from the server's data directory: the agents' (DATA/token),
        or with operator=True the operator's (DATA/operator-token), which operator
        routes (checkpoints, exceptions, break-glass) need. base_url "" means the
        server that holds data_dir (see discover)."""
        if not base_url:
            base_url = cls.discover(data_dir)
        name = "operator-token" if operator else "token"
        with open(os.path.join(data_dir, name), encoding="utf-8") as f:
            return cls(base_url, f.read(), **kw)

    @staticmethod
    def discover(data_dir: str) -> str:
        """The URL a running `govhost serve` records in its data directory
        (DATA/serve.json; never a token). Raises Unreachable when there is none."""
        try:
            with open(os.path.join(data_dir, "serve.json"), encoding="utf-8") as f:
                return json.load(f)["url"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise Unreachable(f"no running govhost serve recorded in {data_dir}: {e}") from None

    def request(self, method: str, path: str, body: Any = None, raw: Optional[bytes] = None) -> Tuple[int, Any]:
        """One exchange: body is sent as JSON, raw (a .wasm module) as bytes."""
        data = None
        headers = {"Authorization": "Bearer " + self.token}
        if raw is not None:
            data = bytes(raw)
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            data = json.dumps(body, allow_nan=False).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                status = resp.status
                ctype = resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
            except (ValueError, KeyError, TypeError):
                raise Unreachable(f"HTTP {e.code} from {method} {path} without an error body") from None
            raise GovhostError(e.code, err["code"], err["message"]) from None
        except (urllib.error.URLError, OSError) as e:
            raise Unreachable(f"{method} {path}: {e}") from None
        if ctype.startswith("application/json"):
            return status, json.loads(raw)
        if ctype.startswith("application/x-tar"):
            return status, raw
        return status, raw.decode()

    # --- tasks ---------------------------------------------------------------
    def open_task(self, actor: Optional[Tuple[str, str]] = None, workspace: str = "", role: str = "",
                  resource: str = "", policy_id: str = "", version: str = "") -> Dict[str, Any]:
        body: Dict[str, Any] = {}
        if actor:
            body["actor"] = {"kind": actor[0], "id": actor[1]}
        for k, v in (("workspace", workspace), ("role", role), ("resource", resource),
                     ("policy_id", policy_id), ("version", version)):
            if v:
                body[k] = v
        return self.request("POST", "/v1/tasks", body)[1]

    def close_task(self, task_id: str) -> Dict[str, Any]:
        return self.request("POST", f"/v1/tasks/{task_id}/close", {})[1]

    def task(self, mint: bool = True, **open_kw: Any) -> "Task":
        """A task as a context manager: opened now, closed (and minted) on exit."""
        return Task(self, self.open_task(**open_kw), mint=mint)

    # --- the two phases ------------------------------------------------------
    def authorize(self, task_id: str, tool: str, arguments: Dict[str, Any], wait_ms: int = 0,
                  **call: Any) -> Dict[str, Any]:
        body = {"tool": tool, "arguments": arguments, **call}
        if wait_ms:
            body["wait_ms"] = wait_ms
        return self.request("POST", f"/v1/tasks/{task_id}/authorize", body)[1]

    def wait(self, authorization_id: str, wait_ms: int = 30000) -> Dict[str, Any]:
        q = urllib.parse.urlencode({"wait_ms": wait_ms})
        return self.request("GET", f"/v1/authorizations/{urllib.parse.quote(authorization_id)}?{q}")[1]

    def complete(self, task_id: str, permit_id: str, failed: bool = False, error_class: str = "",
                 result_digest: str = "", duration_us: int = 0) -> Dict[str, Any]:
        body: Dict[str, Any] = {"permit_id": permit_id}
        if failed:
            body["failed"] = True
        if error_class:
            body["error_class"] = error_class
        if result_digest:
            body["result_digest"] = result_digest
        if duration_us:
            body["duration_us"] = int(duration_us)
        return self.request("POST", f"/v1/tasks/{task_id}/complete", body)[1]

    # --- approvals, certificates, chains ------------------------------------
    def approvals(self):
        return self.request("GET", "/v1/approvals")[1]["approvals"]

    def resolve_approval(self, approval_id: str, decision: str, approver: Optional[Tuple[str, str]] = None):
        body: Dict[str, Any] = {"decision": decision}
        if approver:
            body["approver"] = {"kind": approver[0], "id": approver[1]}
        return self.request("POST", f"/v1/approvals/{urllib.parse.quote(approval_id)}", body)[1]

    def mint(self, chain_id: str, expected_head: str = "") -> Dict[str, Any]:
        body = {"expected_head": expected_head} if expected_head else {}
        return self.request("POST", f"/v1/chains/{chain_id}/certificate", body)[1]

    def export_chain(self, chain_id: str) -> str:
        return self.request("GET", f"/v1/chains/{chain_id}")[1]

    def verify_chain(self, chain_id: str, expected_head: str) -> Dict[str, Any]:
        return self.request("POST", f"/v1/chains/{chain_id}/verify", {"expected_head": expected_head})[1]

    # --- policies, bundles, checkpoints --------------------------------------
    def policies(self):
        """Every stored policy version (policy_id, version, digest, release_state, gate_count)."""
        return self.request("GET", "/v1/policies")[1]["policies"]

    def policy_versions(self, policy_id: str):
        """The stored versions of one policy."""
        return self.request("GET", f"/v1/policies/{policy_id}")[1]["policies"]

    def bundle(self, task_id: str, checkpoint: bool = False) -> Dict[str, Any]:
        """A closed task's certificate with its proof: certificate, chain (the
        records), policy and, with checkpoint=True, the head signed with the data
        directory's key (a C2SP signed note)."""
        q = "?checkpoint=1" if checkpoint else ""
        return self.request("GET", f"/v1/tasks/{task_id}/bundle{q}")[1]

    def bundle_tar(self, task_id: str, checkpoint: bool = False) -> bytes:
        """The same bundle as the tar archive of a bundle folder (govhost cert verify reads it unpacked)."""
        q = urllib.parse.urlencode({"format": "tar", **({"checkpoint": "1"} if checkpoint else {})})
        return self.request("GET", f"/v1/tasks/{task_id}/bundle?{q}")[1]

    def sign_checkpoint(self, chain_id: str) -> Dict[str, Any]:
        """Sign a chain's current head (operator token): {chain_id, note}."""
        return self.request("POST", "/v1/checkpoints", {"chain_id": chain_id})[1]

    # --- exception grants (operator token) ----------------------------------
    def grant_exception(self, task_id: str, gate_id: str, tool_id: str, reason_code: str, expires_at: Any,
                        actor: Optional[Tuple[str, str]] = None, issuer: str = "",
                        break_glass: bool = False) -> Dict[str, Any]:
        """Record a single-use grant in an open task that excuses the next deny of
        gate_id for tool_id (a soft deny; with break_glass=True a hard one too).
        expires_at is a timezone-aware datetime or an RFC 3339 string: there is no
        default expiry. The task's certificate becomes DEGRADED."""
        if hasattr(expires_at, "isoformat"):
            expires_at = expires_at.isoformat()
        body: Dict[str, Any] = {"gate_id": gate_id, "tool_id": tool_id, "reason_code": reason_code,
                                "expires_at": expires_at}
        if actor:
            body["actor"] = {"kind": actor[0], "id": actor[1]}
        if issuer:
            body["issuer"] = issuer
        route = "break-glass" if break_glass else "exceptions"
        return self.request("POST", f"/v1/tasks/{task_id}/{route}", body)[1]

    # --- gate modules --------------------------------------------------------
    def upload_module(self, wasm: bytes) -> Dict[str, Any]:
        """Upload a gate module's bytes: checked as a gate, stored by its sha256.
        The answer has sha256, abi_kind ("native" or "extism"), exports, size and
        created (False: the same bytes were already stored). A refused module
        raises GovhostError with the host's code (gate.invalid_module,
        gate.missing_export, gate.bad_import, ...) or module_empty."""
        return self.request("POST", "/v1/modules", raw=wasm)[1]

    def modules(self):
        """The stored gate modules."""
        return self.request("GET", "/v1/modules")[1]["modules"]

    def module(self, digest: str) -> Dict[str, Any]:
        return self.request("GET", f"/v1/modules/{urllib.parse.quote(digest)}")[1]


class Task:
    """An open task. Leaving the `with` block closes it and mints its certificate."""

    def __init__(self, client: Client, info: Dict[str, Any], mint: bool = True):
        self.client = client
        self.info = info
        self.id = info["task_id"]
        self.chain_id = info["chain_id"]
        self.mint_on_close = mint
        self.closed: Optional[Dict[str, Any]] = None
        self.certificate: Optional[Dict[str, Any]] = None
        self.not_certified = ""  # why minting was refused, when it was

    def __enter__(self) -> "Task":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> Dict[str, Any]:
        if self.closed is None:
            self.closed = self.client.close_task(self.id)
            if self.mint_on_close:
                try:
                    self.certificate = self.client.mint(self.chain_id, self.closed["head"])
                except GovhostError as e:
                    if e.code != "not_mintable":
                        raise
                    self.not_certified = e.message
        return self.closed

    def call(self, tool: str, fn: Callable[..., Any], arguments: Dict[str, Any], wait_ms: int = 0,
             approval_timeout: float = 0.0, **call: Any) -> Any:
        """authorize -> run fn(**final arguments) -> complete. A deny raises
        GovernanceDenied; an approval not given within the waits raises
        ApprovalPending. fn's exception is recorded (its class name) and re-raised."""
        res = self.client.authorize(self.id, tool, arguments, wait_ms=wait_ms, **call)
        deadline = time.monotonic() + approval_timeout
        while res["decision"] == "pending_approval":
            left = deadline - time.monotonic()
            if left <= 0:
                raise ApprovalPending(res["authorization_id"], res.get("approval_id", ""))
            res = self.client.wait(res["authorization_id"], int(min(left, 60.0) * 1000))
        if res["decision"] == "deny":
            d = res["denial"]
            raise GovernanceDenied(d["reason_code"], d.get("message", ""), d.get("gate_id", ""), d["operation_id"])
        permit = res["permit"]
        start = time.monotonic()
        try:
            result = fn(**permit["arguments"])
        except BaseException as e:
            self.client.complete(self.id, permit["permit_id"], failed=True, error_class=_error_class(e),
                                 duration_us=int((time.monotonic() - start) * 1e6))
            raise
        self.client.complete(self.id, permit["permit_id"], result_digest=_digest(result),
                             duration_us=int((time.monotonic() - start) * 1e6))
        return result


def governed(task: Task, tool: str, wait_ms: int = 0, approval_timeout: float = 0.0, **call: Any):
    """Decorate a tool function so every call is governed in task: called with
    keyword arguments, which are the tool's arguments."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def inner(**arguments: Any) -> Any:
            return task.call(tool, fn, arguments, wait_ms=wait_ms, approval_timeout=approval_timeout, **call)

        return inner

    return wrap


def _error_class(e: BaseException) -> str:
    # A short token, never the message (which could carry data).
    name = "".join(ch if ch.isalnum() else "_" for ch in type(e).__name__.lower())
    return (name or "error")[:64]


def _digest(result: Any) -> str:
    if isinstance(result, bytes):
        data = result
    elif isinstance(result, str):
        data = result.encode()
    else:
        try:
            data = json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
        except (TypeError, ValueError):
            data = repr(result).encode()
    return hashlib.sha256(data).hexdigest()
