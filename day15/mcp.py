"""The MCP client as tutorial Day 15 builds it, section 4.4: the twin of mcp.ts, and only that. Node calls
back on events, Python has threads; where mcp.ts relies on JavaScript's rules, js.py has them."""
import json
import os
import queue
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import TypedDict

import js
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
    """An MCP failure: the message, its server, the JSON-RPC error code if any (mcp.ts throws Error)."""

    def __init__(self, message: str, server: str = "", code: int | None = None) -> None:
        super().__init__(message)
        self.server, self.code = server, code


class McpClient:
    """One connection to an MCP server: the subprocess plus a line-framed JSON-RPC client. start() runs
    the handshake and returns the tool list; each tool call is one tools/call request. Where Python
    differs from Node, one small method each, which the full client (beyond/client/) overrides:
      _send(message, waiter)    writing to stdin (Node's write() buffers; here a writer thread)
      _wait(id, method, waiter) waiting for the reply (Node's setTimeout; here a wait with a timeout)
    """

    def __init__(self, name: str, cfg: McpServerConfig) -> None:
        self.name, self.cfg = name, cfg
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()  # guards the three below, for callers and the reader; held for no I/O or wait
        self._next_id = 1
        self._pending: dict[int, queue.SimpleQueue] = {}  # id -> the caller's reply slot: a result or an McpError
        self._dead: str | None = None  # why the server cannot answer (failed to start, exited): requests fail at once
        self._outbox: queue.SimpleQueue = queue.SimpleQueue()  # lines for stdin: Node's buffered write(), a thread
        self._read_all = threading.Event()  # stdout ended: all the server wrote was read

    def start(self) -> list[McpToolInfo]:
        """Spawn the server, run the initialize handshake and return the tools it declares."""
        args, env = js.spawn_args(self.cfg.args, self.cfg.env)
        try:
            self.proc = subprocess.Popen([self.cfg.command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, env={**os.environ, **env})
        except OSError as e:  # Node reports this as the process's 'error' event
            self._mark_dead(f"server failed to start: {e}")
        else:
            for task, what in ((self._read_stdout, "stdout"), (self._read_stderr, "stderr"),
                               (self._write_stdin, "stdin"), (self._watch_exit, "exit")):
                threading.Thread(target=task, name=f"mcp-{self.name}-{what}", daemon=True).start()
        self._request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                     "clientInfo": {"name": "geekagent", "version": "0.1.0"}})
        self._notify("notifications/initialized")
        return js.iterable(js.nullish(js.member(self._request("tools/list", {}), "tools"), []))  # connect's for...of

    def call_tool(self, tool: str, args: dict) -> str:
        """Call a tool on the server and join the text parts of its content into one string."""
        result = self._request("tools/call", {"name": tool, "arguments": args})
        content = js.member(result, "content")
        text = "\n".join("" if item.get("text") is None else js.string(item["text"])  # join() writes null as ""
                         for item in (content if isinstance(content, list) else [])
                         if isinstance(item, dict) and item.get("type") == "text")
        if js.truthy(js.member(result, "isError")):
            raise McpError(text or "the MCP tool returned an error", self.name)
        return text or "(no content)"

    def stop(self) -> None:
        if self.proc:
            self.proc.terminate()  # as Node's kill(): SIGTERM, at once; _watch_exit reaps the process

    def _read_stdout(self) -> None:
        """Reader thread (mcp.ts: onData): split stdout into lines, one JSON message per line."""
        for raw in self.proc.stdout:
            line = js.trim(raw.decode("utf-8", "replace"))
            if line and raw.endswith(b"\n"):  # mcp.ts never takes a last line without its newline
                self._accept(line)
        self._read_all.set()

    def _read_stderr(self) -> None:
        """Stderr thread: the server's log lines, with its name in front."""
        for raw in self.proc.stderr:
            print(f"[mcp:{self.name}] {raw.decode('utf-8', 'replace').rstrip()}", file=sys.stderr)

    def _write_stdin(self) -> None:
        """Writer thread (Node's buffered stdin.write): one line at a time, in the order sent."""
        while True:
            try:
                self.proc.stdin.write(self._outbox.get())
                self.proc.stdin.flush()
            except (OSError, ValueError):
                return  # as mcp.ts's stdin 'error' handler: the server is gone; _mark_dead says why

    def _watch_exit(self) -> None:
        """Exit thread (Node's 'exit' event); what was written before is read first, as Node's 'data' comes first."""
        code = self.proc.wait()
        self._read_all.wait(0.5)
        self._mark_dead(f"server process exited (code {code})")

    def _accept(self, line: str) -> None:
        try:
            msg = js.parse(line)
        except (ValueError, RecursionError):
            return  # a line that is not valid JSON is ignored
        request_id = msg.get("id") if isinstance(msg, dict) else None  # mcp.ts crashes on null.id; skipped here
        if not isinstance(request_id, (int, float)) or isinstance(request_id, bool):
            return  # mcp.ts's Map holds numbers: any other id (a list, true, a string) matches nothing
        if js.truthy(msg.get("error")):
            message = js.member(msg["error"], "message")  # mcp.ts: message ?? JSON.stringify(error)
            self._settle(request_id, McpError(json.dumps(msg["error"]) if message is None else js.string(message),
                                              self.name, js.member(msg["error"], "code")))
        else:
            self._settle(request_id, msg.get("result"))

    def _settle(self, request_id: int, outcome: object) -> bool:
        """Node resolves or rejects the promise; here the waiting slot gets it. False: no such request."""
        with self._lock:
            pending = self._pending.pop(request_id, None)
        if pending is not None:  # None: no request with that id (a notification from the server: not handled)
            pending.put(outcome)
        return pending is not None

    def _request(self, method: str, params: dict, waiter: queue.SimpleQueue | None = None) -> dict:
        """Send a request and wait for the reply with the same id (in `waiter`, if given); no reply in time fails."""
        waiter = queue.SimpleQueue() if waiter is None else waiter  # Node keeps the promise's resolve and reject
        with self._lock:
            if self._dead:
                raise McpError(self._dead, self.name)
            request_id, self._next_id = self._next_id, self._next_id + 1
            self._pending[request_id] = waiter
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, waiter)
            reply = self._wait(request_id, method, waiter)
        finally:
            with self._lock:
                self._pending.pop(request_id, None)
        if isinstance(reply, McpError):
            raise reply
        return reply

    def _wait(self, request_id: int, method: str, waiter: queue.SimpleQueue) -> object:
        """Node sets a timer for the request; a thread waits on its reply slot with a timeout instead."""
        try:
            return waiter.get(timeout=REQUEST_TIMEOUT_S)
        except queue.Empty:
            raise McpError(f"request {method} timed out (no reply in {REQUEST_TIMEOUT_S:g} s)", self.name) from None

    def _notify(self, method: str) -> None:
        """A notification has no id and gets no reply."""
        self._send({"jsonrpc": "2.0", "method": method})

    def _send(self, message: dict, waiter: queue.SimpleQueue | None = None) -> None:
        """Node's write() buffers and returns at once; here the writer thread writes it."""
        self._outbox.put((json.dumps(message) + "\n").encode("utf-8"))

    def _mark_dead(self, reason: str) -> None:
        """The server failed to start or exited: keep why (the first reason) and fail every pending request."""
        with self._lock:
            self._dead = self._dead or reason
            pending, self._pending = list(self._pending.values()), {}
        for waiter in pending:
            waiter.put(McpError(reason, self.name))


def as_registry_tool(server: str, client: McpClient, info: McpToolInfo) -> Tool:
    """Wrap one server tool as a registry Tool: mcp_ prefix, and run() is one tools/call."""
    tool = js.string(js.member(info, "name", "undefined"))  # as `${info.name}` writes it
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")

    def run(args: dict) -> str:
        if not authorize(name, f"\nAbout to call MCP tool {name} (from server {server})\nAllow?"):
            return "call cancelled"
        return client.call_tool(js.member(info, "name"), args)

    return Tool(name=name, description=f"[MCP:{server}] {js.string(js.nullish(js.member(info, 'description'), tool))}",
                parameters=js.nullish(js.member(info, "inputSchema"), {"type": "object", "properties": {}}),
                run=run, authorizes=True)


@dataclass
class McpStatus:
    """One server's connection as /mcp shows it: its registered tools, or why it failed."""
    server: str
    tools: list[str]
    error: str | None = None


_statuses: list[McpStatus] = []
_clients: list[McpClient] = []


def mcp_statuses() -> list[McpStatus]:
    return _statuses


def mcp_server_entries(config: object) -> list[tuple[str, McpServerConfig]]:
    """mcp.ts's `Object.entries(config.mcpServers ?? {})`, each entry as written (the trust question shows it)."""
    servers = js.nullish(js.member(config, "mcpServers"), {})
    return [(name, McpServerConfig(cfg.get("command"), js.nullish(cfg.get("args"), []), js.nullish(cfg.get("env"), {}))
             if isinstance(cfg, dict) else McpServerConfig(None)) for name, cfg in js.entries(servers)]


def connect_mcp_servers(file: str = ".geekagent/mcp.json") -> None:
    """Read mcp.json ({"mcpServers": {name: {command, args?, env?}}}), start each server in turn and register
    its tools. No file means no servers; one server failing is only recorded."""
    _statuses.clear()
    _clients.clear()
    if not os.path.exists(file):
        return
    with open(file, encoding="utf-8") as f:
        config = js.parse(f.read())
    for name, cfg in mcp_server_entries(config):
        client = McpClient(name, cfg)
        try:
            names = []
            for info in client.start():
                tool = as_registry_tool(name, client, info)
                ensure_tool_policy(tool.name, "ask")  # external tools ask; GeekAgent.json may allow or deny
                register_tool(tool)
                names.append(tool.name)
            _clients.append(client)
            _statuses.append(McpStatus(name, names))
        except BaseException as err:  # as mcp.ts's catch: any failure of one server is only recorded
            client.stop()
            if not isinstance(err, Exception):  # Ctrl-C or SIGTERM: stopped on the way out
                raise
            _statuses.append(McpStatus(name, [], str(err)))


def stop_mcp_servers() -> None:
    """Stop every server process before the agent exits, so none is left behind."""
    for client in _clients:
        client.stop()
    _clients.clear()
