"""Beyond the tutorial: the two mcp.json files, edited by the `mcp` verbs (repl/manage.py) as a person would.

A folder's .geekagent/mcp.json (the nearest upward, made here when there is none) holds the project's
servers; $XDG_CONFIG_HOME/geekagent/mcp.json the user's own, for every folder. An edit reads the file
again under a lock (kept in the user's state, never in the folder), changes one entry under the key the
file already uses (`mcpServers`, or VS Code's `servers`), keeps everything else, and replaces the file
whole (a temporary file beside it, fsync, rename), never through a link. A file that does not parse is
never rewritten: the error names it and the line.
"""
import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Callable

from beyond.dirs import (MAX_CONFIG_BYTES, NOFOLLOW, FolderError, config_dir, decode_json, exclusive, read_inside,
                         state_dir)
from beyond.folder.project import FOLDER, find_project
from beyond.text import clean

MCP_JSON = "mcp.json"


class ConfigFileError(ValueError):
    """A file the verbs cannot use as it is; the message names the file (and the line)."""


class McpFile:
    """One mcp.json: `scope` is "project" or "user"; `folder` is the one it is in, `root` the one it may not
    lead out of (a project's .geekagent/ may not be a link elsewhere either)."""

    def __init__(self, scope: str, folder: str, root: str | None = None) -> None:
        self.scope, self.folder, self.root = scope, folder, root or folder
        self.path = os.path.join(folder, MCP_JSON)
        self.shown = clean(self.path, one_line=True)  # a folder's name may hold any character: shown made visible

    def read(self) -> tuple[dict, str]:
        """(the whole file's object, the key its servers are under); a missing file is an empty one."""
        try:
            raw = read_inside(os.path.relpath(self.path, self.root), MAX_CONFIG_BYTES, root=self.root)
        except FolderError as e:
            raise ConfigFileError(f"{self.path}: {e}") from None
        if raw is None:
            return {}, "mcpServers"
        try:
            data = decode_json(self.path, raw)
        except ValueError as e:
            raise ConfigFileError(str(e)) from None
        if not isinstance(data, dict):
            raise ConfigFileError(f'{self.path}: holds no JSON object; write {{"mcpServers": {{...}}}}')
        key = "servers" if "mcpServers" not in data and "servers" in data else "mcpServers"
        if not isinstance(data.get(key, {}), dict):
            raise ConfigFileError(f'{self.path}: "{key}" must be an object of server name -> entry')
        return data, key

    def entries(self) -> dict[str, object]:
        data, key = self.read()
        return dict(data.get(key, {}))

    def edit(self, change: Callable[[dict], None]) -> None:
        """change(servers) on the file as it is on disk now, under its lock; the file is written only when
        the change changed something, made with its folder when it did not exist."""
        with exclusive(_lock_path(self.path)):
            data, key = self.read()
            servers = data.setdefault(key, {})
            before = json.dumps(data, sort_keys=True)
            change(servers)
            if json.dumps(data, sort_keys=True) != before:
                self._write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def _write(self, text: str) -> None:
        """The file replaced whole inside its folder (made if missing, never a link), its mode kept."""
        os.makedirs(self.folder, mode=0o700 if self.scope == "user" else 0o755, exist_ok=True)
        try:
            dir_fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW)
        except OSError as e:
            raise ConfigFileError(f"{self.folder} is a link or no folder ({e.strerror}); nothing is written") from None
        temporary = f".{MCP_JSON}.{os.getpid()}.tmp"
        try:
            try:
                mode = stat.S_IMODE(os.stat(MCP_JSON, dir_fd=dir_fd, follow_symlinks=False).st_mode)
            except FileNotFoundError:
                mode = 0o600 if self.scope == "user" else 0o644
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, mode, dir_fd=dir_fd)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, MCP_JSON, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)  # a link there is replaced
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=dir_fd)
                raise
        finally:
            os.close(dir_fd)


def _lock_path(path: str) -> str:
    """Where the lock of a file is taken: the user's state, so nothing is left in a project folder."""
    digest = hashlib.sha256(os.path.realpath(path).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return os.path.join(state_dir(), "locks", f"mcp-{digest}")


def project_file() -> McpFile:
    """The folder's file: in the nearest .geekagent/ upward that is the user's own, else made here."""
    folder = find_project() or os.getcwd()
    return McpFile("project", os.path.join(folder, FOLDER), root=folder)


def user_file() -> McpFile:
    return McpFile("user", config_dir())
