"""Open the course in JupyterLab: what `make lab` runs.

    python scripts/lab.py [--ip IP] [--port PORT] [extra jupyter lab options]

Starts JupyterLab on notebooks/01_forward_pass.ipynb with the server's root at the repository,
so that a notebook's relative links (../figures/act_architecture.png, 02_binary_flag.ipynb) resolve. It works
the same everywhere, using JupyterLab's own options only:

  - no browser is opened (there may be no display): the log prints the URL to open, with its
    token and the port actually used;
  - it listens on 127.0.0.1 unless --ip or ACT_LAB_IP says otherwise; in a container, use
    ACT_LAB_IP=0.0.0.0 so that the host can reach it (`make lab ACT_LAB_IP=0.0.0.0`);
  - it starts at port 8888 (--port or ACT_LAB_PORT) and, if that port is taken, tries the next
    four and then random ports nearby (jupyter_server's port_retries, which also applies to a
    port given explicitly);
  - as root (a container's usual user) it passes --allow-root, and only then.

Options the script does not know go to `jupyter lab` unchanged. The script replaces itself with
the server (exec), so Ctrl+C and signals reach JupyterLab directly and no extra process is left.
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_NOTEBOOK = "notebooks/01_forward_pass.ipynb"
PORT_RETRIES = 50  # jupyter_server's default, set here so a user's config cannot turn it off


def lab_command(ip, port, extra=()):
    """The `jupyter lab` command line, run with this script's Python."""
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        f"--ip={ip}",
        f"--port={port}",
        f"--ServerApp.port_retries={PORT_RETRIES}",
        f"--ServerApp.root_dir={ROOT}",
        # the URL the log prints (and where / redirects): the first notebook, not an empty lab;
        # LabApp's setting, since it overrides the server's own
        f"--LabApp.default_url=/lab/tree/{FIRST_NOTEBOOK}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return command + list(extra)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ip", default=os.environ.get("ACT_LAB_IP", "127.0.0.1"),
                        help="address to listen on (env ACT_LAB_IP; default 127.0.0.1, 0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("ACT_LAB_PORT", "8888")),
                        help="first port to try (env ACT_LAB_PORT; default 8888)")
    args, extra = parser.parse_known_args(argv)
    command = lab_command(args.ip, args.port, extra)
    os.chdir(ROOT)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
