"""The MCP client session (tutorial Day 15, section 4.4: the McpClient class of mcp.ts).

Owns the JSON-RPC session with one server: the initialize handshake, tools/list, tools/call,
numbering requests and matching replies to them by id, and what the server sends unasked.
Moving bytes is the transport's job (mcp_stdio.py for a command, mcp_http.py for a URL);
turning servers into registry tools is mcp.py's.
"""
import json
import queue
import sys
import threading
from collections.abc import Callable

from mcp_config import McpError, ServerConfig, parse_server_config
from mcp_stdio import StdioTransport

# Beyond the tutorial: we offer the newest revision (the tutorial offers 2025-06-18) and accept
# any revision whose messages we understand; anything else is refused.
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# Beyond the tutorial: tools/list follows nextCursor, at most this many pages (a loop guard).
MAX_TOOL_PAGES = 100


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

    # --- private helpers, in the order a message travels ------------------------------------

    def _new_transport(self):
        """The transport for this config, wired to this client's routing."""
        def closed(reason: str) -> None:
            if transport is self._transport:  # not a previous run's reader, finishing late
                self._mark_dead(reason)
        if self.config.kind != "stdio":
            # Beyond the tutorial: remote servers over Streamable HTTP, imported only when configured.
            from mcp_http import HttpTransport
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
        except (queue.Empty, TimeoutError):  # TimeoutError: an HTTP transport waited for the answer itself
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
