"""Beyond the tutorial: a project folder stays inside itself, and only a folder of the user's own is adopted.

The tutorial reads and writes .geekagent/ as it finds it. A cloned folder can hold symlinks (git
keeps them), so reading mcp.json or appending to audit.jsonl could reach any file of the user's;
and a .geekagent/ found upward may be another user's, in a shared folder such as /tmp. Here a
folder is adopted only when it is ours (as git's safe.directory), files are read once as bytes and
never through a link that leads outside, files are written without following links, and the
agent's own state (answers, pins, history) lives in the user's directories, never in the folder.
"""
import errno
import json
import os
import stat
import sys

from beyond.dirs import NOFOLLOW, FolderError, StateError, StateFile, config_dir

FOLDER = ".geekagent"
# Files the agent appends to (the audit log) are rotated past this size, one old file kept: a
# record of months of use, never a disk filled by a model that calls tools in a loop.
MAX_LOG_BYTES = 8 << 20
# --- which folder is the project ---------------------------------------------------------------

def settings_path() -> str:
    """The user's own settings: {"safeFolders": ["/path", ...]} adopts those folders whoever owns them."""
    return os.path.join(config_dir(), "settings.json")


def find_project() -> str | None:
    """The nearest folder (this one or a parent) with a .geekagent/ in it, found as git finds .git,
    if it is the user's own; it becomes the working folder, so starting from a subfolder works."""
    folder = os.getcwd()
    while not os.path.isdir(os.path.join(folder, FOLDER)):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    problem = not_ours(folder)
    if problem and not _listed_safe(folder):
        print(f"skipped {_shown(os.path.join(folder, FOLDER))}: {problem}. Running with the built-in tools "
              f"in {_shown(os.getcwd())}. To adopt it anyway, list the folder in \"safeFolders\" of "
              f"{settings_path()}.", file=sys.stderr)
        return None
    os.chdir(folder)  # mcp.json, .env, GeekAgent.json, relative server paths and the built-ins' root
    return folder


def not_ours(folder: str) -> str | None:
    """Why a folder's .geekagent/ may not be adopted: it or the folder is another user's, or anyone
    may write to it (group-writable is fine: umask 002 is common). None when it is ours."""
    for path in (os.path.join(folder, FOLDER), folder):
        info = os.stat(path)
        if info.st_uid not in (os.geteuid(), 0):
            return f"{_shown(path)} belongs to another user (uid {info.st_uid})"
        if info.st_mode & stat.S_IWOTH:
            return f"{_shown(path)} is writable by every user"
    return None


def _listed_safe(folder: str) -> bool:
    """Whether the user's settings.json lists the folder in "safeFolders" (a file the user writes: one that
    cannot be read lists nothing, and is left as it is)."""
    try:
        with open(settings_path(), encoding="utf-8") as f:
            settings = json.load(f)
    except (OSError, ValueError, RecursionError):
        settings = None
    settings = settings if isinstance(settings, dict) else {}
    listed = settings.get("safeFolders") if isinstance(settings.get("safeFolders"), list) else []
    return "*" in listed or any(isinstance(p, str) and os.path.realpath(p) == os.path.realpath(folder) for p in listed)


def _shown(path: str) -> str:
    from beyond.text import clean
    return clean(path, one_line=True)


# --- reading and writing inside the folder -------------------------------------------------------

def append_inside(path: str, text: str, limit: int = MAX_LOG_BYTES) -> None:
    """Append to a file of the folder without following a link anywhere on the way (the folder or
    the file); past `limit` the file becomes path.1 (the one old copy) and a new one starts.
    FolderError when the file or its folder is a link, not a regular file, or not the user's."""
    folder, name = os.path.split(path)
    dir_fd = _open_folder(folder or ".")
    fd = -1
    try:
        data = text.encode("utf-8")
        fd = _open_log(name, dir_fd, path)
        if os.fstat(fd).st_size + len(data) > limit:
            os.close(fd)
            fd = -1
            os.replace(name, f"{name}.1", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            fd = _open_log(name, dir_fd, path)
        os.write(fd, data)
    finally:
        if fd >= 0:
            os.close(fd)
        os.close(dir_fd)


def _open_folder(folder: str) -> int:
    """The folder as a descriptor, made if missing; a link there is refused, not followed."""
    try:
        os.mkdir(folder, 0o755)
    except FileExistsError:
        pass  # the usual case; a link in its place is refused just below
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FolderError(f"{folder} is a link or not a folder; nothing is written through it") from None
        raise


def _open_log(name: str, dir_fd: int, shown_as: str) -> int:
    try:
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | NOFOLLOW, 0o600, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise FolderError(f"{shown_as} is a link; nothing is written through it") from None
        raise
    info = os.fstat(fd)
    # A hard link has no target to refuse: a file with another name may be any file of yours.
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or info.st_nlink != 1:
        os.close(fd)
        raise FolderError(f"{shown_as} is not a regular file of yours alone; nothing is written to it")
    return fd


# --- the user's own files ------------------------------------------------------------------------

class JsonStore:
    """One JSON object of the user's state (answers, trust, tasks), each record under its key, kept in a
    StateFile (dirs.py): every change is made under its lock on what is on disk, so two agents lose
    nothing. What cannot be read or written is one warning, and the agent goes on with what it has."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.file = StateFile(path)

    def load(self) -> dict:
        try:
            return self.file.read()
        except (StateError, OSError) as e:
            print(f"warning: {e if isinstance(e, StateError) else f'cannot read {self.path}: {e.strerror or e}'}",
                  file=sys.stderr)
            return {}

    def forget(self, key: str) -> bool:
        """Take one record out; whether there was one (and it is gone: one that could not be written is said)."""
        try:
            with self.file.locked() as data:
                return data.pop(key, None) is not None
        except (StateError, OSError) as e:
            print(f"warning: could not write {self.path}: {e if isinstance(e, StateError) else e.strerror or e}",
                  file=sys.stderr)
            return False

    def update(self, key: str, value: object) -> bool:
        """Set one key, keeping what other runs wrote meanwhile; whether it was written."""
        return self.edit(key, lambda kept: value)

    def edit(self, key: str, change) -> bool:
        """The record under `key` replaced by change(the record as it is on disk now, or None), under the lock;
        whether it was written (if not, a warning says why and what to fix)."""
        try:
            with self.file.locked() as data:
                data[key] = change(data.get(key))
            return True
        except (StateError, OSError) as e:
            fix = "" if isinstance(e, StateError) else " (check that the folder is yours and the disk has room)"
            print(f"warning: could not write {self.path}: {e if isinstance(e, StateError) else e.strerror or e}"
                  f"{fix}; it lasts for this session only", file=sys.stderr)
            return False