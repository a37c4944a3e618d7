"""`make lab` starts JupyterLab on the course, as root or not, without a browser, on a free port.

Each test starts the server exactly as `make lab` does (scripts/lab.py, passing only a port),
reads the URL it prints, fetches the course over HTTP on 127.0.0.1 and stops it. Jupyter's
runtime, config and data directories live in tmp_path, so nothing is written to the repository.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from act_course import lab

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "scripts" / "lab.py"
NOTEBOOK = "notebooks/01_forward_pass.ipynb"
FIGURE = "figures/01_halting_distribution.png"  # linked from notebook 01 as ../figures/...
READY_S = 60
URL_RE = re.compile(r"http://127\.0\.0\.1:(\d+)(/\S*)\?token=(\w+)")

# talk to 127.0.0.1 directly, whatever http_proxy says
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def jupyter_env(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUPYTER", "JPY_", "ACT_LAB_")) and k not in ("IPYTHONDIR",)}
    for name in ("JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR",
                 "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[name] = str(tmp_path / name.lower())
    return env


def get(url, timeout=10):
    with OPENER.open(url, timeout=timeout) as response:
        return response.status, response.read()


def start_lab(tmp_path, port, *options):
    """Start scripts/lab.py; return (process, log path)."""
    log = tmp_path / "lab.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, str(LAB), "--port", str(port), *options], cwd=ROOT,
                                   env=jupyter_env(tmp_path), stdin=subprocess.DEVNULL,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return process, log


def wait_for_url(process, log):
    """The URL the server prints, once it answers: (port, path, token, seconds)."""
    start = time.monotonic()
    while time.monotonic() - start < READY_S:
        if process.poll() is not None:
            pytest.fail(f"scripts/lab.py exited with {process.returncode}:\n{log.read_text()}")
        found = URL_RE.search(log.read_text(errors="replace"))
        if found:
            port, path, token = int(found[1]), found[2], found[3]
            try:
                get(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2)
                return port, path, token, time.monotonic() - start
            except OSError:
                pass
        time.sleep(0.25)
    pytest.fail(f"no answer within {READY_S} s:\n{log.read_text()}")


def stop(process):
    """SIGTERM, then SIGKILL to the whole session after 20 s; nothing is left running."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    try:  # anything the server started (a kernel) shares its session
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_command_allows_root_only_as_root_and_reads_the_address_from_the_environment(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "execv", lambda path, argv: calls.append(argv))
    monkeypatch.setattr(os, "chdir", lambda path: None)
    monkeypatch.setenv("ACT_LAB_IP", "0.0.0.0")
    monkeypatch.setenv("ACT_LAB_PORT", "9999")
    for euid in (0, 1000):
        monkeypatch.setattr(os, "geteuid", lambda: euid)
        lab.main(["--ServerApp.token=x"])
    as_root, as_user = calls
    assert "--allow-root" in as_root and "--allow-root" not in as_user
    assert {"--no-browser", "--ip=0.0.0.0", "--port=9999", "--ServerApp.token=x"} <= set(as_user)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_lab_serves_the_first_notebook_with_its_figures(tmp_path):
    process, log = start_lab(tmp_path, free_port())
    try:
        port, path, token, seconds = wait_for_url(process, log)
        base = f"http://127.0.0.1:{port}"
        assert path == f"/lab/tree/{NOTEBOOK}", f"printed URL opens {path}"

        status, page = get(f"{base}{path}?token={token}")
        assert status == 200 and b"JupyterLab" in page

        status, body = get(f"{base}/api/contents/{NOTEBOOK}?content=1&token={token}")
        model = json.loads(body)
        on_disk = json.loads((ROOT / NOTEBOOK).read_text())
        assert status == 200 and model["type"] == "notebook"
        assert [c["source"] for c in model["content"]["cells"]] == [
            "".join(c["source"]) for c in on_disk["cells"]]

        # the server's root is the repository, so ../figures/ links from notebooks/ resolve
        status, png = get(f"{base}/files/{FIGURE}?token={token}")
        assert status == 200 and png == (ROOT / FIGURE).read_bytes()
        print(f"answered after {seconds:.1f} s on port {port}")
    finally:
        stop(process)
    assert process.returncode is not None


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_lab_moves_to_another_port_when_its_port_is_taken(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        process, log = start_lab(tmp_path, taken)
        try:
            port, path, token, _ = wait_for_url(process, log)
            assert port != taken
            assert f"The port {taken} is already in use" in log.read_text()
            status, _ = get(f"http://127.0.0.1:{port}{path}?token={token}")
            assert status == 200
        finally:
            stop(process)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_formgrader_opens_on_a_built_course(tmp_path):
    """`make formgrader`: scripts/lab.py --course on make course's folder serves nbgrader's
    formgrader at the URL it prints, with the course's assignments in its gradebook."""
    from act_course.grading import assignments
    course = tmp_path / "course"
    assignments.build(course, generate=False)
    process, log = start_lab(tmp_path, free_port(), "--course", str(course))
    try:
        port, path, token, _ = wait_for_url(process, log)
        assert path == "/formgrader", f"printed URL opens {path}"
        # (the printed URL redirects here; a browser keeps the token's cookie, urllib does not)
        status, page = get(f"http://127.0.0.1:{port}{path}/manage_assignments?token={token}", timeout=60)
        assert status == 200 and b"<title>nbgrader formgrade</title>" in page
        status, body = get(f"http://127.0.0.1:{port}/formgrader/api/assignments?token={token}", timeout=60)
        assert {entry["name"] for entry in json.loads(body)} == set(assignments.ASSIGNMENTS)
    finally:
        stop(process)


def test_the_formgrader_needs_a_course_folder(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop_:
        lab.main(["--course", str(tmp_path)])
    assert stop_.value.code == 2
    assert "holds no nbgrader_config.py" in capsys.readouterr().err
