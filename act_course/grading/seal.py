"""The seal: what a grading kernel may not reach while ``nbgrader autograde`` runs a submission.

Every check cell outside the judged exercises runs in the learner's kernel, started by nbgrader
(``preprocessors.SealedExecute``). Before the first cell runs, the kernel calls
``seal_kernel(spec)``, which installs an audit hook (``sys.addaudithook``: it cannot be removed)
that refuses, for the rest of the kernel's life,

- to open, list, rename, link or delete anything inside the denied folders: the course folder
  (source/, release/, gradebook.db, other students' submitted/ and autograded/) but the kernel's
  own working folder, nbgrader's exchange, Jupyter's runtime folder (the keys of running
  kernels) and, when the course is installed from a checkout, every entry of the repository but
  the course's packages, results/ and the venv (notebooks/, build/, .git, ...);
- to open any notebook (``*.ipynb``), anywhere, and any SQLite database (``sqlite3.connect``);
- whatever the path's form: str, bytes or a pathlib path, resolved to its real path (links and
  ``..`` followed, as the system does); a relative path read from the working folder and from
  every folder the process holds open, since a ``dir_fd`` (``os.open(b"../x", dir_fd=fd)``, what
  ``openat`` does) never reaches the hook; a listing or walk through a descriptor
  (``os.listdir(fd)``, ``os.scandir(fd)``, ``os.fwalk(dir_fd=fd)``) checked on the folder the
  system's table says it names. The repositories the course comes from (the one its packages are
  installed from, and the one the venv lives in) are denied but their packages, results/ and
  the venv, so a climb from site-packages reaches nothing;
- subprocesses (``subprocess``, ``os.system``, ``os.exec*``, ``os.posix_spawn``, ``os.fork``,
  ``_posixsubprocess.fork_exec``), sockets' connections, calls through ctypes, new interpreters,
  tracing, and a shared library loaded from anywhere but the Python installation and the
  system's library folders;
- to write into the Python installation or the course's packages, or to write a file named as
  a shared library, so that nothing is left behind for a later kernel.

An answer's code can rebind anything a module reads at call time (``os.path.realpath``,
``builtins.isinstance``, this module's globals). The hook therefore reads no global name: what it
calls is bound as a default argument when the seal is made, and setting ``__defaults__`` or
``__code__`` of a function of this file is refused. What it does not stop: ``os.stat`` and the
like, which Python audits nowhere (they tell a file's size and times, never its content); native code that
corrupts memory (crafted bytecode, say) can defeat any hook in the process, and a learner who
has the published solutions can paste them; docs/teaching.md says what a teacher can do.
"""

import json
import os
import stat
import sys
import types

# events refused outright (a prefix of the event's name); what each is is in Python's table of
# audit events
REFUSED = ("subprocess.", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty",
           "pty.", "ctypes.dlsym", "ctypes.call_function", "ctypes.cdata", "ctypes.string_at",
           "ctypes.wstring_at", "socket.connect", "socket.sendto", "socket.sendmsg", "socket.bind",
           "sqlite3.connect", "sys.settrace", "sys.monitoring", "cpython.PyInterpreterState_New",
           "os.link", "os.symlink", "os.startfile", "winreg.", "_winapi.")
# events whose leading arguments are paths, and how many of them
PATHS = {"open": 1, "os.listdir": 1, "os.scandir": 1, "os.chdir": 1, "os.mkdir": 1, "os.rmdir": 1,
         "os.remove": 1, "os.rename": 2, "os.truncate": 1, "os.chmod": 1, "os.chown": 1, "os.utime": 1,
         "os.listxattr": 1, "os.getxattr": 1, "os.setxattr": 1, "os.removexattr": 1, "os.fwalk": 1,
         "os.walk": 1, "shutil.copyfile": 2, "shutil.copymode": 2, "shutil.copystat": 2,
         "shutil.copytree": 2, "shutil.rmtree": 1, "shutil.move": 2, "shutil.chown": 1,
         "shutil.make_archive": 2, "shutil.unpack_archive": 2, "glob.glob": 1, "glob.glob/2": 1,
         "ctypes.dlopen": 1}
# events that change what they name (the rest only read)
WRITES = ("os.mkdir", "os.rmdir", "os.remove", "os.rename", "os.truncate", "os.chmod", "os.chown",
          "os.utime", "os.setxattr", "os.removexattr", "shutil.")
LIBRARY_SUFFIXES = (".so", ".pyd", ".dylib", ".dll", ".pth")
SYSTEM_LIBRARIES = ("/usr/", "/lib/", "/lib64/", "/lib32/")


def folder(path):
    """``path`` made absolute and real, with a trailing separator (so that /a/b/ does not hold /a/bc)."""
    return os.path.realpath(path).rstrip(os.sep) + os.sep


def checkouts(package="act_numpy"):
    """The repositories the course may be read from: the one its packages are installed from, and
    the one the venv lives in (``make lab`` puts it at the repository's .venv), each the folder
    that holds notebooks/ or .git beside the course's packages."""
    import importlib.util
    found = []
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        found.append(os.path.dirname(os.path.dirname(os.path.realpath(spec.origin))))
    here = os.path.realpath(sys.prefix)
    while os.path.dirname(here) != here:
        here = os.path.dirname(here)
        if os.path.isdir(os.path.join(here, package)):
            found.append(here)
            break
    return [root for k, root in enumerate(found) if root not in found[:k] and (
        os.path.isdir(os.path.join(root, "notebooks")) or os.path.exists(os.path.join(root, ".git")))]


def repository_entries(package="act_numpy"):
    """The entries of the repositories the course comes from (``checkouts``), but the course's
    packages, results/ and the folder that holds the venv; [] when the course is installed from a
    wheel outside any checkout."""
    from .guard import PACKAGES
    keep = set(PACKAGES) | {"results"}
    venv = folder(sys.prefix)
    return [os.path.join(root, entry) for root in checkouts(package) for entry in sorted(os.listdir(root))
            if entry not in keep and not venv.startswith(folder(os.path.join(root, entry)))]


def seal(denied, allowed=(), writable=(), only=(), refused=REFUSED):
    """Install the hook: refuse the events named in ``refused`` (prefixes), and every path inside
    the folders ``denied`` but inside ``allowed`` (the kernel's working folder). ``writable``:
    folders outside the Python installation where writing is refused all the same (the course's
    packages). ``only``: if given, every path outside these folders is refused too (the judge's
    runner). Cannot be undone."""
    import pathlib
    denied = tuple(sorted({folder(p) for p in denied}))
    allowed = tuple(sorted({folder(p) for p in allowed}))
    only = tuple(sorted({folder(p) for p in only}))
    prefixes = tuple(sorted({folder(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                  sys.base_exec_prefix)}))
    frozen = tuple(sorted(set(prefixes) | {folder(p) for p in writable}))
    # the only kinds of path the hook reads: a path object of another kind could name one file
    # when the operation converts it and another when the hook does
    path_types = (str, bytes, pathlib.PurePosixPath, pathlib.PosixPath, os.DirEntry)
    pathlib_classes = (pathlib.PurePath, pathlib.PurePosixPath, pathlib.Path, pathlib.PosixPath)
    resolve = _resolver(os.getcwd, os.lstat, os.readlink, os.fspath, str, bytes, type, OSError, ValueError, TypeError)
    import fcntl
    where, folders = _descriptors(os.listdir, os.readlink, fcntl.fcntl, os.stat, stat.S_IFDIR,
                                  OSError, ValueError, TypeError, int, str, type)
    _import_now()
    _take_away_fork_exec()
    bound = dict(
        resolve=resolve, where=where, folders=folders, fspath=os.fspath, bytes_=bytes, denied=denied, allowed=allowed, only=only, libraries=prefixes + SYSTEM_LIBRARIES,
        frozen=frozen, refused=tuple(refused), paths=tuple(PATHS.items()), writes=WRITES,
        library_suffixes=LIBRARY_SUFFIXES, own_proc=f"/proc/{os.getpid()}/", stat_=os.stat, ifdir=stat.S_IFDIR,
        refusal=PermissionError, oserror=OSError, type_=type, str_=str, int_=int, path_types=path_types,
        pathlib_classes=pathlib_classes, function_type=types.FunctionType, seal_file=__file__,
        guarded=("__code__", "__defaults__", "__kwdefaults__"))
    sys.addaudithook(_hook(_checker(bound), bound))


def _import_now():
    """Modules the hook would otherwise meet half imported: loaded before it is installed."""
    import subprocess  # noqa: F401 (loads _posixsubprocess, which _take_away_fork_exec empties)


def _take_away_fork_exec():
    """``_posixsubprocess.fork_exec`` starts a process without an audit event (Python 3.11): put a
    refusal in its place, in the module and in ``subprocess``; importing the module again is
    refused by the hook."""
    def fork_exec(*args, **kwargs):
        raise PermissionError("_posixsubprocess.fork_exec is refused while a submission is graded")

    for name in ("_posixsubprocess", "subprocess"):
        module = sys.modules.get(name)
        for attribute in ("fork_exec", "_fork_exec"):
            if module is not None and hasattr(module, attribute):
                setattr(module, attribute, fork_exec)


def _resolver(getcwd, lstat, readlink, fspath, str_, bytes_, type_, oserror, valueerror, typeerror):
    """``os.path.realpath`` written again with only the functions handed in, bound now (a learner
    who rebinds ``os.path`` changes nothing): ``resolve(path, base=None)``, the real absolute path
    as a str, a relative path read from the folder ``base`` (the working folder by default), or
    None for what is not a path."""
    def resolve(path, base=None, getcwd=getcwd, lstat=lstat, readlink=readlink, fspath=fspath, str_=str_,
                bytes_=bytes_, type_=type_, oserror=oserror, valueerror=valueerror, typeerror=typeerror):
        try:
            path = fspath(path)
            if type_(path) is bytes_:
                path = path.decode("utf-8", "surrogateescape")
        except (typeerror, valueerror):
            return None
        if type_(path) is not str_:
            return None
        if not path.startswith("/"):
            path = (getcwd() if base is None else base) + "/" + path
        done, todo, hops = [], path.split("/"), 0
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if done:
                    done.pop()
                continue
            here = "/" + "/".join(done + [part])
            try:
                link = lstat(here).st_mode & 0o170000 == 0o120000          # S_IFLNK
                target = readlink(here) if link else ""
            except (oserror, valueerror):
                link = False                    # not there (yet): the rest is taken as written
            if not link:
                done.append(part)
                continue
            hops += 1
            if hops > 64:
                return None
            todo = target.split("/") + todo
            if target.startswith("/"):
                done = []
        return "/" + "/".join(done)
    return resolve


def _descriptors(listdir, readlink, fcntl, stat_, ifdir, oserror, valueerror, typeerror, int_, str_, type_):
    """What the process's descriptors name, from the system's own table, with only the functions
    handed in: ``where(fd)``, the path descriptor ``fd`` was opened on (None when unknown), and
    ``folders()``, every folder the process holds open (None when the table cannot be read).

    A path given with ``dir_fd`` (``os.open(b"../x", dir_fd=fd)``, what ``openat`` does) reaches
    the audit hook without its descriptor, so the hook reads a relative path from every folder the
    process holds open, as well as from the working folder."""
    def where(fd, readlink=readlink, fcntl=fcntl, oserror=oserror, valueerror=valueerror, typeerror=typeerror,
              str_=str_, type_=type_):
        try:
            path = readlink("/proc/self/fd/" + str_(fd))                     # Linux
        except (oserror, valueerror, typeerror):
            try:
                path = fcntl(fd, 50, b"\0" * 1024).split(b"\0")[0].decode("utf-8", "surrogateescape")  # macOS
            except (oserror, valueerror, typeerror):
                return None
        return path if type_(path) is str_ and path.startswith("/") else None

    def folders(listdir=listdir, where=where, stat_=stat_, ifdir=ifdir, oserror=oserror, valueerror=valueerror,
                int_=int_):
        try:
            numbers = listdir("/dev/fd")
        except (oserror, valueerror):
            return None
        found = []
        for name in numbers:
            try:
                path = where(int_(name))
                if path is not None and stat_(path).st_mode & 0o170000 == ifdir:
                    found.append(path)
            except (oserror, valueerror):
                continue
        return found
    return where, folders


def _hook(check, bound):
    """The audit hook, its names bound as defaults (``bound``): it reads no global. ``check``
    (``_checker``) judges each path an event names."""
    def hook(event, args, check=check, resolve=bound["resolve"], libraries=bound["libraries"],
             refused=bound["refused"], paths=bound["paths"], writes=bound["writes"], refusal=bound["refusal"],
             type_=bound["type_"], str_=bound["str_"], int_=bound["int_"], path_types=bound["path_types"],
             pathlib_classes=bound["pathlib_classes"], function_type=bound["function_type"],
             seal_file=bound["seal_file"], guarded=bound["guarded"], where=bound["where"]):
        if event.startswith(refused):
            raise refusal(f"{event} is refused while a submission is graded")
        if event == "object.__setattr__" or event == "object.__delattr__":     # deleting __defaults__ is setting None
            target = args[0]
            if type_(target) is function_type and args[1] in guarded and target.__code__.co_filename == seal_file:
                raise refusal("the grading seal's functions cannot be changed")
            if target in pathlib_classes:
                raise refusal("pathlib's classes cannot be changed while a submission is graded")
            return
        if event == "import":
            if args[0] == "_posixsubprocess":
                raise refusal("importing _posixsubprocess is refused while a submission is graded")
            return
        count = 0
        for name, number in paths:
            if name == event:
                count = number
        if count == 0:
            return
        if event == "ctypes.dlopen":
            name = args[0]
            if name is None or (type_(name) is str_ and "/" not in name):
                return                  # the main program, or a library found in the system's folders
            real = resolve(name) if type_(name) in path_types else None
            if real is None or not (real.rstrip("/") + "/").startswith(libraries):
                raise refusal(f"loading {name!r} is refused while a submission is graded")
            return
        writing = event.startswith(writes)
        if event == "open":
            mode, flags = args[1], args[2]
            writing = (type_(mode) is str_ and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) \
                or (type_(flags) is int_ and flags & 0o3103 != 0)     # O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND
        for path in args[:count]:
            if type_(path) is not int_:
                check(event, "." if path is None else path, writing)
            elif event != "open":               # listing, walking, changing through a descriptor
                named = where(path)
                if named is None:
                    raise refusal(f"{event} through a descriptor the grading seal cannot read")
                check(event, named, writing)
            # open(fd) wraps a descriptor already open: what it names was checked when it was opened
    return hook


def _checker(bound):
    """``check(event, path, writing)``: raise PermissionError if the seal refuses ``path`` (str,
    bytes or a pathlib path; a relative one read from the working folder and from every folder
    the process holds open); every name it uses is bound as a default (``bound``)."""
    def check_real(event, path, real, writing, denied=bound["denied"], allowed=bound["allowed"],
                   only=bound["only"], frozen=bound["frozen"], library_suffixes=bound["library_suffixes"],
                   own_proc=bound["own_proc"], stat_=bound["stat_"], ifdir=bound["ifdir"], refusal=bound["refusal"],
                   oserror=bound["oserror"]):
        if real is None:
            raise refusal(f"{event}: a path the grading seal cannot read")
        lower, inside = real.lower(), real.rstrip("/") + "/"
        if lower.endswith(".ipynb"):
            raise refusal(f"{event} {path!r}: notebooks cannot be read while a submission is graded")
        parts = inside.split("/")
        if inside.startswith("/proc/") and parts[2].isdigit() and not inside.startswith(own_proc) \
                and parts[3:] not in (["stat", ""], ["status", ""]):        # what ipykernel's psutil reads
            raise refusal(f"{event} {path!r}: another process is out of reach while a submission is graded")
        if (inside.startswith("/proc/") and real.endswith("/mem")) or real in ("/dev/mem", "/dev/kmem", "/dev/port"):
            raise refusal(f"{event} {path!r} is refused while a submission is graded")
        if writing and (inside.startswith(frozen) or lower.endswith(library_suffixes) or ".so." in lower):
            raise refusal(f"{event} {path!r}: writing there is refused while a submission is graded")
        if inside.startswith(allowed):
            return
        if inside.startswith(denied) or (only and not inside.startswith(only)):
            raise refusal(f"{event} {path!r} is refused while a submission is graded")
        if event == "open":
            try:
                is_folder = stat_(real).st_mode & 0o170000 == ifdir
            except oserror:
                is_folder = False
            if is_folder and inside.startswith("/proc/"):
                raise refusal(f"open {path!r}: a folder of /proc is refused while a submission is graded")
            for name in denied if is_folder else ():
                if name.startswith(inside):
                    raise refusal(f"open {path!r}: a folder that holds a denied one is refused while a "
                                  "submission is graded")

    def check(event, path, writing, resolve=bound["resolve"], folders=bound["folders"], fspath=bound["fspath"],
              bytes_=bound["bytes_"], type_=bound["type_"], str_=bound["str_"], path_types=bound["path_types"],
              refusal=bound["refusal"], check_real=check_real):
        if type_(path) not in path_types:
            raise refusal(f"{event}: a path of type {type_(path).__name__} is refused while a submission "
                          "is graded (a str, bytes or pathlib path is not)")
        text = fspath(path)
        text = text.decode("utf-8", "surrogateescape") if type_(text) is bytes_ else text
        if type_(text) is not str_:
            raise refusal(f"{event}: a path the grading seal cannot read")
        if text.startswith("/"):
            return check_real(event, path, resolve(text), writing)
        # relative: read from the working folder, and from every folder held open, since a dir_fd
        # given beside it never reaches the hook
        bases = folders()
        if bases is None and ".." in text.split("/"):
            raise refusal(f"{event} {path!r}: a relative path that climbs up is refused while a submission is graded")
        check_real(event, path, resolve(text), writing)
        for base in bases or ():
            check_real(event, path, resolve(text, base), writing)
    return check


def seal_kernel(spec):
    """What a grading kernel runs first (``kernel_line``): seal it with ``spec``, a JSON object
    {"denied": [folders], "allowed": [folders]}, adding the repository's entries (a checkout),
    Jupyter's runtime folder and the course's packages (not to be written)."""
    from jupyter_core.paths import jupyter_runtime_dir

    spec = json.loads(spec)
    seal(list(spec["denied"]) + repository_entries() + [jupyter_runtime_dir()], allowed=spec["allowed"],
         writable=frozen_folders())


def frozen_folders():
    """Folders a grading kernel may read but not write: the course's packages, and where code or
    settings that a later kernel or nbgrader itself would run are found (IPython's and Jupyter's
    settings, kernel specs, the user's site-packages). The Python installation is added by ``seal``."""
    import importlib.util
    import site

    from IPython.paths import get_ipython_dir
    from jupyter_core.paths import jupyter_config_path, jupyter_data_dir, jupyter_path

    from .guard import PACKAGES
    packages = [os.path.dirname(found.origin) for found in map(importlib.util.find_spec, PACKAGES)
                if found is not None and found.origin]
    return packages + [get_ipython_dir(), jupyter_data_dir(), site.getuserbase()] + jupyter_config_path() \
        + jupyter_path()


def kernel_line(denied, allowed):
    """The line a grading kernel runs before any cell (IPython's ``exec_lines``). If the seal
    cannot be installed, the kernel stops at once (nbgrader then reports the notebook as failed),
    rather than grading unsealed."""
    spec = json.dumps({"denied": [str(p) for p in denied], "allowed": [str(p) for p in allowed]})
    code = ("try:\n"
            "    __import__('act_course.grading.seal', fromlist=['seal_kernel']).seal_kernel(SPEC)\n"
            "except BaseException as err:\n"
            "    import os, sys\n"
            "    sys.__stderr__.write(f'the grading seal could not be installed: {err!r}\\n')\n"
            "    sys.__stderr__.flush()\n"
            "    os._exit(86)\n")
    return f"exec({code!r}, {{'SPEC': {spec!r}}})"
