"""Tests against a real `govhost serve`: GOVHOST_URL and GOVHOST_DATA name it
(cmd/govhost's TestPythonClient starts one and runs these)."""

import datetime
import hashlib
import io
import os
import tarfile
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from govhost_client import (  # noqa: E402
    ApprovalPending,
    Client,
    GovernanceDenied,
    GovhostError,
    Unreachable,
    governed,
)

URL = os.environ.get("GOVHOST_URL", "")
DATA = os.environ.get("GOVHOST_DATA", "")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "internal", "wasmfixtures", "wasm")


@unittest.skipUnless(URL and DATA, "needs GOVHOST_URL and GOVHOST_DATA of a running govhost serve")
class ClientTest(unittest.TestCase):
    def setUp(self):
        self.gh = Client.from_data_dir(URL, DATA)

    def test_governed_function_runs_once_with_final_arguments_and_mints(self):
        calls = []
        with self.gh.task(actor=("agent", "py")) as task:
            @governed(task, tool="reader")
            def read(path):
                calls.append(path)
                return "contents of " + path

            self.assertEqual(read(path="notes.md"), "contents of notes.md")
        self.assertEqual(calls, ["notes.md"])
        cert = task.certificate["certificate"]
        self.assertEqual(cert["process_grade"], "FULL")
        self.assertEqual(cert["gate_summary"]["hard_allow"], 1)
        chain = self.gh.export_chain(task.chain_id)
        self.assertIn(hashlib.sha256(b"contents of notes.md").hexdigest(), chain, "the result digest, not the result")
        self.assertNotIn("contents of notes.md", chain)
        self.assertTrue(self.gh.verify_chain(task.chain_id, cert["evidence_chain_head"])["valid"])

    def test_denial_is_a_typed_exception_and_the_tool_does_not_run(self):
        ran = []
        with self.gh.task() as task:
            @governed(task, tool="bash")
            def bash(command):
                ran.append(command)

            with self.assertRaises(GovernanceDenied) as ctx:
                bash(command="rm -rf /")
        self.assertEqual(ctx.exception.reason_code, "destructive.rm_recursive_force")
        self.assertEqual(ctx.exception.gate_id, "destructive")
        self.assertTrue(ctx.exception.message)
        self.assertEqual(ran, [])
        self.assertIsNotNone(task.certificate, "a recorded denial still certifies")

    def test_tool_exception_is_recorded_as_failed_and_reraised(self):
        with self.gh.task() as task:
            @governed(task, tool="reader")
            def read(path):
                raise FileNotFoundError(path)

            with self.assertRaises(FileNotFoundError):
                read(path="missing.txt")
        chain = self.gh.export_chain(task.chain_id)
        self.assertIn("callable_failed", chain)
        self.assertIn("filenotfounderror", chain)
        self.assertNotIn("missing.txt", chain)

    def test_approval_flow(self):
        with self.gh.task() as task:
            def reviewer():
                for _ in range(400):
                    pending = self.gh.approvals()
                    if pending:
                        self.gh.resolve_approval(pending[0]["approval_id"], "allow", approver=("user", "rev"))
                        return
                    time.sleep(0.025)

            threading.Thread(target=reviewer, daemon=True).start()
            out = task.call("bash", lambda command: "ran " + command, {"command": "make"}, approval_timeout=20)
            self.assertEqual(out, "ran make")
            with self.assertRaises(ApprovalPending) as ctx:
                task.call("bash", lambda command: None, {"command": "make deploy"})
            # Nobody approved in time: a reviewer rejects it, and the waiting
            # authorization ends as a recorded deny before the task closes.
            self.gh.resolve_approval(ctx.exception.approval_id, "deny", approver=("user", "rev"))
            res = self.gh.wait(ctx.exception.authorization_id, 10000)
            self.assertEqual(res["decision"], "deny")
            self.assertEqual(res["denial"]["reason_code"], "approval.required")
        self.assertEqual(len(task.closed["unfinished_operations"]), 0)
        self.assertIsNotNone(task.certificate)

    def test_refusals_carry_code_and_status(self):
        with self.assertRaises(GovhostError) as ctx:
            self.gh.authorize("00000000-0000-4000-8000-000000000000", "reader", {})
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "task_not_found"))
        bad = Client(URL, "x" * 40)
        with self.assertRaises(GovhostError) as ctx:
            bad.open_task()
        self.assertEqual((ctx.exception.status, ctx.exception.code), (401, "unauthorized"))
        task = self.gh.task()
        permit = self.gh.authorize(task.id, "reader", {"path": "a"})["permit"]
        self.gh.complete(task.id, permit["permit_id"])
        with self.assertRaises(GovhostError) as ctx:
            self.gh.complete(task.id, permit["permit_id"])
        self.assertEqual(ctx.exception.code, "permit_used")
        task.close()

    def test_upload_and_list_modules(self):
        with open(os.path.join(FIXTURES, "c_gate.wasm"), "rb") as f:
            wasm = f.read()
        digest = hashlib.sha256(wasm).hexdigest()
        first = self.gh.upload_module(wasm)
        self.assertEqual((first["sha256"], first["abi_kind"], first["size"]), (digest, "native", len(wasm)))
        self.assertIn("gate_evaluate", first["exports"])
        again = self.gh.upload_module(wasm)
        self.assertFalse(again["created"], "the same bytes twice: already stored")
        self.assertIn(digest, [m["sha256"] for m in self.gh.modules()])
        self.assertEqual(self.gh.module(digest)["abi_kind"], "native")
        before = self.gh.modules()
        for bad, status, code in ((b"", 400, "module_empty"), (b"MZ not wasm", 422, "gate.invalid_module")):
            with self.assertRaises(GovhostError) as ctx:
                self.gh.upload_module(bad)
            self.assertEqual((ctx.exception.status, ctx.exception.code), (status, code))
        self.assertEqual(self.gh.modules(), before, "a refused upload stores nothing")

    def test_policies_bundle_checkpoint_and_break_glass(self):
        policies = self.gh.policies()
        self.assertTrue(any(p["release_state"] == "active" for p in policies))
        pid = policies[0]["policy_id"]
        self.assertTrue(all(p["policy_id"] == pid for p in self.gh.policy_versions(pid)))

        op = Client.from_data_dir("", DATA, operator=True)
        self.assertEqual(op.base_url, URL.rstrip("/"), "found from DATA/serve.json")
        task = self.gh.task(actor=("agent", "py"))
        denied = self.gh.authorize(task.id, "bash", {"command": "sudo ls"})
        self.assertEqual(denied["decision"], "deny")
        gate = denied["denial"]["gate_id"]
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
        with self.assertRaises(GovhostError) as ctx:
            self.gh.grant_exception(task.id, gate, "bash", "incident.9", expires, break_glass=True)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (403, "forbidden"))
        grant = op.grant_exception(task.id, gate, "bash", "incident.9", expires, issuer="bob", break_glass=True)
        self.assertEqual(grant["issued_by"], {"kind": "operator", "id": "bob"})
        allowed = self.gh.authorize(task.id, "bash", {"command": "sudo ls"})
        self.assertEqual(allowed["decision"], "allow")
        self.gh.complete(task.id, allowed["permit"]["permit_id"])
        task.close()

        b = self.gh.bundle(task.id, checkpoint=True)
        self.assertEqual(b["certificate"]["process_grade"], "DEGRADED")
        self.assertEqual(b["chain"][-1]["chain_hash"], b["certificate"]["evidence_chain_head"])
        self.assertIn(task.chain_id, b["checkpoint"])
        names = tarfile.open(fileobj=io.BytesIO(self.gh.bundle_tar(task.id, checkpoint=True))).getnames()
        self.assertEqual(sorted(names), ["certificate.json", "chain.jsonl", "checkpoint", "policy.json"])
        note = op.sign_checkpoint(task.chain_id)["note"]
        self.assertIn(task.chain_id, note)

    def test_unreachable_server(self):
        with self.assertRaises(Unreachable):
            Client("http://127.0.0.1:9", "x" * 40, timeout=2).open_task()


if __name__ == "__main__":
    unittest.main()
