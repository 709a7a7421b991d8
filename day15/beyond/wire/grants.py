"""Beyond the tutorial: what a sandboxed stdio server may reach (wire/sandbox.py shows it, confine.py enforces it).

Its grants: the system's folders to read; its program, interpreter and script files, as files; the
runtime they resolve to (a virtual environment and the Python it was made from, an installation of
Python or Node, the outermost node_modules/); the project folder, when a .geekagent/ is there; what its
args, "roots" and "read" / "write" name; its launcher's own cache (npx, uvx). Every path is resolved
before it is granted. Never granted, even when named: the home folder or a folder above it, the agent's
own folders (or anything in them), uv's tools folder, and (to write) npm's and uv's own caches. A secret
(secrets/names.py) only when "read" or "write" names it, not through args or "roots". A runtime is never
the project or a folder above it, nor the folders of the user's keys and settings; one inside the project is
the project's (walked, wire/inside.py), and only what runs or PATH finds is one, never a file a folder names.
"""
import hashlib
import json
import os
import re
import shutil
import stat
from dataclasses import dataclass

from beyond.dirs import FolderError, cache_dir, config_dir, read_inside, state_dir
from beyond.secrets import looks_secret

# Read (and run) for every sandboxed server: the system's, the same for each, so never listed per entry.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys")
# Never a runtime, nor above one: the folders of the user's keys and settings (a folder a file names is judged
# where the user named it, not by this list).
KEPT_FROM_RUNTIMES = ("~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.docker", "~/.config")
# The user's own launcher caches: what npx and uvx later run unconfined comes from there, so no sandboxed
# server writes them; and the tools uv installed, never granted as a whole.
USER_CACHES = ("~/.npm", "~/.cache/uv", "~/.local/share/uv")
UV_TOOLS = "~/.local/share/uv/tools"
# A virtual environment's pyvenv.cfg is a few lines; one bigger is no such file.
MAX_VENV_CFG_BYTES = 64 * 1024
# A launcher gets a cache of its own, writable, instead: its name, and the variables that point it there
# (uv also keeps its tools and the Pythons it fetches apart from its cache).
LAUNCHER_CACHES = {"npx": "npm", "npm": "npm", "uvx": "uv", "uv": "uv"}
CACHE_VARIABLES = {"npm": {"npm_config_cache": ""},
                   "uv": {"UV_CACHE_DIR": "cache", "UV_TOOL_DIR": "tools", "UV_PYTHON_INSTALL_DIR": "python"}}


class Refused(Exception):
    """The sandbox cannot be enforced as asked: the message says why."""


class NotFound(Refused):
    """The command is on no folder of the server's PATH: it would not start unconfined either."""


@dataclass(frozen=True)
class Grants:
    """What one sandboxed server may reach beyond the system's folders, every path resolved."""
    program: str                   # the file the command resolves to: what runs
    files: tuple = ()              # files it may read and run: its program, interpreter and scripts
    read: tuple = ()               # folders it may read and run
    write: tuple = ()              # folders it may write (a private temporary folder comes on top)
    cache: tuple = ()              # (its launcher's name, the folder of its own cache, writable) or ()
    network: bool = False
    refused: tuple = ()            # what its entry asked for and does not get, each with why
    runtimes: tuple = ()           # of `read`, the runtimes (a virtual environment, a Python, a Node): not walked
    named: tuple = ()              # what "read" and "write" name: granted as named, a secret too (not what it holds)


def grants(config, command: list[str], env: dict) -> Grants:
    """What the server of `config`, started as `command` with `env`, may reach (see the module's docstring)."""
    asked = config.sandbox if isinstance(config.sandbox, dict) else {}
    check = _Check(os.getcwd(), config.cwd)
    program = _which(command[0], env.get("PATH"))
    runs = [program] + _interpreter(program, env.get("PATH"))
    for path in runs:  # what runs passes the checks every grant does; its runtime is where it is, and leads
        check.folder(path, "read", "what runs", files=True)
        check.runtime(path)
    if check.refused:
        raise Refused(check.refused[0])
    for arg in command[1:]:  # a file is a script (read), a folder is where it works (write)
        if arg and os.path.exists(check.joined(arg)):
            check.folder(arg, "read" if os.path.isfile(check.joined(arg)) else "write", "named by its args", files=True)
    for path in check.files:
        check.runtime(path)
    if os.path.isdir(os.path.join(check.cwd, ".geekagent")):
        check.folder(check.cwd, "read", "the project folder")
    for root in config.roots if isinstance(config.roots, list) else []:
        check.folder(root if os.path.isabs(os.path.expanduser(root)) else os.path.join(check.cwd, root),
                     "write", "named by \"roots\"")
    named = []
    for key in ("read", "write"):
        for path in asked.get(key, []):
            check.folder(path, key, f"named by \"sandbox\".{key}", files=True, make=key == "write")
            named.append(check.real(path))
    refused = check.refused + ["its entry says \"sandbox\": false; --sandbox confines it all the same"] * bool(
        getattr(config, "overruled", False))
    files = [p for path in check.files for p in (path, os.path.realpath(path))
             if not under(p, SYSTEM + tuple(check.read) + tuple(check.write))]
    others = [folder for folder in check.read + check.write if folder not in check.runtimes]
    runtimes = [folder for folder in check.runtimes  # one that holds another grant is walked like it
                if not any(os.path.commonpath([folder, other]) == folder for other in others)]
    return Grants(program, tuple(dict.fromkeys(files)), tuple(check.read), tuple(check.write),
                  _cache(command, config), asked.get("network") is True, tuple(refused), tuple(runtimes),
                  tuple(named))


def _protected(runtime: bool = False) -> list[tuple[str, bool]]:
    """(folder, also below it): never granted as it or a folder above it; the agent's own not below it either;
    for a runtime, which nothing names, the folders of the user's keys and settings neither."""
    home = [(os.path.realpath(os.path.expanduser("~")), False), (os.path.realpath(os.path.expanduser(UV_TOOLS)), False)]
    home += [(os.path.realpath(os.path.expanduser(folder)), True) for folder in KEPT_FROM_RUNTIMES] if runtime else []
    return home + [(os.path.realpath(folder), True) for folder in (state_dir(), config_dir(), cache_dir())]


def allowed(path: str, write: bool = False, runtime: bool = False) -> str | None:
    """None when `path` (resolved) may be granted; else why not."""
    for folder, below in _protected(runtime):
        if os.path.commonpath([path, folder]) == path:
            return "the home folder or a folder above it" if folder == os.path.realpath(os.path.expanduser("~")) \
                else "a folder above the agent's own or uv's tools"
        if below and os.path.commonpath([path, folder]) == folder:
            own = folder in map(os.path.realpath, (state_dir(), config_dir(), cache_dir()))
            return "the agent's own files" if own else "your keys' or settings' folder"
    for cache in (os.path.realpath(os.path.expanduser(c)) for c in USER_CACHES) if write else ():
        if os.path.commonpath([path, cache]) in (path, cache):
            return "npm's or uv's own cache, which launchers run from unconfined"
    return None


class _Check:
    """Collects the grants of one entry, each resolved and judged; what is refused, with why."""

    def __init__(self, cwd: str, entry_cwd: str | None) -> None:
        self.cwd = os.path.realpath(cwd)
        self.base = os.path.join(self.cwd, entry_cwd) if entry_cwd else self.cwd  # where its relative args lead
        self.files, self.read, self.write, self.refused, self.runtimes = [], [], [], [], []

    def joined(self, path: str) -> str:
        return os.path.join(self.base, os.path.expanduser(path))

    def real(self, path: str) -> str:
        return os.path.realpath(self.joined(path))

    def folder(self, path: str, how: str, why: str, files: bool = False, make: bool = False) -> None:
        """Grant `path` (a folder, or with `files` a file too) to read or write, unless it may not be; with
        `make`, a folder to write that is not there yet is made when the server starts."""
        joined, real = self.joined(path), self.real(path)
        shown = f"{path} ({why})"
        inside = os.path.commonpath([joined, self.cwd]) == self.cwd
        runtime = why == "what runs" and _interpreter_file(real)  # a virtual environment's link to its Python
        if inside and os.path.commonpath([real, self.cwd]) != self.cwd and not runtime:
            self.refused.append(f"{shown}: a link out of the project, to {real}")
        elif (problem := allowed(real, write=how == "write")) is not None:
            self.refused.append(f"{shown}: {problem}")
        elif not why.startswith("named by \"sandbox\"") and looks_secret(real + "/x" * os.path.isdir(real)):
            self.refused.append(f"{shown}: holds your secrets (\"sandbox\": {{\"read\": [...]}} grants it by name)")
        elif os.path.isfile(real) and files and how == "read":
            self.files.append(real)
        elif os.path.isfile(real) and make:
            self.refused.append(f"{shown}: a file; a grant to write names its folder")
        elif (os.path.isdir(real) or make and not os.path.lexists(real)) and real not in self.write:
            if how == "write" and real in self.read:  # asked to write what another grant reads: written
                self.read.remove(real)
            if real not in self.read:
                (self.write if how == "write" else self.read).append(real)

    def runtime(self, path: str) -> None:
        """The runtime a program or script belongs to: a virtual environment (and the Python it was made
        from), an installation of Python or Node (the folder above a bin/ that holds python* or node), or
        its outermost node_modules/; never a folder above the home folder or the agent's own, nor the project
        or a folder above it. Only one outside the project is a runtime as Grants has it (granted whole)."""
        found = [os.path.dirname(os.path.dirname(p)) for p in (path, os.path.realpath(path)) if _runtime_bin(p)]
        found += [p.split("/node_modules/")[0] + "/node_modules" for p in (path, os.path.realpath(path))
                  if "/node_modules/" in p]
        venv = _venv(path)
        if venv:  # its Python: where pyvenv.cfg says, if its own python3 leads there (a file it wrote says no more)
            own = [os.path.realpath(os.path.join(venv[0], "bin", name)) for name in ("python3", "python")]
            made_from = venv[1] and _runtime_bin(venv[1] + "/x") and any(under(p, [venv[1]]) for p in own)
            found += [venv[0]] + [os.path.dirname(venv[1])] * bool(made_from)
        for folder in (os.path.realpath(f) for f in found):
            if os.path.commonpath([folder, self.cwd]) == folder:
                continue  # the project, or above it: a runtime never is (a bin/node there makes none)
            if allowed(folder, runtime=True) is None and folder not in self.read and not under(folder, SYSTEM):
                self.read.append(folder)
                self.runtimes += [folder] * (os.path.commonpath([folder, self.cwd]) != self.cwd)  # else walked


def _runtime_bin(path: str) -> bool:
    """Whether `path` is in the bin/ of a Python or Node installation (not ~/bin or ~/.local/bin): one that holds
    a real interpreter, an executable regular file (a link is judged where it leads), with a lib/ beside it."""
    folder = os.path.dirname(path)
    try:
        entries = list(os.scandir(folder)) if os.path.basename(folder) == "bin" else []
    except OSError:
        return False
    return os.path.isdir(os.path.join(os.path.dirname(folder), "lib")) and any(
        (entry.name == "node" or re.fullmatch(r"python3(\.\d+)?", entry.name))
        and entry.is_file(follow_symlinks=False) and os.access(entry.path, os.X_OK) for entry in entries)


def _interpreter_file(path: str) -> bool:
    """A real interpreter: a regular file python3[.N] or node in the bin/ of an installation."""
    return bool(re.fullmatch(r"python3(\.\d+)?|node", os.path.basename(path))) and _runtime_bin(path)


def _venv(path: str) -> tuple[str, str] | None:
    """(a virtual environment's root, the folder of the Python it was made from) for a file in it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(path)))
    try:  # a file of the folder: bounded, never a FIFO or a device
        said = read_inside(os.path.join(root, "pyvenv.cfg"), MAX_VENV_CFG_BYTES, root=None)
    except FolderError:
        return None
    if said is None:
        return None
    lines = said.decode("utf-8", "replace").splitlines()
    home = next((line.partition("=")[2].strip() for line in lines if line.partition("=")[0].strip() == "home"), "")
    return root, os.path.realpath(os.path.join(root, home)) if home else ""  # resolved where the file is


def _which(name: str, path: str | None) -> str:
    """The file a command runs, as PATH finds it; Refused when there is none."""
    found = shutil.which(name, path=path)
    if found is None:
        raise NotFound(f"cannot start server: {name} is not found on the server's PATH")
    return os.path.abspath(found)


def _interpreter(program: str, path: str | None) -> list[str]:
    """The interpreter a script's #! line names (through `env`), when it has one."""
    try:  # O_NONBLOCK: a FIFO is never waited on, and is no script
        fd = os.open(program, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        line = f.readline(256) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    words = line[2:].decode("utf-8", "replace").split() if line.startswith(b"#!") else []
    if words and os.path.basename(words[0]) == "env":  # env [-S] [-i] NAME=V ... program: the program, on PATH
        named = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
        found = shutil.which(named[0], path=path) if named and "/" not in named[0] else None
        return [os.path.abspath(found)] if found else []
    return [words[0]] if words and os.path.isabs(words[0]) and os.path.isfile(words[0]) else []  # never a relative one


def _cache(command: list[str], config) -> tuple:
    """(name, folder): a launcher's own cache (npx, uvx), one per entry (its command, args and cwd)."""
    if os.path.basename(command[0]) not in LAUNCHER_CACHES:
        return ()
    entry = hashlib.sha256(json.dumps([command, config.cwd]).encode()).hexdigest()[:16]
    name = LAUNCHER_CACHES[os.path.basename(command[0])]
    return name, os.path.join(cache_dir(), "sandbox", entry, name)


def cache_env(cache: tuple) -> dict[str, str]:
    """The variables that point a launcher at its own cache's folders."""
    return {variable: os.path.join(cache[1], sub) for variable, sub in CACHE_VARIABLES[cache[0]].items()} \
        if cache else {}


def under(path: str, folders) -> bool:
    return any(os.path.commonpath([path, folder]) == folder for folder in folders)


def shown(path: str) -> str:
    home = os.path.realpath(os.path.expanduser("~"))
    return "~" + path[len(home):] if path.startswith(home + "/") else path
