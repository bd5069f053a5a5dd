r"""An agent loop governed by a running `govhost serve`.

    make run                                   # in another terminal
    python3 clients/python/examples/agent_loop.py [URL] [DATA_DIR]

A scripted "model" proposes tool calls; each runs only if govhost allows it.
Denials are reported back to the model as the tool's answer, as an agent
framework would. At the end the task is closed and its certificate minted.

The tools are named as govhost's default policy knows them ("read": read a
file, "bash": run a command), so under `make run` it prints:

    allow  read {"path": "README.md"} -> "# govhost\n\ngovhost decides whether ..."
    deny   bash {"command": "rm -rf / --no-preserve-root"}: destructive.rm_recursive_force (permission denied: ...)
    allow  bash {"command": "echo hello from a governed shell"} -> 'hello from a governed shell\n'

(the default allows reads inside the task's workspace and read-only shell
commands such as echo; a policy that sends bash to an approver gets the
example's stand-in reviewer.)
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from govhost_client import ApprovalPending, Client, GovernanceDenied  # noqa: E402


def read_file(path):
    with open(path, encoding="utf-8") as f:
        return f.read()[:200]


def bash(command):
    return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=30).stdout[:200]


TOOLS = {"read": read_file, "bash": bash}

# What the "model" asks for, in order.
PLAN = [
    ("read", {"path": "README.md"}),
    ("bash", {"command": "rm -rf / --no-preserve-root"}),
    ("bash", {"command": "echo hello from a governed shell"}),
]


def main():
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8181"
    data = sys.argv[2] if len(sys.argv) > 2 else "govhost-data"
    gh = Client.from_data_dir(url, data)
    # The example plays the human reviewer too and approves what waits for
    # approval; GOVHOST_EXAMPLE_APPROVE=0 leaves the approval to you
    # (curl .../v1/approvals, then POST .../v1/approvals/ID within 10 s).
    approve = os.environ.get("GOVHOST_EXAMPLE_APPROVE", "1") != "0"
    with gh.task(actor=("agent", "example"), workspace=os.getcwd()) as task:
        for tool, args in PLAN:
            try:
                if approve and tool == "bash":
                    # Stand in for a human reviewer: approve what waits for approval.
                    import threading

                    def reviewer():
                        import time
                        for _ in range(100):
                            for a in gh.approvals():
                                gh.resolve_approval(a["approval_id"], "allow", approver=("user", "reviewer"))
                                return
                            time.sleep(0.05)

                    threading.Thread(target=reviewer, daemon=True).start()
                out = task.call(tool, TOOLS[tool], args, wait_ms=10000)
                print(f"allow  {tool} {json.dumps(args)} -> {out!r}")
            except GovernanceDenied as d:
                print(f"deny   {tool} {json.dumps(args)}: {d.reason_code} ({d.message})")
            except ApprovalPending as p:
                print(f"wait   {tool} {json.dumps(args)}: approval {p.approval_id} not given")
                print("       (the operation stays unfinished; this task will not be certified)")
    closed = task.closed
    print("chain", closed["chain_id"], "head", closed["head"])
    if task.certificate:
        print("certificate", json.dumps(task.certificate["certificate"], indent=2))
    else:
        print("not certified:", task.not_certified)


if __name__ == "__main__":
    main()
