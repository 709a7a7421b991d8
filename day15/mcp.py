"""The MCP client as tutorial Day 15 builds it, section 4.4: the twin of mcp.ts, written as Python.

Threads stand for Node's events: they read stdout and stderr, write stdin, wait for the exit. What
the tutorial never sends fails only that call or server: a line that is no JSON object, or an id no
int, matches nothing; an entry without a command, a result or tools of another shape fail it."""
import json
import os
import queue
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import TypedDict

from permissions import authorize, ensure_tool_policy
from tools import Tool, register_tool


@dataclass
class McpServerConfig:
    """One server's start-up entry in .geekagent/mcp.json: over stdio, a local subprocess."""
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


class McpToolInfo(TypedDict, total=False):
    """A tool as tools/list describes it: its name (always there), description and JSON Schema."""
    name: str
    description: str
    inputSchema: dict


# The protocol revision we offer in the handshake; the session goes on with the server's answer.
PROTOCOL_VERSION = "2025-06-18"
# A server that does not answer within this long has failed, so the agent never hangs on it.
REQUEST_TIMEOUT_S = 10.0


class McpError(Exception):
    """An MCP failure (mcp.ts throws Error)."""


class McpClient:
    """One connection to an MCP server: the subprocess plus a line-framed JSON-RPC client."""
    def __init__(self, name: str, cfg: McpServerConfig) -> None:
        self.name, self.cfg = name, cfg
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()  # guards the three below (callers, reader); held for no I/O
        self._next_id, self._pending, self._dead = 1, {}, None  # _pending: id -> its reply's queue
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()  # lines for the writer thread
        self._read_all = threading.Event()  # stdout has ended: all the server wrote was read

    def start(self) -> list[McpToolInfo]:
        """Spawn the server, run the initialize handshake and return the tools it declares."""
        if not isinstance(self.cfg.command, str):
            raise McpError('"command" must be a string: the program that runs the server')
        if not isinstance(self.cfg.args, list):  # a string would be taken letter by letter
            raise McpError('"args" must be a list of strings')
        command = [self.cfg.command, *(str(arg) for arg in self.cfg.args)]  # "args": [8080] works
        env = {**os.environ, **{key: str(value) for key, value in self.cfg.env.items()}}
        try:
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env=env)
            for work in (self._read_stdout, self._read_stderr, self._write_stdin, self._watch_exit):
                threading.Thread(target=work, name=f"mcp-{self.name}", daemon=True).start()
        except OSError as e:  # Node reports this as the process's 'error' event
            self._mark_dead(f"server failed to start: {e}")
        self._request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                     "clientInfo": {"name": "geekagent", "version": "0.1.0"}})
        self._notify("notifications/initialized")
        tools = self._request("tools/list", {}).get("tools") or []
        if not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)
                and all(isinstance(t.get("name"), str) for t in tools)):
            raise McpError("tools/list did not answer a list of named tools")
        return tools

    def call_tool(self, tool: str, args: dict) -> str:
        """Call a tool on the server and join the text parts of its content into one string."""
        result = self._request("tools/call", {"name": tool, "arguments": args})
        content = result.get("content") if isinstance(result.get("content"), list) else []
        text = "\n".join(item["text"] for item in content if isinstance(item, dict)
                         and item.get("type") == "text" and isinstance(item.get("text"), str))
        if result.get("isError"):
            raise McpError(text or "the MCP tool returned an error")
        return text or "(no content)"

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()  # as Node's kill(): SIGTERM, at once; _watch_exit reaps it

    def _read_stdout(self) -> None:
        """Reader thread (mcp.ts: onData): a JSON message a line, each ended by its newline."""
        for raw in self.proc.stdout:
            if raw.endswith(b"\n") and (line := raw.decode("utf-8", "replace").strip()):
                self._accept(line)
        self._read_all.set()

    def _read_stderr(self) -> None:
        for raw in self.proc.stderr:  # the server's log lines, with its name in front
            print(f"[mcp:{self.name}] {raw.decode('utf-8', 'replace').rstrip()}", file=sys.stderr)

    def _write_stdin(self) -> None:
        """Writer thread: a pipe's buffer fills, and a server that stops reading would block a
        caller's write forever; here one line is written at a time, in the order sent."""
        while True:
            try:
                self.proc.stdin.write(self._outbox.get())
                self.proc.stdin.flush()
            except (OSError, ValueError):
                return  # as mcp.ts's stdin 'error' handler: the server is gone; _mark_dead says why

    def _watch_exit(self) -> None:
        """Exit thread: wait() is the only way to learn that the process ended. Its last replies
        may still be in the pipe: they are read first, for up to 0.5 s."""
        code = self.proc.wait()
        self._read_all.wait(0.5)
        self._mark_dead(f"server process exited (code {code})")

    def _accept(self, line: str) -> None:
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return  # a line that is not valid JSON is ignored
        request_id = msg.get("id") if isinstance(msg, dict) else None
        with self._lock:
            # type() is int: True is an int to Python, and must not match id 1
            pending = self._pending.pop(request_id, None) if type(request_id) is int else None
        if pending is None:
            return  # no request with that id: the server's notification, which the demo ignores
        error = msg.get("error")
        if error:
            message = error.get("message") if isinstance(error, dict) else None
            pending.put(McpError(message if isinstance(message, str) else json.dumps(error)))
        elif isinstance(msg.get("result"), dict):
            pending.put(msg["result"])
        else:
            pending.put(McpError("the reply has no result object"))

    def _request(self, method: str, params: dict) -> dict:
        """Send a request and wait for the reply with the same id; no reply in time fails."""
        reply = queue.SimpleQueue()  # _accept puts it here (Node keeps a promise's resolve)
        with self._lock:
            if self._dead:
                raise McpError(self._dead)
            request_id, self._next_id = self._next_id, self._next_id + 1
            self._pending[request_id] = reply
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            outcome = reply.get(timeout=REQUEST_TIMEOUT_S)
        except queue.Empty:
            raise McpError(f"request {method} timed out (no reply in {REQUEST_TIMEOUT_S:g} s)") \
                from None
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if isinstance(outcome, McpError):
            raise outcome
        return outcome

    def _notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})  # a notification: no id, no reply

    def _send(self, message: dict) -> None:
        self._outbox.put((json.dumps(message) + "\n").encode("utf-8"))  # for the writer thread

    def _mark_dead(self, reason: str) -> None:
        """The server failed to start or exited: keep why and fail every pending request."""
        with self._lock:
            self._dead = reason
            pending, self._pending = list(self._pending.values()), {}
        for reply in pending:
            reply.put(McpError(reason))


def as_registry_tool(server: str, client: McpClient, info: McpToolInfo) -> Tool:
    """Wrap one server tool as a registry Tool: mcp_ prefix, and run() is one tools/call."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{info['name']}")
    description = info.get("description")
    description = description if isinstance(description, str) else info["name"]
    schema = info.get("inputSchema")
    schema = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}

    def run(args: dict) -> str:
        if not authorize(name, f"\nAbout to call MCP tool {name} (from server {server})\nAllow?"):
            return "call cancelled"
        return client.call_tool(info["name"], args)

    return Tool(name, f"[MCP:{server}] {description}", schema, run, authorizes=True)


@dataclass
class McpStatus:
    """One server's connection as /mcp shows it: its registered tools, or why it failed."""
    server: str
    tools: list[str]
    error: str | None = None


_statuses: list[McpStatus] = []
_clients: list[McpClient] = []


def mcp_statuses() -> list[McpStatus]:
    return _statuses  # the panel's line and /mcp read them


def connect_mcp_servers(file: str = ".geekagent/mcp.json") -> None:
    """Read mcp.json ({"mcpServers": {name: {command, args?, env?}}}), start each server in turn
    and register its tools. No file means no servers; one server failing is only recorded."""
    _statuses.clear()
    _clients.clear()
    if not os.path.exists(file):
        return
    with open(file, encoding="utf-8") as f:
        config = json.load(f)
    for name, cfg in (config.get("mcpServers") or {}).items():
        cfg = cfg if isinstance(cfg, dict) else {}  # an entry that is no object has no command
        client = McpClient(name, McpServerConfig(cfg.get("command"), cfg.get("args") or [],
                                                 cfg.get("env") or {}))
        _clients.append(client)  # stopped at exit, even if Ctrl-C comes while it starts
        try:
            names = []
            for info in client.start():
                tool = as_registry_tool(name, client, info)
                ensure_tool_policy(tool.name, "ask")  # they ask; GeekAgent.json may say otherwise
                register_tool(tool)
                names.append(tool.name)
            _statuses.append(McpStatus(name, names))
        except Exception as err:  # as mcp.ts's catch: any failure of one server is only recorded
            client.stop()
            _statuses.append(McpStatus(name, [], str(err)))


def stop_mcp_servers() -> None:
    """Stop every server before the agent exits, so none is left behind."""
    for client in _clients:
        client.stop()
    _clients.clear()
