"""JupyterLab on the course (scripts/lab.py, `make lab`): the command line it runs, and the exec.

The standard library only (and ``act_experiments.files`` for ROOT, which needs no more), so that it
starts before anything heavy is imported. The options,
and why each is set: scripts/lab.py.
"""

import argparse
import os
import sys
from pathlib import Path

from act_experiments.files import ROOT

DESCRIPTION = "Open the course in JupyterLab: what `make lab` runs."
FIRST_NOTEBOOK = "notebooks/01_forward_pass.ipynb"
PORT_RETRIES = 50  # jupyter_server's default, set here so a user's config cannot turn it off


def lab_command(ip, port, extra=(), course=None):
    """The `jupyter lab` command line, run with this Python: on the repository, or with ``course``
    (an nbgrader course folder, `make course`'s build/course/) on that folder's formgrader."""
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        f"--ip={ip}",
        f"--port={port}",
        f"--ServerApp.port_retries={PORT_RETRIES}",
        f"--ServerApp.root_dir={course or ROOT}",
        # the URL the log prints (and where / redirects): the first notebook, not an empty lab;
        # LabApp's setting, since it overrides the server's own
        f"--LabApp.default_url={'/formgrader' if course else '/lab/tree/' + FIRST_NOTEBOOK}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command + list(extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("--ip", default=os.environ.get("ACT_LAB_IP", "127.0.0.1"),
                        help="address to listen on (env ACT_LAB_IP; default 127.0.0.1, 0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("ACT_LAB_PORT", "8888")),
                        help="first port to try (env ACT_LAB_PORT; default 8888)")
    parser.add_argument("--course", type=Path, default=None,
                        help="an nbgrader course folder (make course): open its formgrader instead")
    args, extra = parser.parse_known_args(argv)
    course = args.course.resolve() if args.course else None
    if course is not None and not (course / "nbgrader_config.py").is_file():
        parser.error(f"--course: {args.course} holds no nbgrader_config.py; build one with `make course`")
    command = lab_command(args.ip, args.port, extra, course)
    if course is not None:
        # nbgrader reads nbgrader_config.py from the folder it starts in, and makes its gradebook
        # through the `alembic` command that sits beside this Python
        os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    os.chdir(course or ROOT)
    os.execv(command[0], command)       # returns only where execv is replaced (the tests)
    return 0

