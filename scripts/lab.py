"""Open the course in JupyterLab: what `make lab` runs.

    python scripts/lab.py [--ip IP] [--port PORT] [extra jupyter lab options]
    python scripts/lab.py --course build/course     # nbgrader's formgrader on a course (make formgrader)

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

With --course DIR (an nbgrader course folder, as `make course` builds), the server's root is that
folder, it starts there (where nbgrader reads nbgrader_config.py) and the URL opens the formgrader.

Options the script does not know go to `jupyter lab` unchanged. The script replaces itself with
the server (exec), so Ctrl+C and signals reach JupyterLab directly and no extra process is left.
"""

import sys

from act_course.lab import main

if __name__ == "__main__":
    sys.exit(main())
