"""Client of a running `govhost serve` (HTTP API /v1), standard library only.

    from govhost_client import Client, governed, GovernanceDenied

    gh = Client.from_data_dir("http://127.0.0.1:8181", "govhost-data")
    with gh.task(actor=("agent", "coder")) as task:
        @governed(task, tool="bash")
        def bash(command):
            return subprocess.run(command, shell=True, capture_output=True).stdout

        bash(command="ls")          # authorize -> run -> complete
        bash(command="rm -rf /")    # raises GovernanceDenied("destructive.rm_recursive_force", ...)
    print(task.certificate)        # minted when the block closes the task
"""

from .client import (  # noqa: F401
    ApprovalPending,
    Client,
    GovernanceDenied,
    GovhostError,
    Task,
    Unreachable,
    governed,
)

__all__ = ["Client", "Task", "governed", "GovernanceDenied", "ApprovalPending", "GovhostError", "Unreachable"]
