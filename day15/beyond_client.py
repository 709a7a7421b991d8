"""Beyond the tutorial: the full MCP client, the twin's McpClient (mcp.py) made ready for real servers.

Lifts the limits tutorial section 6 names and those real servers run into: a transport seam
(hardened stdio in beyond_stdio.py, Streamable HTTP in beyond_http.py), per-server timeouts and
cancellation, one restart after a crash, answers to the server's own requests, notifications (log
lines, tool-list changes), paginated tools/list, version checks, and content other than text; and
the 2026-07-28 revision, which has no handshake (beyond_modern.py).
Each override keeps the twin's name, so the two behaviours can be read side by side.
"""
import itertools
import json
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

import mcp
from beyond_config import ServerConfig, parse_server_config
from beyond_base import METHOD_NOT_FOUND, wait_for
from beyond_from_server import ANSWERS_PER_S, FromServer
from beyond_modern import Revisions
from beyond_stdio import StdioTransport
from beyond_text import clean, content_text, loads_or_none, shorten
from mcp import McpError
from permissions import mask_secrets

# We offer the newest revision (the tutorial offers 2025-06-18) and accept any revision whose
# messages we understand; anything else is refused.
PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# These requests wait startupTimeout; the others timeout.
STARTUP_METHODS = ("initialize", "server/discover", "tools/list")
# tools/list follows nextCursor, at most this many pages (a loop guard against a cycling server),
# and at most this much JSON over all pages: thousands of tools, far more than a model is offered.
MAX_TOOL_PAGES = 100
MAX_LISTED_BYTES = 16 << 20
# A crashed server is started again once per crash, and at most this many times in a session.
MAX_RESTARTS = 3
# The server's own words (stderr lines and log notifications) kept for /logs and for its errors.
TAIL_LINES = 200
# Progress reported by the server pushes a call's deadline out by its timeout, up to this many timeouts.
PROGRESS_CAP = 10


class ReplyError(McpError):
    """An error reply of the server: its message and code, and its data (for -32022, the versions it speaks)."""

    def __init__(self, message: str, server: str, code: int | None, data: object = None) -> None:
        super().__init__(message, server, code)
        self.data = data


class McpClient(FromServer, Revisions, mcp.McpClient):
    """One MCP server over a transport, with the same constructor and public methods as the twin's.

    What the server sends on its own (requests, notifications, progress, log lines) is handled by
    the FromServer part (beyond_from_server.py), the revision spoken by the Revisions part
    (beyond_modern.py); the rest is here, each override under the twin's name.
    """

    client_info = CLIENT_INFO

    def __init__(self, name: str, cfg: dict | ServerConfig,
                 on_tools_changed: Callable[["McpClient"], None] | None = None) -> None:
        super().__init__(name, cfg if isinstance(cfg, ServerConfig) else parse_server_config(name, cfg))
        self.tools: list[dict] = []
        self.capabilities: dict = {}  # what the server declared in its handshake (or server/discover)
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self._transport = None
        # _restart_lock lets one caller restart a dead server while the others wait for it, and
        # guards _restarts and _restart_failed.
        self._restart_lock = threading.Lock()
        self._restarts = 0
        self._restart_failed: str | None = None  # why the last restart failed: no other until it runs again
        self._closed = False  # stop() was called: never restart
        # _relist_lock guards _relisting and _relist_again: one re-list in flight, one queued.
        self._relist_lock = threading.Lock()
        self._relisting = False
        self._relist_again = False
        self._dropped_answers = 0  # answers to the server's requests not given (not writable at once, or too many)
        self._answer_budget, self._answer_time = ANSWERS_PER_S, time.monotonic()  # answers allowed now, and when
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)  # what the server said last (appends are atomic)
        # _progress maps a call's progress token to its callback, its deadline (a one-item list that
        # progress pushes out) and the latest that deadline may be. No lock: every touch is one dict
        # or list operation, which the GIL makes atomic, and a call is cheaper without one.
        self._progress: dict[int, tuple[Callable[[str], None], list[float], float]] = {}
        self._tokens = itertools.count(1)  # next() on a count is atomic too

    # --- the twin's public methods, overridden -------------------------------------------------

    def start(self) -> list[dict]:
        """Start the transport, agree on a revision (the handshake, or not) and list the tools; on failure, shut it down."""
        try:
            self._transport = self._new_transport()
            self._transport.start()
            self._open()
            self.tools = self.list_tools()
            self._subscribe()
            return self.tools
        except McpError as e:
            self._shutdown(str(e))
            raise

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor; a server that answers "method not found" has no tools."""
        return [tool for tool in self._list_all("tools/list", "tools") if self._usable_over_http(tool)]

    # Resources and prompts: tutorial sections 3.1 and 6 leave them out.
    def list_resources(self) -> list[dict]:
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict]:
        return self._list_all("resources/templates/list", "resourceTemplates")

    def read_resource(self, uri: str) -> str:
        """resources/read: text as it is, anything else described."""
        result = self._request("resources/read", {"uri": uri})
        contents = result.get("contents") if isinstance(result.get("contents"), list) else []
        return content_text({"content": [{"type": "resource", "resource": c} for c in contents]})

    def list_prompts(self) -> list[dict]:
        return self._list_all("prompts/list", "prompts")

    def get_prompt(self, name: str, arguments: dict[str, str]) -> list[dict]:
        """prompts/get: the prompt's messages, each {"role", "text"}."""
        result = self._request("prompts/get", {"name": name, "arguments": arguments})
        messages = result.get("messages") if isinstance(result.get("messages"), list) else []
        return [{"role": m.get("role") if m.get("role") in ("user", "assistant") else "user",
                 "text": content_text({"content": [m.get("content")]})} for m in messages if isinstance(m, dict)]

    def _list_all(self, method: str, key: str) -> list[dict]:
        """A list request, following nextCursor (at most MAX_TOOL_PAGES pages); "method not found" is none."""
        found, params, size = [], {}, 0
        for _ in range(MAX_TOOL_PAGES):
            try:
                result = self._request(method, params)
            except McpError as e:
                if e.code == METHOD_NOT_FOUND:
                    return found
                raise
            items = result.get(key, [])
            if not isinstance(items, list):
                raise McpError(f"{method} answered \"{key}\" that is not a list: {shorten(json.dumps(items))}",
                               self.name)
            found += [item for item in items if isinstance(item, dict)]
            size += len(json.dumps(items)) if items else 0  # about what the pages took on the wire
            if size > MAX_LISTED_BYTES:
                raise McpError(f"{method} answered over {MAX_LISTED_BYTES >> 20} MB in its pages; refused", self.name)
            cursor = result.get("nextCursor")
            if not cursor:
                return found
            params = {"cursor": cursor}
        raise McpError(f"{method} still had more pages after {MAX_TOOL_PAGES}", self.name)

    def call_tool(self, tool: str, args: dict, on_progress: Callable[[str], None] = lambda text: None) -> str:
        """Call one tool by the server's own name; every kind of content becomes text.

        The call carries a progress token: what the server reports goes to on_progress and pushes
        the call's deadline out (by its timeout, up to PROGRESS_CAP timeouts in all).
        """
        self._restart_if_dead()
        deadline, token = [time.monotonic() + self.cfg.timeout], next(self._tokens)
        self._progress[token] = (on_progress, deadline, deadline[0] + (PROGRESS_CAP - 1) * self.cfg.timeout)
        try:
            result = self._request("tools/call", {"name": tool, "arguments": args, "_meta": {"progressToken": token}},
                                   deadline)
        finally:
            del self._progress[token]
        if not isinstance(result.get("content", []), list):
            raise McpError("tools/call answered \"content\" that is not a list", self.name)
        text = content_text(result)
        if result.get("isError") is True:  # only true counts: "false" or 1 is not an error flag
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
            transport = HttpTransport(self.name, self.cfg, self._accept_message, closed, self.log, self._handshake,
                                      self._input_schema)
        else:
            transport = StdioTransport(self.name, self.cfg, self._accept, closed, self.log, self._reject, self.said)
        return transport

    def _handshake(self) -> dict:
        """initialize, check the version, then notifications/initialized; returns the server's answer."""
        init = self._request("initialize", {"protocolVersion": PROTOCOL_VERSION,
                                            "capabilities": {}, "clientInfo": CLIENT_INFO})
        if init.get("protocolVersion") not in SUPPORTED_VERSIONS:
            raise McpError(f"unsupported protocol version {init.get('protocolVersion')!r} "
                           f"(this client speaks {', '.join(SUPPORTED_VERSIONS)})", self.name)
        self.revision = init["protocolVersion"]
        self._notify("notifications/initialized")
        self.capabilities = init.get("capabilities") if isinstance(init.get("capabilities"), dict) else {}
        return init

    def _accept(self, line: bytes | str) -> None:
        """One message from the transport: a reply, a server request or a notification; never dropped silently."""
        try:
            message = json.loads(line)
        except UnicodeDecodeError:  # invalid UTF-8 is replaced and reported, never fatal
            self.log("replaced invalid UTF-8 in a message from the server")
            message = loads_or_none(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):  # RecursionError: nested deeper than Python parses
            message = None
        if not isinstance(message, dict):
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            self.log(f"skipped a line that is not a JSON-RPC message: {shorten(text)}")
            return
        self._accept_message(message)

    def _accept_message(self, message: dict) -> None:
        """Route one parsed message; whatever goes wrong is reported, so the reading thread lives on."""
        try:
            self._route(message)
        except Exception as e:  # a message we cannot handle is reported; the reader thread must live on
            self.log(f"could not handle a message ({type(e).__name__}: {e}): {shorten(json.dumps(message))}")

    def _route(self, message: dict) -> None:
        """A reply goes to its waiter; a server request is answered; a notification handled."""
        if "method" in message:
            if "id" in message:
                self._answer_server_request(message)
            else:
                self._on_notification(message)
            return
        request_id = message.get("id")
        if type(request_id) is int and request_id == self._listen_id:  # the server ended our subscription
            error = message.get("error") if isinstance(message.get("error"), dict) else {}
            self.said(f"subscriptions/listen ended{': ' + shorten(str(error.get('message')), 200) if error else ''}")
            return
        with self._lock:  # our ids are ints: true, 1.0 or "1" is no reply to request 1
            waiter = self._pending.pop(request_id, None) if type(request_id) is int else None
        if waiter is None:
            self.log(f"dropped a reply to unknown or expired request id {shorten(repr(request_id), 80)}")
        elif "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {"message": str(message["error"])}
            code = error.get("code") if type(error.get("code")) is int else None
            waiter.put(ReplyError(shorten(str(error.get("message", "unknown error")), 2000), self.name, code,
                                  error.get("data")))
        elif not isinstance(message.get("result"), dict):
            waiter.put(McpError(f"the reply's result is not an object: {shorten(json.dumps(message.get('result')), 80)}",
                                self.name))
        else:
            waiter.put(message["result"])

    def _reject(self, request_id: int, reason: str) -> None:
        """A reply the transport discarded (over the size limit) fails its request at once."""
        with self._lock:
            waiter = self._pending.pop(request_id, None)
        if waiter is not None:
            waiter.put(McpError(reason, self.name))

    def _request(self, method: str, params: dict, deadline: list[float] | None = None,
                 timeout: float | None = None) -> dict:
        """The twin's _request with the server's own timeouts (or `timeout`), a deadline progress can
        push out (a one-item list), a cancel for what we give up on, and for a 2026-07-28 server
        _meta on every request and one retry in another version when it refuses this one."""
        try:
            return self._request_once(method, params, deadline, timeout)
        except ReplyError as e:
            self._switch_version(method, e)  # raises unless a version both sides speak was found
            return self._request_once(method, params, deadline, timeout)

    def _request_once(self, method: str, params: dict, deadline: list[float] | None, timeout: float | None) -> dict:
        waiter: queue.SimpleQueue = queue.SimpleQueue()
        with self._lock:
            if self._dead:
                raise McpError(f"{method} failed: {self._dead}", self.name)
            request_id = self._next_id
            self._next_id += 1
            self._pending[request_id] = waiter
        if timeout is None:
            timeout = self.cfg.startup_timeout if method in STARTUP_METHODS else self.cfg.timeout
        deadline = deadline or [time.monotonic() + timeout]  # the write and the wait share it
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": self._with_meta(params)},
                       deadline[0])
            reply = wait_for(waiter, deadline)
        except (queue.Empty, TimeoutError):  # TimeoutError: an HTTP transport waited for the answer itself
            self._cancel(request_id, method, f"no reply within {timeout:g} s")
            raise McpError(f"no reply to {method} within {timeout:g} s", self.name) from None
        except KeyboardInterrupt:
            self._cancel(request_id, method, "cancelled by the user")
            raise
        finally:
            with self._lock:
                self._pending.pop(request_id, None)  # a late reply now finds no one and is dropped
        if isinstance(reply, McpError):
            code = "" if reply.code is None else f" (code {reply.code})"
            raise ReplyError(f"{method} failed: {reply}{code}", self.name, reply.code, getattr(reply, "data", None))
        self._result_kind(method, reply)
        return reply

    def _cancel(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server to stop working on a request we gave up on."""
        if method in ("initialize", "server/discover"):
            return  # the specification forbids cancelling the handshake; a probe is left alone as well
        if self.modern and self.cfg.kind != "stdio":
            return  # over HTTP in 2026-07-28 the closed answer stream is the cancel
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": request_id, "reason": reason}}
        try:
            self._send(message, time.monotonic())  # one try: giving up must not wait on the server
        except McpError:
            pass  # the server is gone or not reading, so there is nothing left to cancel

    def _notify(self, method: str, params: dict | None = None) -> None:
        message = {"jsonrpc": "2.0", "method": method, **({} if params is None else {"params": params})}
        self._send(message, time.monotonic() + self.cfg.timeout)

    def _send(self, message: dict, deadline: float) -> None:
        """Through the transport, by the deadline; unlike the twin's, a failed write is an error the caller sees."""
        transport = self._transport
        if transport is None or self._dead:
            raise McpError(f"{message.get('method', 'reply')} failed: {self._dead or 'not started'}", self.name)
        transport.send(message, deadline)

    # --- what the twin does not have: restarts ----------------------------------------------------

    def _restart_if_dead(self) -> None:
        """A server that died is started again by the next call to it: once per death, MAX_RESTARTS in all."""
        if not self._dead:
            return  # the common case, without taking the lock
        with self._restart_lock:
            with self._lock:
                reason = self._dead
            if not reason or self._closed or self._transport is None:
                return
            if self._restart_failed:
                raise McpError(self._restart_failed, self.name)
            if self._restarts >= MAX_RESTARTS:
                raise McpError(f"{reason}; not restarted: it stopped {MAX_RESTARTS + 1} times", self.name)
            self._restarts += 1
            self._transport.stop()  # what is left of the old process group
            with self._lock:
                self._dead = None
            try:
                self.start()
            except McpError as e:
                self._restart_failed = f"{reason}; restarting it failed: {e}"
                raise McpError(self._restart_failed, self.name) from None
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
        """Report on our stderr with the server's prefix: secrets masked, control characters made
        visible, one line (so a server cannot forge a line of another's, or the prompt)."""
        try:
            print(f"[mcp:{self.name}] {clean(mask_secrets(text), one_line=True)}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # our own stderr is closed: there is nowhere left to report to
