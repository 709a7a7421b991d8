"""MCP client over stdio (tutorial Day 15, sections 3 to 4.4).

Owns one subprocess per configured server: it spawns it, performs the initialize handshake,
lists its tools, and matches JSON-RPC replies to requests by id. Each server's tools become
registry tools named mcp_<server>_<tool>. Permission prompts live in permissions.py; the tool
loop lives in chat.py. Shutdown: close stdin, then SIGTERM, then SIGKILL the process group.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

import permissions
from tools import Tool, register_tool, unregister_tool

MCP_CONFIG_PATH = ".geekagent/mcp.json"
# The revision the tutorial speaks; servers answer with the one they will use.
PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# A silent server counts as failed after this long, so the REPL never hangs on it (tutorial value).
REQUEST_TIMEOUT_S = 10.0
# How long stop() gives a server at each step (stdin closed, then SIGTERM) before the next one.
STOP_GRACE_S = 1.0
# The permission prompt shows at most this much of the arguments, so a huge payload stays readable.
PROMPT_ARGS_CHARS = 500


class McpError(Exception):
    """Any MCP failure; the message names the server and what happened."""


@dataclass
class ServerConfig:
    """One entry of mcpServers in .geekagent/mcp.json."""
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    # Beyond the tutorial: a per-server request timeout, for servers that are slow on purpose.
    timeout: float = REQUEST_TIMEOUT_S


class _Waiter:
    """One reply slot: the caller waits on `done`, the reader thread fills `reply` or `error`."""
    __slots__ = ("done", "reply", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: dict | None = None
        self.error: str | None = None


class McpClient:
    """One MCP server over stdio: newline-delimited JSON-RPC on its stdin and stdout."""

    def __init__(self, name: str, config: dict | ServerConfig) -> None:
        self.name = name
        self.config = config if isinstance(config, ServerConfig) else parse_server_config(name, config)
        self.tools: list[dict] = []
        self._proc: subprocess.Popen | None = None
        self._threads: list[threading.Thread] = []
        self._last_stderr = ""
        # _lock guards _next_id, _pending and _dead, shared by callers and the reader thread.
        # Hold it only for those updates, never across a pipe write or a wait for a reply.
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending: dict[int, _Waiter] = {}
        self._dead: str | None = None
        # _write_lock keeps one message's bytes together on stdin when several threads send.
        self._write_lock = threading.Lock()
        self._stopped = False

    # --- public API, in protocol order ------------------------------------------------------

    def start(self) -> list[dict]:
        """Spawn the server, run the handshake and return its tools; on failure it is stopped."""
        try:
            self._spawn()
            self._request("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                         "capabilities": {}, "clientInfo": CLIENT_INFO})
            self._notify("notifications/initialized")
            self.tools = self._request("tools/list", {}).get("tools", [])
            return self.tools
        except McpError:
            self.stop()
            raise

    def call_tool(self, tool: str, args: dict) -> str:
        """Call one tool by the server's own name and return its text."""
        result = self._request("tools/call", {"name": tool, "arguments": args})
        text = content_text(result)
        if result.get("isError"):
            raise McpError(f"{self.name}: tool {tool} failed: {text}")
        return text

    def stop(self) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group. Never raises."""
        if self._stopped:
            return
        self._stopped = True
        self._mark_dead("server stopped")
        proc = self._proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass  # the server already closed its end; the signals below still apply
        if not _wait_group(proc, STOP_GRACE_S):
            _signal_group(proc, signal.SIGTERM)
            if not _wait_group(proc, STOP_GRACE_S):
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                _wait_group(proc, STOP_GRACE_S)
        for thread, pipe in zip(self._threads, (proc.stdout, proc.stderr)):
            thread.join(STOP_GRACE_S)
            if not thread.is_alive():  # a pipe still held by an escaped process stays open
                pipe.close()

    # --- private helpers, in the order a message travels ------------------------------------

    def _spawn(self) -> None:
        cfg = self.config
        try:
            self._proc = subprocess.Popen(
                [cfg.command, *cfg.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env={**os.environ, **cfg.env},
                # Beyond the tutorial: an own process group, so launchers' children stop with them.
                start_new_session=True)
        except OSError as e:
            self._mark_dead(f"cannot start server: {e.strerror or e} ({cfg.command})")
            raise McpError(f"{self.name}: cannot start server: {e.strerror or e} ({cfg.command})") from None
        self._threads = [
            threading.Thread(target=self._read_stdout, name=f"mcp-{self.name}-stdout", daemon=True),
            threading.Thread(target=self._drain_stderr, name=f"mcp-{self.name}-stderr", daemon=True)]
        for thread in self._threads:
            thread.start()

    def _request(self, method: str, params: dict) -> dict:
        """Send a request and wait for the reply with the same id, at most the server's timeout."""
        waiter = _Waiter()
        with self._lock:
            if self._dead:
                raise McpError(f"{self.name}: {method} failed: {self._dead}")
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = waiter
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            if not waiter.done.wait(self.config.timeout):
                raise McpError(f"{self.name}: no reply to {method} within {self.config.timeout:g} s")
        finally:
            with self._lock:
                self._pending.pop(request_id, None)  # a late reply now finds no one and is dropped
        if waiter.error is not None:
            raise McpError(f"{self.name}: {method} failed: {waiter.error}")
        return _result_of(self.name, method, waiter.reply)

    def _notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def _send(self, message: dict) -> None:
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            with self._write_lock:
                self._proc.stdin.write(data)
                self._proc.stdin.flush()
        except (OSError, ValueError):  # broken pipe, or stdin already closed by stop()
            raise McpError(f"{self.name}: {message['method']} failed: "
                           f"{self._dead or 'the server is not reading its input'}") from None

    def _read_stdout(self) -> None:
        """Reader thread: one JSON message per line; when stdout closes, fail every waiter."""
        try:
            for line in self._proc.stdout:
                self._handle_line(line)
        finally:
            self._mark_dead(self._exit_reason())

    def _handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict):
            self._route(message)
        else:
            shown = _shorten(line.decode("utf-8", "replace"))
            self.log(f"skipped a line that is not a JSON-RPC message: {shown}")

    def _route(self, message: dict) -> None:
        """A response goes to its waiter; a request from the server is answered; the rest ignored."""
        if "method" in message:
            if "id" in message:
                self._answer_server_request(message)
            return  # notifications need no answer
        request_id = message.get("id")
        with self._lock:
            waiter = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if waiter is None:
            self.log(f"dropped a reply to unknown or expired request id {message.get('id')!r}")
            return
        waiter.reply = message
        waiter.done.set()

    # Beyond the tutorial: answer the server's own requests (ping and the rest), so it never waits on us.
    def _answer_server_request(self, message: dict) -> None:
        """ping gets {}; any other method gets JSON-RPC error -32601 (method not found)."""
        if message["method"] == "ping":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": -32601, "message": f"method not found: {message['method']}"}}
        try:
            self._send(reply)
        except McpError as e:
            self.log(f"could not answer {message['method']}: {e}")  # the server is going away

    def _drain_stderr(self) -> None:
        """Stderr thread: an undrained pipe would block the server, so print every line."""
        for raw in self._proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._last_stderr = line
                self.log(line)

    # Beyond the tutorial: the reason carries the exit code and the server's last stderr line.
    def _exit_reason(self) -> str:
        """Why stdout closed: the exit code and the server's last stderr line, if any."""
        if self._dead:
            return self._dead  # stop() got there first
        try:
            code = self._proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            return "server closed its stdout"
        self._threads[1].join(STOP_GRACE_S)  # let the last stderr line arrive
        last = f": {self._last_stderr}" if self._last_stderr else ""
        return f"server exited (code {code}){last}"

    def _mark_dead(self, reason: str) -> None:
        """Fail every pending request at once with the reason; later requests fail immediately."""
        with self._lock:
            if self._dead:
                return
            self._dead = reason
            waiters = list(self._pending.values())
            self._pending.clear()
        for waiter in waiters:
            waiter.error = reason
            waiter.done.set()

    def log(self, text: str) -> None:
        """Report on our stderr with the server's prefix."""
        try:
            print(f"[mcp:{self.name}] {text}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # our own stderr is closed: there is nowhere left to report to


def _result_of(server: str, method: str, reply: dict) -> dict:
    """The `result` of a JSON-RPC reply; an `error` becomes McpError with its message and code."""
    if "error" in reply:
        error = reply["error"] if isinstance(reply["error"], dict) else {"message": str(reply["error"])}
        raise McpError(f"{server}: {method} failed: {error.get('message', 'unknown error')} "
                       f"(code {error.get('code', '?')})")
    result = reply.get("result")
    return result if isinstance(result, dict) else {}


def content_text(result: dict) -> str:
    """Join the text items of a tools/call result; an empty result gets a placeholder."""
    texts = [item.get("text", "") for item in result.get("content") or []
             if isinstance(item, dict) and item.get("type") == "text"]
    return "\n".join(texts) or "(no content)"


def _wait_group(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until the server and every process in its group are gone; False on timeout."""
    deadline = time.monotonic() + timeout
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    while _group_alive(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)  # orphans in the group are not our children, so there is nothing to wait on
    return True


def _group_alive(proc: subprocess.Popen) -> bool:
    """True while a process of the server's group runs (zombies nobody reaps do not count)."""
    if os.path.isdir("/proc"):
        return any(_running_in_group(entry.path, proc.pid) for entry in os.scandir("/proc")
                   if entry.name.isdigit())
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(proc.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _running_in_group(proc_dir: str, pgid: int) -> bool:
    try:
        with open(f"{proc_dir}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after "pid (comm)": state ppid pgrp ...
    except (OSError, IndexError):
        return False  # the process ended while we looked
    return int(fields[2]) == pgid and fields[0] != b"Z"


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass  # already gone


def _shorten(text: str, limit: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


# --- the registry adapter ------------------------------------------------------------------

def registry_name(server: str, tool: str) -> str:
    """mcp_<server>_<tool>, with every character outside [a-zA-Z0-9_-] replaced by _."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")


def as_registry_tool(server: str, client: McpClient, info: dict) -> Tool:
    """Wrap one server tool as a registry tool that asks before every call."""
    name = registry_name(server, info["name"])

    def run(args: dict) -> str:
        shown = _shorten(json.dumps(args, ensure_ascii=False), PROMPT_ARGS_CHARS)
        prompt = f"MCP server '{server}' wants to run tool '{info['name']}' ({name}) with {shown}. Allow?"
        if not permissions.authorize(name, prompt):
            return f"call cancelled: the user declined {name}."
        return client.call_tool(info["name"], args)

    description = f"[MCP:{server}] {info.get('description') or info['name']}"
    parameters = info.get("inputSchema") or {"type": "object", "properties": {}}
    return Tool(name, description, parameters, run, authorizes=True)


# --- configuration and the set of connected servers -----------------------------------------

def parse_server_config(where: str, entry: object) -> ServerConfig:
    """Check one mcpServers entry; the error names `where` and the key to fix."""
    if not isinstance(entry, dict):
        raise McpError(f"{where}: must be an object with \"command\"")
    command, args, env = entry.get("command"), entry.get("args", []), entry.get("env", {})
    timeout = entry.get("timeout", REQUEST_TIMEOUT_S)
    if not isinstance(command, str) or not command:
        raise McpError(f"{where}: \"command\" must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpError(f"{where}: \"args\" must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise McpError(f"{where}: \"env\" must be an object of strings")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise McpError(f"{where}: \"timeout\" must be a positive number of seconds")
    return ServerConfig(command, args, env, float(timeout))


def load_mcp_config(path: str = MCP_CONFIG_PATH) -> dict[str, ServerConfig]:
    """Read mcp.json; a missing file means no servers, a broken one raises McpError naming it."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise McpError(f"{path}: cannot read MCP config: {e}") from None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpError(f"{path}: \"mcpServers\" must be an object of server name -> config")
    return {name: parse_server_config(f"{path}: mcpServers.{name}", entry)
            for name, entry in servers.items()}


@dataclass
class ServerStatus:
    """What /mcp shows for one server."""
    name: str
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    connect_ms: float = 0.0


_clients: dict[str, McpClient] = {}
_statuses: dict[str, ServerStatus] = {}


def connect_mcp_servers(path: str = MCP_CONFIG_PATH) -> list[ServerStatus]:
    """Start every configured server and register its tools; one failure never stops the others."""
    for name, config in load_mcp_config(path).items():
        _statuses[name] = _connect_one(name, config)
    return mcp_statuses()


def _connect_one(name: str, config: ServerConfig) -> ServerStatus:
    client = McpClient(name, config)
    started = time.monotonic()
    try:
        infos = client.start()
    except McpError as e:
        return ServerStatus(name, error=str(e).removeprefix(f"{name}: "))
    _clients[name] = client
    status = ServerStatus(name, connect_ms=(time.monotonic() - started) * 1000)
    for info in infos:
        status.tools.extend(_register(name, client, info))
    return status


def _register(server: str, client: McpClient, info: dict) -> list[str]:
    """Register one server tool with default policy ask; returns the name it got (or none)."""
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        client.log(f"skipped a tool without a name: {_shorten(json.dumps(info))}")
        return []
    tool = as_registry_tool(server, client, info)
    try:
        register_tool(tool)
    except ValueError as e:
        client.log(f"skipped tool {info['name']}: {e}")
        return []
    permissions.ensure_tool_policy(tool.name, "ask")
    return [tool.name]


def mcp_statuses() -> list[ServerStatus]:
    """Per server, in config order: its registered tool names, or its error."""
    return list(_statuses.values())


def stop_mcp_servers() -> None:
    """Stop every server and remove its tools from the registry."""
    for status in _statuses.values():
        for tool in status.tools:
            unregister_tool(tool)
    for client in _clients.values():
        client.stop()
    _clients.clear()
    _statuses.clear()
