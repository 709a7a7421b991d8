"""Beyond the tutorial: the full MCP client, the twin's McpClient (mcp.py) made ready for real servers.

Lifts the limits tutorial section 6 names and those real servers run into: a transport seam
(hardened stdio in beyond_stdio.py, Streamable HTTP in beyond_http.py), per-server timeouts and
cancellation, one restart after a crash, answers to the server's own requests, notifications (log
lines, tool-list changes), paginated tools/list, version checks, and content other than text.
Each override keeps the twin's name, so the two behaviours can be read side by side.
"""
import json
import queue
import sys
import threading
from collections.abc import Callable

import mcp
from beyond_config import ServerConfig, parse_server_config
from beyond_stdio import StdioTransport
from beyond_text import shorten
from mcp import McpError

# We offer the newest revision (the tutorial offers 2025-06-18) and accept any revision whose
# messages we understand; anything else is refused.
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# tools/list follows nextCursor, at most this many pages (a loop guard against a cycling server).
MAX_TOOL_PAGES = 100
# JSON-RPC's "method not found": a server without tools may answer tools/list with it.
METHOD_NOT_FOUND = -32601


class McpClient(mcp.McpClient):
    """One MCP server over a transport, with the same constructor and public methods as the twin's."""

    def __init__(self, name: str, cfg: dict | ServerConfig,
                 on_tools_changed: Callable[["McpClient"], None] | None = None) -> None:
        super().__init__(name, cfg if isinstance(cfg, ServerConfig) else parse_server_config(name, cfg))
        self.tools: list[dict] = []
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self._transport = None
        # _restart_lock lets one caller restart a dead server while the others wait for it.
        self._restart_lock = threading.Lock()
        self._closed = False  # stop() was called: never restart

    # --- the twin's public methods, overridden -------------------------------------------------

    def start(self) -> list[dict]:
        """Start the transport, run the handshake and list the tools; on failure, shut it down."""
        try:
            self._transport = self._new_transport()
            self._transport.start()
            self._handshake()
            self.tools = self.list_tools()
            return self.tools
        except McpError as e:
            self._shutdown(str(e))
            raise

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor; a server that answers "method not found" has no tools."""
        found, params = [], {}
        for _ in range(MAX_TOOL_PAGES):
            try:
                result = self._request("tools/list", params)
            except McpError as e:
                if e.code == METHOD_NOT_FOUND:
                    return found
                raise
            found += [t for t in result.get("tools") or [] if isinstance(t, dict)]
            if not result.get("nextCursor"):
                return found
            params = {"cursor": result["nextCursor"]}
        raise McpError(f"tools/list still had more pages after {MAX_TOOL_PAGES}", self.name)

    def call_tool(self, tool: str, args: dict) -> str:
        """Call one tool by the server's own name; every kind of content becomes text."""
        self._restart_if_dead()
        result = self._request("tools/call", {"name": tool, "arguments": args})
        text = content_text(result)
        if result.get("isError"):
            raise McpError(text, self.name)
        return text

    def stop(self) -> None:
        """Stop the server for good (no restart). Idempotent; never raises."""
        self._closed = True
        self._shutdown("server stopped")

    # --- the twin's private helpers, overridden, in the order a message travels -------------------

    def _new_transport(self):
        """The transport for this config, wired to this client's _accept."""
        def closed(reason: str) -> None:
            if transport is self._transport:  # not a previous run's reader, finishing late
                self._mark_dead(reason)
        if self.cfg.kind != "stdio":
            from beyond_http import HttpTransport  # imported only when a remote server is configured
            transport = HttpTransport(self.name, self.cfg, self._route, closed, self.log, self._handshake)
        else:
            transport = StdioTransport(self.name, self.cfg, self._accept, closed, self.log)
        return transport

    def _handshake(self) -> dict:
        """initialize, check the version, then notifications/initialized; returns the server's answer."""
        init = self._request("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                            "capabilities": {}, "clientInfo": CLIENT_INFO})
        if init.get("protocolVersion") not in SUPPORTED_VERSIONS:
            raise McpError(f"unsupported protocol version {init.get('protocolVersion')!r} "
                           f"(this client speaks {', '.join(SUPPORTED_VERSIONS)})", self.name)
        self._notify("notifications/initialized")
        return init

    def _accept(self, line: bytes | str) -> None:
        """One message from the transport: a reply, a server request or a notification; never dropped silently."""
        try:
            message = json.loads(line)
        except UnicodeDecodeError:  # invalid UTF-8 is replaced and reported, never fatal
            self.log("replaced invalid UTF-8 in a message from the server")
            message = _loads_or_none(line.decode("utf-8", "replace"))
        except ValueError:
            message = None
        for one in message if isinstance(message, list) else [message]:  # an HTTP body may be a batch
            if isinstance(one, dict):
                self._route(one)
            else:
                text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
                self.log(f"skipped a line that is not a JSON-RPC message: {shorten(text)}")

    def _route(self, message: dict) -> None:
        """A reply goes to its waiter; a server request is answered; a notification handled."""
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
        elif "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {"message": str(message["error"])}
            waiter.put(McpError(str(error.get("message", "unknown error")), self.name, error.get("code")))
        else:
            result = message.get("result")
            waiter.put(result if isinstance(result, dict) else {})

    def _request(self, method: str, params: dict) -> dict:
        """The twin's _request with the server's own timeout, and a cancel for what we give up on."""
        waiter: queue.SimpleQueue = queue.SimpleQueue()
        with self._lock:
            if self._dead:
                raise McpError(f"{method} failed: {self._dead}", self.name)
            request_id = self._next_id
            self._next_id += 1
            self._pending[request_id] = waiter
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            reply = waiter.get(timeout=self.cfg.timeout)
        except (queue.Empty, TimeoutError):  # TimeoutError: an HTTP transport waited for the answer itself
            self._cancel(request_id, method, f"no reply within {self.cfg.timeout:g} s")
            raise McpError(f"no reply to {method} within {self.cfg.timeout:g} s", self.name) from None
        except KeyboardInterrupt:
            self._cancel(request_id, method, "cancelled by the user")
            raise
        finally:
            with self._lock:
                self._pending.pop(request_id, None)  # a late reply now finds no one and is dropped
        if isinstance(reply, McpError):
            code = "" if reply.code is None else f" (code {reply.code})"
            raise McpError(f"{method} failed: {reply}{code}", self.name, reply.code)
        return reply

    def _cancel(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server to stop working on a request we gave up on."""
        if method == "initialize":
            return  # the specification forbids cancelling the handshake
        try:
            self._notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
        except McpError:
            pass  # the server is gone, so there is nothing left to cancel

    def _notify(self, method: str, params: dict | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})})

    def _send(self, message: dict) -> None:
        """Through the transport; unlike the twin's, a failed write is an error the caller sees."""
        transport = self._transport
        if transport is None or self._dead:
            raise McpError(f"{message.get('method', 'reply')} failed: {self._dead or 'not started'}", self.name)
        transport.send(message)

    # --- what the twin does not have ---------------------------------------------------------------

    def _answer_server_request(self, message: dict) -> None:
        """ping gets {}; any other method gets -32601, so a server never waits on us."""
        if message["method"] == "ping":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": METHOD_NOT_FOUND, "message": f"method not found: {message['method']}"}}
        try:
            self._send(reply)
        except McpError as e:
            self.log(f"could not answer {message['method']}: {e}")  # the server is going away

    def _on_notification(self, message: dict) -> None:
        """Log messages are shown and a changed tool list is read again; other notifications are ignored."""
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

    def _restart_if_dead(self) -> None:
        """A server that died is started again once, by the next call to it."""
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
                raise McpError(f"{reason}; restarting it failed: {e}", self.name) from None
            self.log(f"restarted the server (it had stopped: {reason})")
            if self.on_tools_changed:
                self.on_tools_changed(self)

    def _mark_dead(self, reason: str) -> None:
        """The twin's, recorded once: the first reason a server went away is the one reported."""
        with self._lock:
            if self._dead:
                return
        super()._mark_dead(reason)

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


def _loads_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def content_text(result: dict) -> str:
    """The text of a tools/call result; other content is described; empty gets a placeholder."""
    parts = [_content_part(item) for item in result.get("content") or [] if isinstance(item, dict)]
    text = "\n".join(part for part in parts if part)
    if not text and result.get("structuredContent") is not None:
        return json.dumps(result["structuredContent"], ensure_ascii=False)  # a result with only structured content
    return text or "(no content)"


def _content_part(item: dict) -> str:
    """One content item as text: text itself; images, audio, resources and links described."""
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
