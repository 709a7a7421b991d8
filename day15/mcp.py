"""The MCP client (tutorial Day 15, section 4.4: mcp.ts).

Owns the JSON-RPC session with each configured server: the initialize handshake, tools/list,
tools/call, and matching replies to requests by id. Each server's tools become registry tools
named mcp_<server>_<tool>. Moving bytes is the transport's job (mcp_stdio.py for a command,
mcp_http.py for a URL); config lives in mcp_config.py, prompts in permissions.py.
"""
import json
import queue
import re
import sys
import threading
import time
import zlib
from collections.abc import Callable

import permissions
from mcp_config import MCP_CONFIG_PATH, McpError, ServerConfig, load_mcp_config, parse_server_config
from mcp_stdio import StdioTransport, shorten
from tools import Tool, get_tool, register_tool, unregister_tool

# Beyond the tutorial: we offer the newest revision (the tutorial offers 2025-06-18) and accept
# any revision whose messages we understand; anything else is refused.
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# Beyond the tutorial: tools/list follows nextCursor, at most this many pages (a loop guard).
MAX_TOOL_PAGES = 100
# The OpenAI API refuses longer function names.
MAX_TOOL_NAME = 64
# The permission prompt shows at most this much of the arguments, so a huge payload stays readable.
PROMPT_ARGS_CHARS = 500


class McpClient:
    """One MCP server: JSON-RPC requests matched to replies by id, over a transport.

    The transport (mcp_stdio.StdioTransport, or mcp_http.HttpTransport for a "url" entry) moves
    messages; this class numbers requests, waits for replies and routes what the server sends.
    """

    def __init__(self, name: str, config: dict | ServerConfig,
                 on_tools_changed: Callable[["McpClient"], None] | None = None) -> None:
        self.name = name
        self.config = config if isinstance(config, ServerConfig) else parse_server_config(name, config)
        self.tools: list[dict] = []
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self._transport = None
        # _lock guards _next_id, _pending and _dead, shared by callers and the reader thread.
        # Hold it only for those updates, never across a pipe write or a wait for a reply.
        self._lock = threading.Lock()
        self._next_id = 0
        # Each pending request has one reply slot, a SimpleQueue: the reader thread puts the reply
        # (a dict) or the reason the server died (a str), and the caller takes it with a timeout.
        # A SimpleQueue is one C call each way, much cheaper than an Event and a slot.
        self._pending: dict[int, queue.SimpleQueue] = {}
        self._dead: str | None = None
        # _restart_lock lets one caller restart a dead server while the others wait for it.
        self._restart_lock = threading.Lock()
        self._closed = False  # stop() was called: never restart

    # --- public API, in protocol order ------------------------------------------------------

    def start(self) -> list[dict]:
        """Start the server, run the handshake and return its tools; on failure it is shut down."""
        try:
            self._transport = self._new_transport()
            self._transport.start()
            capabilities = self._handshake().get("capabilities")
            # Beyond the tutorial: a server without the tools capability simply has no tools.
            has_tools = isinstance(capabilities, dict) and "tools" in capabilities
            self.tools = self.list_tools() if has_tools else []
            return self.tools
        except McpError as e:
            self._shutdown(str(e).removeprefix(f"{self.name}: "))
            raise

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor until the last page."""
        found, params = [], {}
        for _ in range(MAX_TOOL_PAGES):
            result = self._request("tools/list", params)
            found += [t for t in result.get("tools") or [] if isinstance(t, dict)]
            if not result.get("nextCursor"):
                return found
            params = {"cursor": result["nextCursor"]}
        raise McpError(f"{self.name}: tools/list still had more pages after {MAX_TOOL_PAGES}")

    def call_tool(self, tool: str, args: dict) -> str:
        """Call one tool by the server's own name and return its text."""
        self._restart_if_dead()
        result = self._request("tools/call", {"name": tool, "arguments": args})
        text = content_text(result)
        if result.get("isError"):
            raise McpError(f"{self.name}: tool {tool} failed: {text}")
        return text

    def stop(self) -> None:
        """Stop the server for good (no restart). Idempotent; never raises."""
        self._closed = True
        self._shutdown("server stopped")

    @property
    def dead(self) -> str | None:
        """Why the server is gone, or None while it runs."""
        return self._dead

    # --- private helpers, in the order a message travels ------------------------------------

    def _new_transport(self):
        """The transport for this config, wired to this client's routing."""
        def closed(reason: str) -> None:
            if transport is self._transport:  # not a previous run's reader, finishing late
                self._mark_dead(reason)
        if self.config.kind != "stdio":
            from mcp_http import HttpTransport  # imported only when a remote server is configured
            transport = HttpTransport(self.name, self.config, self._route, closed, self.log, self._handshake)
        else:
            transport = StdioTransport(self.name, self.config, self._route, closed, self.log)
        return transport

    def _handshake(self) -> dict:
        """initialize, check the version, then notifications/initialized; returns the server's answer."""
        init = self._request("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                            "capabilities": {}, "clientInfo": CLIENT_INFO})
        if init.get("protocolVersion") not in SUPPORTED_VERSIONS:
            raise McpError(f"{self.name}: unsupported protocol version {init.get('protocolVersion')!r} "
                           f"(this client speaks {', '.join(SUPPORTED_VERSIONS)})")
        self._notify("notifications/initialized")
        return init

    def _request(self, method: str, params: dict) -> dict:
        """Send a request and wait for the reply with the same id, at most the server's timeout."""
        waiter = queue.SimpleQueue()
        with self._lock:
            if self._dead:
                raise McpError(f"{self.name}: {method} failed: {self._dead}")
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = waiter
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            reply = waiter.get(timeout=self.config.timeout)
        except queue.Empty:
            self._cancel(request_id, method, f"no reply within {self.config.timeout:g} s")
            raise McpError(f"{self.name}: no reply to {method} within {self.config.timeout:g} s") from None
        except KeyboardInterrupt:
            self._cancel(request_id, method, "cancelled by the user")
            raise
        finally:
            with self._lock:
                self._pending.pop(request_id, None)  # a late reply now finds no one and is dropped
        if isinstance(reply, str):
            raise McpError(f"{self.name}: {method} failed: {reply}")
        return _result_of(self.name, method, reply)

    # Beyond the tutorial: tell the server to stop working on a request we gave up on.
    def _cancel(self, request_id: int, method: str, reason: str) -> None:
        if method == "initialize":
            return  # the specification forbids cancelling the handshake
        try:
            self._notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except McpError:
            pass  # the server is gone, so there is nothing left to cancel

    def _notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def _send(self, message: dict) -> None:
        transport = self._transport
        if transport is None or self._dead:
            what = message.get("method", "reply")
            raise McpError(f"{self.name}: {what} failed: {self._dead or 'not started'}")
        transport.send(message)

    def _route(self, message: dict) -> None:
        """A response goes to its waiter; a server request is answered; a notification handled."""
        if "method" in message:
            if "id" in message:
                self._answer_server_request(message)
            else:
                self._on_notification(message)
            return
        request_id = message.get("id")
        with self._lock:
            waiter = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if waiter is None:
            self.log(f"dropped a reply to unknown or expired request id {request_id!r}")
            return
        waiter.put(message)

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

    # Beyond the tutorial: server logs are shown, and a changed tool list is read again.
    def _on_notification(self, message: dict) -> None:
        """Log messages and tool-list changes are handled; every other notification is ignored."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if message["method"] == "notifications/message":
            data = params.get("data")
            self.log(f"{params.get('level', 'info')}: {data if isinstance(data, str) else json.dumps(data)}")
        elif message["method"] == "notifications/tools/list_changed":
            # Not on this thread: the reply to tools/list arrives through this very thread.
            threading.Thread(target=self._reload_tools, name=f"mcp-{self.name}-relist", daemon=True).start()

    def _reload_tools(self) -> None:
        try:
            self.tools = self.list_tools()
        except McpError as e:
            self.log(f"could not read the changed tool list: {e}")
            return
        if self.on_tools_changed:
            self.on_tools_changed(self)

    def _mark_dead(self, reason: str) -> None:
        """Fail every pending request at once with the reason; later requests fail immediately."""
        with self._lock:
            if self._dead:
                return
            self._dead = reason
            waiters = list(self._pending.values())
            self._pending.clear()
        for waiter in waiters:
            waiter.put(reason)

    # Beyond the tutorial: a server that died is started again once, by the next call to it.
    def _restart_if_dead(self) -> None:
        if not self._dead:
            return  # the common case, without taking the lock
        with self._restart_lock:
            reason = self._dead
            if not reason or self._closed or self._transport is None:
                return
            self._transport.stop()  # what is left of the old process group
            with self._lock:
                self._dead = None
            try:
                self.start()
            except McpError as e:
                raise McpError(f"{self.name}: {reason}; restarting it failed: {e}") from None
            self.log(f"restarted the server (it had stopped: {reason})")
            if self.on_tools_changed:
                self.on_tools_changed(self)

    def _shutdown(self, reason: str) -> None:
        """Fail the waiters, then stop the transport (for stdio: the process group)."""
        self._mark_dead(reason)
        if self._transport is not None:
            self._transport.stop()

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
    """The text of a tools/call result; other content is described; empty gets a placeholder."""
    parts = [_content_part(item) for item in result.get("content") or [] if isinstance(item, dict)]
    text = "\n".join(part for part in parts if part)
    if not text and result.get("structuredContent") is not None:
        # Beyond the tutorial: a result with only structured content is returned as its JSON.
        return json.dumps(result["structuredContent"], ensure_ascii=False)
    return text or "(no content)"


# Beyond the tutorial: content other than text is described instead of dropped.
def _content_part(item: dict) -> str:
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(item.get("data", "")).rstrip("=")) * 3 // 4  # base64: 4 characters, 3 bytes
        return f"[{kind}: {item.get('mimeType', 'unknown type')}, {size} bytes]"
    if kind == "resource":
        resource = item.get("resource") or {}
        return str(resource["text"]) if "text" in resource else f"[resource: {resource.get('uri', '?')}]"
    if kind == "resource_link":
        return f"[link: {item.get('uri', '?')}]"
    return f"[{kind} content]"


# --- the registry adapter ------------------------------------------------------------------

def registry_name(server: str, tool: str, hashed: bool = False) -> str:
    """mcp_<server>_<tool>, every character outside [a-zA-Z0-9_-] replaced by _."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")
    # Beyond the tutorial: a name over 64 characters (or, with hashed=True, one that collides) is
    # cut and ends in a short hash of server and tool, so it is valid for the API and stays distinct.
    if len(name) <= MAX_TOOL_NAME and not hashed:
        return name
    digest = f"{zlib.crc32(f'{server}/{tool}'.encode()):08x}"
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def as_registry_tool(server: str, client: McpClient, info: dict, name: str | None = None) -> Tool:
    """Wrap one server tool as a registry tool that asks before every call."""
    name = name or registry_name(server, info["name"])

    def run(args: dict) -> str:
        shown = shorten(json.dumps(args, ensure_ascii=False), PROMPT_ARGS_CHARS)
        prompt = f"MCP server '{server}' wants to run tool '{info['name']}' ({name}) with {shown}. Allow?"
        if not permissions.authorize(name, prompt):
            return f"call cancelled: the user declined {name}."
        return client.call_tool(info["name"], args)

    description = f"[MCP:{server}] {info.get('description') or info['name']}"
    parameters = info.get("inputSchema") or {"type": "object", "properties": {}}
    return Tool(name, description, parameters, run, authorizes=True)


# --- the set of connected servers ------------------------------------------------------------

class ServerStatus:
    """What /mcp shows for one server: its registered tool names, or its error."""

    def __init__(self, name: str, tools: list[str] | None = None, error: str | None = None,
                 connect_ms: float = 0.0, disabled: bool = False) -> None:
        self.name = name
        self.tools = [] if tools is None else tools
        self.error = error
        self.connect_ms = connect_ms
        self.disabled = disabled


_clients: dict[str, McpClient] = {}
_statuses: dict[str, ServerStatus] = {}
# _servers_lock guards _clients, _statuses and the MCP part of the registry, which a server's
# tool-list change updates from a helper thread.
_servers_lock = threading.RLock()


def connect_mcp_servers(path: str = MCP_CONFIG_PATH) -> list[ServerStatus]:
    """Start every configured server and register its tools; one failure never stops the others."""
    configs = load_mcp_config(path)
    clients = {name: McpClient(name, config, on_tools_changed=_sync_tools)
               for name, config in configs.items() if not config.disabled}
    outcomes: dict[str, tuple[float, str | None]] = {}
    # Beyond the tutorial: servers start in parallel, so start-up takes as long as the slowest.
    threads = [threading.Thread(target=lambda c=c: outcomes.__setitem__(c.name, _start(c)),
                                name=f"mcp-{c.name}-connect") for c in clients.values()]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with _servers_lock:
            for name in configs:  # registered in config order, so names are stable
                _statuses[name] = _connected(name, clients.get(name), outcomes.get(name))
    except BaseException:  # Ctrl-C or SIGTERM during start-up: no server may outlive the agent
        for client in clients.values():
            client.stop()  # a start still under way then fails at its next request and cleans up
        raise
    return mcp_statuses()


def _start(client: McpClient) -> tuple[float, str | None]:
    """(connect time in ms, None), or (0, the error)."""
    started = time.monotonic()
    try:
        client.start()
    except McpError as e:
        return 0.0, str(e).removeprefix(f"{client.name}: ")
    return (time.monotonic() - started) * 1000, None


def _connected(name: str, client: McpClient | None, outcome: tuple | None) -> ServerStatus:
    if client is None:
        return ServerStatus(name, disabled=True)
    connect_ms, error = outcome or (0.0, "failed to start; see the error above")
    if error:
        return ServerStatus(name, error=error)
    _clients[name] = client
    return ServerStatus(name, _register_all(name, client), connect_ms=connect_ms)


# Beyond the tutorial: the registry follows a server's new tool list; policies stay.
def _sync_tools(client: McpClient) -> None:
    """Replace a server's registered tools by its current list."""
    with _servers_lock:
        status = _statuses.get(client.name)
        if status is None or _clients.get(client.name) is not client:
            return  # stopped meanwhile
        for tool in status.tools:
            unregister_tool(tool)
        status.tools = _register_all(client.name, client)


def _register_all(server: str, client: McpClient) -> list[str]:
    """Register every tool of a server with default policy ask; returns the names they got."""
    names = []
    for info in client.tools:
        if not isinstance(info.get("name"), str):
            client.log(f"skipped a tool without a name: {shorten(json.dumps(info))}")
            continue
        name = registry_name(server, info["name"])
        if get_tool(name):  # Beyond the tutorial: a colliding name gets a distinct hashed one
            name = registry_name(server, info["name"], hashed=True)
        try:
            register_tool(as_registry_tool(server, client, info, name))
        except ValueError as e:
            client.log(f"skipped tool {info['name']}: {e}")
            continue
        permissions.ensure_tool_policy(name, "ask")
        names.append(name)
    return names


def mcp_statuses() -> list[ServerStatus]:
    """Per server, in config order: its registered tool names, or its error."""
    with _servers_lock:
        return list(_statuses.values())


def stop_mcp_servers() -> None:
    """Stop every server and remove its tools from the registry."""
    with _servers_lock:
        for status in _statuses.values():
            for tool in status.tools:
                unregister_tool(tool)
        clients = list(_clients.values())
        _clients.clear()
        _statuses.clear()
    for client in clients:
        client.stop()
