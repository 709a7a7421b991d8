"""Beyond the tutorial: the mcp.json files and the local scope, edited by the `mcp` verbs (repl/manage.py) as a
person would.

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
import sys
from collections.abc import Callable

from beyond.client.config import MCP_CONFIG_PATH, ServerConfig, load_mcp_config
from beyond.dirs import (MAX_CONFIG_BYTES, NOFOLLOW, FolderError, StateError, StateFile, config_dir, decode_json,
                         exclusive, read_inside, state_dir)
from beyond.folder.project import FOLDER, find_project
from beyond.text import clean
from beyond.wire.sandbox import insist
from mcp import McpError

MCP_JSON = "mcp.json"
LOCAL_SERVERS = "local-servers.json"


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


class LocalFile:
    """The `local` scope (as Claude Code's): the user's own entries for one folder only, kept in the user's state
    ($XDG_STATE_HOME/geekagent/local-servers.json, 0600), keyed by the real path of the project's root (the
    folder holding the nearest .geekagent/ upward, else the current one), never in the project. The same face
    as McpFile: read(), entries(), edit(change), scope, path, shown."""

    scope = "local"

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.path = os.path.join(state_dir(), LOCAL_SERVERS)
        self.file = StateFile(self.path)
        self.shown = clean(f"your local servers for {self.root} ({self.path})", one_line=True)

    def read(self) -> tuple[dict, str]:
        try:
            kept = self.file.read().get(self.root)
        except (StateError, OSError) as e:
            raise ConfigFileError(str(e) if isinstance(e, StateError) else f"{self.path}: {e.strerror}") from None
        servers = kept.get("mcpServers") if isinstance(kept, dict) else None
        return {"mcpServers": servers if isinstance(servers, dict) else {}}, "mcpServers"

    def entries(self) -> dict[str, object]:
        return dict(self.read()[0]["mcpServers"])

    def edit(self, change: Callable[[dict], None]) -> None:
        """change(servers) on this folder's entries as they are on disk now, under the state file's lock."""
        try:
            with self.file.locked() as data:
                kept = data.get(self.root) if isinstance(data.get(self.root), dict) else {}
                servers = dict(kept.get("mcpServers")) if isinstance(kept.get("mcpServers"), dict) else {}
                change(servers)
                if servers:
                    data[self.root] = {"mcpServers": servers}
                else:
                    data.pop(self.root, None)
        except (StateError, OSError) as e:
            raise ConfigFileError(str(e) if isinstance(e, StateError) else f"{self.path}: {e.strerror}") from None


def project_root() -> str:
    """The project's root: the folder holding the nearest .geekagent/ upward that is the user's own, else here."""
    return find_project() or os.getcwd()


def local_file() -> LocalFile:
    return LocalFile(project_root())


def scope_files() -> list:
    """The three scopes' files, in the order a name is looked up (local > project > user)."""
    return [local_file(), project_file(), user_file()]


def entry_scopes(project_runs: bool) -> dict[str, str]:
    """Each server name -> the scope whose entry runs (local > project, when the folder is trusted > user); a
    file that cannot be read adds nothing (the verbs and start-up say why)."""
    found: dict[str, str] = {}
    for file in reversed([f for f in scope_files() if f.scope != "project" or project_runs]):
        try:
            found.update(dict.fromkeys(file.entries(), file.scope))
        except ConfigFileError:
            continue
    return found


def project_file() -> McpFile:
    """The folder's file: in the nearest .geekagent/ upward that is the user's own, else made here."""
    folder = project_root()
    return McpFile("project", os.path.join(folder, FOLDER), root=folder)


def user_file() -> McpFile:
    return McpFile("user", config_dir())


def user_config_path() -> str:
    """The user's own mcp.json: servers for every folder."""
    return os.path.join(config_dir(), "mcp.json")


def servers_to_start(project, sandbox: bool = False) -> tuple[dict[str, ServerConfig], dict[str, str]]:
    """The user's own servers, the folder's when it is trusted (`project`, trust.py's), and the user's local ones
    for this folder (no trust: the user's own), each winning by name over the one before; with where each came
    from (`sandbox`: --sandbox confines each stdio one). A file that cannot be used is reported and left out."""
    configs, origins = {}, {}
    local = local_file()
    for path, load in ((user_config_path(), lambda: load_mcp_config(user_config_path())),
                       (MCP_CONFIG_PATH, project.servers if project else dict),
                       ("local", lambda: load_mcp_config(local.path, json.dumps(local.read()[0]).encode()))):
        try:
            found = load()
        except (McpError, ConfigFileError) as e:
            print(f"error: {clean(str(e), one_line=True)}", file=sys.stderr)
            continue
        if sandbox:
            insist(found)
        configs.update(found)
        origins.update(dict.fromkeys(found, path.replace(os.path.expanduser("~"), "~", 1)))
    return configs, origins
