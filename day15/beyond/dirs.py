"""Beyond the tutorial: the user's own folders (XDG), where answers, pins, logins and history live, and
how a state file there is changed (StateFile: locked, never half written, never lost in silence);
`${VAR}` from the user's environment, and how a file a folder names is read (no links out, no devices,
bounded); the bottom every part may use (it imports none of ours).
"""
import contextlib
import json
import os
import re
import stat
import sys
import threading
import time

try:
    import fcntl
except ImportError:  # Windows: the full agent does not run there (beyond_agent.py says so)
    fcntl = None

# ${VAR} or ${VAR:-default}, as in shells and in Claude Code's configs; ${env:VAR}, as VS Code writes it.
VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


# Config files are written by hand; anything bigger is not one, and is refused rather than held in memory.
MAX_CONFIG_BYTES = 1 << 20
# Links are never followed when the agent opens a file; a FIFO's open does not wait for a writer.
# The flags do not exist on Windows.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
# The kernel's folders: their files pass for regular ones (/proc/self/environ holds the agent's
# environment, keys included) or never end (/dev/zero). No file an entry names is read from them.
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


class UnsetVariable(ValueError):
    """A ${VAR} with no value and no default; the message says where, and what to do."""


class FolderError(ValueError):
    """A file that is not used: a link out of its folder, not a regular file, too big."""


class LinkOutside(FolderError):
    """A file that is a link leading out of its folder (perhaps meant: it is named, and refused)."""


def config_dir() -> str:
    """$XDG_CONFIG_HOME/geekagent (default ~/.config/geekagent): what the user decided."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent")


def state_dir() -> str:
    """$XDG_STATE_HOME/geekagent (default ~/.local/state/geekagent): what the agent keeps for itself."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "geekagent")


def cache_dir() -> str:
    """$XDG_CACHE_HOME/geekagent (default ~/.cache/geekagent): what can be made again (a sandbox's caches)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "geekagent")


def expand(text: str, where: str) -> str:
    """${VAR} and ${VAR:-default} from the agent's environment; a missing VAR is UnsetVariable."""
    def value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise UnsetVariable(f"{where}: ${{{name}}} is not set; set it in the environment or .env, "
                            f"or write ${{{name}:-default}}")
    return VARIABLE.sub(value, text)


def only_variables(text: str) -> bool:
    """Whether a value holds nothing but ${VAR}s (and white space): all it brings is the environment's."""
    return not VARIABLE.sub("", text).strip()


def parse_json(path: str) -> object:
    """A config file's JSON, or None when there is no such file; ValueError naming the file otherwise."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: {e}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ValueError(f"{path}: over {MAX_CONFIG_BYTES >> 20} MB: no config file is that big")
    return decode_json(path, raw)


def decode_json(path: str, raw: bytes) -> object:
    """The JSON in a file's bytes; ValueError naming the file, the line and the column where it is wrong."""
    try:
        return json.loads(raw.decode("utf-8-sig"))  # a byte order mark, as some editors write, is fine
    except json.JSONDecodeError as e:  # where, in an editor's terms, and the commonest cause by name
        before = e.doc[:e.pos].rstrip()
        comma = before.endswith(",") and e.msg.startswith(("Expecting property name", "Expecting value"))
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: line {e.lineno}, column {e.colno}: "
                         f"{e.msg}" + (" (a trailing comma?)" if comma else "")) from None
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{path}: cannot read {os.path.basename(path)}: {e}") from None


def read_inside(path: str, limit: int = MAX_CONFIG_BYTES, root: str | None = ".") -> bytes | None:
    """The bytes of a file of the folder `root`, read once; None when there is none. FolderError when
    it leads outside `root` (through a link, or named so), into the kernel's folders, is no regular
    file, or is bigger than `limit`. root None: a file the user named in their own config, anywhere
    but the kernel's folders."""
    joined = os.path.abspath(os.path.join(root or ".", os.path.expanduser(path) if root is None else path))
    real, base = os.path.realpath(joined), os.path.realpath(root) if root is not None else None
    how = "names" if joined == real else "is a link to"
    if base is not None and os.path.commonpath([base, real]) != base:
        raise LinkOutside(f"{path} {how} {_visible(real)}, outside the folder; it is not read")
    if any(os.path.commonpath([real, system]) == system for system in SYSTEM_FOLDERS):
        raise FolderError(f"{path} {how} {_visible(real)}, a file of the system's; it is not read")
    try:
        fd = os.open(real, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise FolderError(f"{path} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder, a FIFO, a device: never read as a file
        os.close(fd)
        raise FolderError(f"{path} is not a regular file; it is not read")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FolderError(f"{path} is over {limit:,} bytes; it is not read")
    return data


def _visible(path: str) -> str:
    """A path in a message, its control characters escaped (a link's target is the folder's word)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


# --- the user's state files ----------------------------------------------------------------------

# A state file is a few records the agent wrote; past this size it is no file of ours, and what would
# grow it past that is refused rather than written.
MAX_STATE_BYTES = 8 << 20


@contextlib.contextmanager
def exclusive(path: str):
    """An exclusive lock for the file at `path` (flock on <path>.lock beside it), which every agent process
    takes before it changes that file; released when the block ends."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
    try:
        if fcntl:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing it releases the lock


class StateError(ValueError):
    """A state file that cannot be used as it is (a link, another user's, readable by others, too big)."""


class StateFile:
    """One JSON object in a file of the user's state (approvals, trust, tasks, logins). Every read and
    change goes through locked(): an exclusive lock (flock on <name>.lock beside it) held while the data
    is read from disk and, when the block changed it, written back whole (a temporary file, fsync,
    os.replace), so two agents at once lose no update. A file that cannot be parsed is moved aside
    (<name>.corrupt-<time>) with a line, never overwritten as empty. Blocks nest within a thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        # The threads of this process (the file lock serves the others); _data and _depth belong to the
        # thread that holds it.
        self._lock = threading.RLock()
        self._data: dict | None = None
        self._depth = 0

    @contextlib.contextmanager
    def locked(self):
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._data
                finally:
                    self._depth -= 1
                return
            try:
                with exclusive(self.path):
                    self._data, self._depth = self._read(), 1
                    before = json.dumps(self._data, sort_keys=True)
                    yield self._data
                    if json.dumps(self._data, sort_keys=True) != before:
                        self._write(self._data)
            finally:
                self._data, self._depth = None, 0

    def read(self) -> dict:
        """The data as it is on disk, without the lock (a write replaces the file whole, so no read sees half
        of one) and without making anything: for what only looks."""
        with self._lock:
            return self._read(move_aside=False)

    def _read(self, move_aside: bool = True) -> dict:
        try:
            fd = os.open(self.path, os.O_RDONLY | NOFOLLOW)
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise StateError(f"cannot read {self.path}: {e.strerror} (a link there is refused)") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
                raise StateError(f"{self.path} must be a file of yours that only you can read (chmod 600)")
            raw = f.read(MAX_STATE_BYTES + 1)
        try:
            data = json.loads(raw) if len(raw) <= MAX_STATE_BYTES else None
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            return data
        if not move_aside:  # a look only: said, and the next change moves it aside
            print(f"warning: {self.path} could not be read as the agent writes it; what it kept is not used, and "
                  "the next change moves it aside", file=sys.stderr)
            return {}
        aside = f"{self.path}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}"
        os.replace(self.path, aside)
        print(f"warning: {self.path} could not be read as the agent writes it; it was moved to {aside} and a new "
              "one begun", file=sys.stderr)
        return {}

    def _write(self, data: dict) -> None:
        text = json.dumps(data, indent=1, sort_keys=True)
        if len(text.encode()) > MAX_STATE_BYTES:  # everything else kept there would be lost with it
            raise StateError(f"{self.path} would grow past {MAX_STATE_BYTES >> 20} MB; this change is not kept")
        temporary = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)  # a link at the path is replaced, never followed
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
