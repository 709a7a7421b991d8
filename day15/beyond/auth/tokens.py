"""Beyond the tutorial: the OAuth logins of remote servers, kept in one file of the user's state.

$XDG_STATE_HOME/geekagent/oauth.json (never the project folder): per authorization server (its
issuer) the client this agent registered there, and per server URL and issuer the tokens. The file
is the user's alone (mode 0600), replaced whole (written to a temporary file, then renamed), never
written through a link; every change happens under a lock on oauth.lock beside it, which other
agent processes take too, and is made to the file as read under that lock, so two agents never
use one rotated refresh token twice and each sees a login the other made.
"""
import contextlib
import json
import os
import stat
import threading
import time

from beyond.dirs import state_dir
from beyond.auth.errors import AuthError

# oauth.json is small: a few clients and tokens (each answer is bounded: provider.MAX_TOKEN_CHARS).
# A bigger one is not ours to read, and a change that would make it bigger is refused, not written.
MAX_STORE_BYTES = 4 << 20
# A token's lifetime is believed up to this long (real ones are hours or days).
MAX_LIFE_S = 10 * 365 * 24 * 3600.0

try:
    import fcntl
except ImportError:  # Windows: the lock is this process's only
    fcntl = None


def lifetime(value: object) -> float | None:
    """A token's expires_in as seconds when it is a plausible one (above 0, at most MAX_LIFE_S), else None: unknown."""
    plausible = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= MAX_LIFE_S
    return float(value) if plausible else None


def usable(tokens: object) -> bool:
    """Tokens as read back from the logins file (written by any agent, or by hand) that every use of them can take."""
    if not isinstance(tokens, dict) or not isinstance(tokens.get("access_token"), str):
        return False
    scopes, expires = tokens.get("scopes", []), tokens.get("expires_at")
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        return False
    return expires is None or (isinstance(expires, (int, float)) and not isinstance(expires, bool)
                               and 0 < expires < time.time() + 2 * MAX_LIFE_S)


class TokenStore:
    """The logins file. Every read or change goes through locked(), which yields the data as it is
    on disk; what the block leaves in it is written back when it changed. A block inside another
    (of the same thread) shares its data: a refresh reads, asks and writes under one lock."""

    def __init__(self, folder: str | None = None) -> None:
        self.folder = folder or state_dir()
        self.path = os.path.join(self.folder, "oauth.json")
        # The threads of this process (the file lock serves the others); _data and _depth belong to
        # the thread that holds it.
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
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            fd = os.open(os.path.join(self.folder, "oauth.lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                if fcntl:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._data, self._depth = self._read(), 1
                before = json.dumps(self._data, sort_keys=True)
                yield self._data
                if json.dumps(self._data, sort_keys=True) != before:
                    self._write(self._data)
            finally:
                self._data, self._depth = None, 0
                os.close(fd)  # closing it releases the lock

    def _read(self) -> dict:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return {}
        except OSError as e:
            raise AuthError(f"cannot read {self.path}: {e.strerror} (a link there is refused)") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
                raise AuthError(f"{self.path} must be a file of yours that only you can read (chmod 600)")
            raw = f.read(MAX_STORE_BYTES + 1)
        try:
            data = json.loads(raw) if len(raw) <= MAX_STORE_BYTES else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise AuthError(f"{self.path} is not a logins file; remove it to log in again")
        return data

    def _write(self, data: dict) -> None:
        text = json.dumps(data, indent=1, sort_keys=True)
        if len(text.encode()) > MAX_STORE_BYTES:  # every other login would be lost with it
            raise AuthError(f"{self.path} would grow past {MAX_STORE_BYTES >> 20} MB; this login is not kept")
        temporary = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
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
