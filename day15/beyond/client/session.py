"""Beyond the tutorial: the full MCP client, the twin's McpClient (mcp.py) made ready for real servers.

Lifts the limits tutorial section 6 names and those real servers run into: one transport interface
(beyond_base.Transport: hardened stdio in beyond_stdio.py, Streamable HTTP in beyond_http.py),
per-server timeouts and cancellation, one restart after a crash, a new session when an HTTP server
forgot ours, answers to the server's own requests and its notifications (beyond_from_server.py),
paginated lists, version checks, content other than text, and the 2026-07-28 revision, which has
no handshake (beyond_modern.py).

It extends the twin through the twin's own hooks: _send (writing), _wait (Node's timer), _accept
(a message read) and _settle (Node's resolve and reject); the twin's _request runs every request.
Its transport and how it is replaced are its Link's (beyond_link.py). This is the one file that
touches the twin's fields (_lock, _dead, _next_id).
"""
import json
import queue
import sys
import time
from collections.abc import Callable

import mcp
from beyond.waits import Call, Calls, wait_for
from beyond.wire.base import METHOD_NOT_FOUND, SessionExpired, TransportError
from beyond.client.config import ServerConfig, parse_server_config
from beyond.client.from_server import FromServer
from beyond.client.link import Link
from beyond.client.revisions import MAX_INPUT_ROUNDS, Revisions
from beyond.client.schema import mismatch
from beyond.wire.stdio import StdioTransport
from beyond.text import clean, content_text, parse_message, prompt_messages, resource_text, shorten
from mcp import McpError
from permissions import mask_secrets

CLIENT_INFO = {"name": "geekagent-day15-python", "version": "0.1.0"}
# These requests (what start-up asks) wait startupTimeout; the others timeout.
STARTUP_METHODS = ("initialize", "server/discover", "tools/list", "resources/list", "resources/templates/list")
# tools/list follows nextCursor, at most this many pages (a loop guard against a cycling server),
# and at most this much JSON over all pages: thousands of tools, far more than a model is offered.
# Held as Python objects, JSON of small objects takes about ten times its size: 8 MB of pages cost
# the agent about 85 MB at most (`make bench` measures it).
MAX_TOOL_PAGES = 100
MAX_LISTED_BYTES = 8 << 20
# Progress reported by the server pushes a call's deadline out by its timeout, up to this many timeouts.
PROGRESS_CAP = 10
# Of what a server lists as resources, this many URIs of at most this many characters are kept.
MAX_LISTED = 500
MAX_URI_CHARS = 500


class ReplyError(McpError):
    """An error reply of the server: its message and code, and its data (for -32022, the versions it speaks)."""

    def __init__(self, message: str, server: str, code: int | None, data: object = None) -> None:
        super().__init__(message, server, code)
        self.data = data


class McpClient(mcp.McpClient):
    """One MCP server over a transport, with the same constructor and public methods as the twin's.

    What the server sends on its own is handled by its FromServer (beyond_from_server.py), the
    revision it speaks by its Revisions (beyond_modern.py); `echo` prints the server's words as they come.
    """

    client_info = CLIENT_INFO

    def __init__(self, name: str, cfg: dict | ServerConfig,
                 on_tools_changed: Callable[["McpClient"], None] | None = None, echo: bool = False) -> None:
        super().__init__(name, cfg if isinstance(cfg, ServerConfig) else parse_server_config(name, cfg))
        self.tools: list[dict] = []
        # The URIs and URI templates of its resources, as last listed: its reader tool and @ completion.
        self.listed: list[str] = []
        self.capabilities: dict = {}  # what the server declared in its handshake (or server/discover)
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self.closed = False  # stop() was called: never restart
        self.login = False  # whether a remote server that asks for a login gets one (start(login=True))
        self._skipped_lines = 0  # lines from the server that were no JSON-RPC message
        self.from_server = FromServer(self, echo)
        self.revisions = Revisions(self)
        self.link = Link(self)  # the transport, and how it is replaced
        # The request each thread is making (a Call), for the twin's hooks, which are called without it.
        self._calls = Calls()

    @property
    def revision(self) -> str | None:
        return self.revisions.revision

    # --- the twin's public methods, overridden -------------------------------------------------

    def start(self, login: bool | None = None) -> list[dict]:
        """Start the transport, agree on a revision (the handshake, or not) and list the tools; on
        failure, shut it down. With `login`, a remote server that asks for a login gets one (the
        browser, or a URL to open); without, that is an error saying so (later starts keep the choice)."""
        if login is not None:
            self.login = login
        try:
            self.connect()
            self.revisions.open()
            self.tools = self.list_tools()
            self.listed = self.list_uris()
            self.revisions.subscribe()
            return self.tools
        except McpError as e:
            self._shutdown(str(e))
            raise

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor; a server that answers "method not found" has no tools."""
        return [tool for tool in self._list_all("tools/list", "tools") if self.revisions.usable(tool)]

    # Resources and prompts: tutorial sections 3.1 and 6 leave them out.
    def list_resources(self) -> list[dict]:
        return self._list_all("resources/list", "resources")

    def list_resource_templates(self) -> list[dict]:
        return self._list_all("resources/templates/list", "resourceTemplates")

    def list_uris(self) -> list[str]:
        """The URIs and URI templates of its resources (none without the capability); either list failing
        alone is said and the other kept, as many servers answer one of the two only."""
        if "resources" not in self.capabilities:
            return []
        found = []
        for listing, key in ((self.list_resources, "uri"), (self.list_resource_templates, "uriTemplate")):
            try:
                found += [item.get(key) for item in listing()]
            except McpError as e:
                self.log(f"listing its resources failed: {e}")
        return [uri for uri in found if isinstance(uri, str) and 0 < len(uri) <= MAX_URI_CHARS][:MAX_LISTED]

    def read_resource(self, uri: str) -> str:
        """resources/read: text as it is, anything else described."""
        return resource_text(self._request("resources/read", {"uri": uri}))

    def list_prompts(self) -> list[dict]:
        return self._list_all("prompts/list", "prompts")

    def get_prompt(self, name: str, arguments: dict[str, str]) -> list[dict]:
        """prompts/get: the prompt's messages, each {"role", "text"}."""
        return prompt_messages(self._request("prompts/get", {"name": name, "arguments": arguments}))

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

    def call_tool(self, tool: str, args: dict, on_progress: Callable[[str], None] | None = None,
                  output_schema: dict | None = None) -> str:
        """Call one tool by the server's own name; every kind of content becomes text.

        With on_progress the call asks for progress (a progress token): what the server reports goes
        to on_progress and pushes the call's deadline out (by its timeout, up to PROGRESS_CAP timeouts
        in all); the agent's calls all ask. Structured content that does not match the tool's
        output_schema is an error.
        """
        if self._dead:
            self.link.restart_if_dead()
        call = Call(self.cfg.timeout, on_progress, PROGRESS_CAP)
        params = {"name": tool, "arguments": args}
        token = None if on_progress is None else self.from_server.track(call)
        if token is not None:
            params["_meta"] = {"progressToken": token}
        try:
            result = self._request("tools/call", params, call=call)
        finally:
            if token is not None:
                self.from_server.untrack(token)
        if not isinstance(result.get("content", []), list):
            raise McpError("tools/call answered \"content\" that is not a list", self.name)
        text = content_text(result)
        if result.get("isError") is True:  # only true counts: "false" or 1 is not an error flag
            raise McpError(text, self.name)
        problem = mismatch(result["structuredContent"], output_schema) if (
            isinstance(output_schema, dict) and "structuredContent" in result) else None
        if problem:
            raise McpError(f"its structuredContent does not match the tool's outputSchema: {problem}", self.name)
        return text

    def login_status(self) -> str | None:
        """A remote server's login (logged in until when, which scopes), or None where there is none."""
        transport = self.link.transport
        return transport.login_status() if transport else None

    def stop(self) -> None:
        """Stop the server for good (no restart). Idempotent; never raises."""
        self.closed = True
        self._shutdown("server stopped")

    # --- connecting ------------------------------------------------------------------------------

    def transport_kind(self) -> type:
        if self.cfg.kind == "stdio":
            return StdioTransport
        from beyond.wire.http import HttpTransport  # imported only when a remote server is configured
        return HttpTransport

    def connect(self) -> None:
        """A new transport (the link's), started; what it could not do is this server's McpError."""
        try:
            self.link.connect(self.login)
        except TransportError as e:
            raise McpError(str(e), self.name) from None

    def listen(self, request: dict | None = None) -> None:
        """Open the stream of what the server sends unasked: over HTTP the session's GET, or a request
        whose answer it is (2026-07-28's subscriptions/listen, which no one waits for)."""
        self.link.transport.listen(request, self._headers(request or {}))

    def new_request_id(self) -> int:
        with self._lock:
            request_id, self._next_id = self._next_id, self._next_id + 1
        return request_id

    # --- the twin's hooks and helpers, overridden, in the order a message travels -------------------

    def _request(self, method: str, params: dict, timeout: float | None = None, call: Call | None = None) -> dict:
        """The twin's _request, given the server's own timeouts (or `timeout`, or a `call` made
        already) and, for a 2026-07-28 server, _meta on every request, one retry in another version
        when it refuses this one, and the rounds of an input_required answer (each a new request,
        all within the one call's deadline). The hooks below cancel what we give up on."""
        if call is None:
            call = Call(timeout or (self.cfg.startup_timeout if method in STARTUP_METHODS else self.cfg.timeout))
        calls, revisions = self._calls, self.revisions
        outer, calls.current = calls.current, call
        try:
            result = self._exchange(method, params)
            for _ in range(MAX_INPUT_ROUNDS):
                params = revisions.fulfil(method, params, result) if "resultType" in result else None
                if params is None:
                    break
                result = self._exchange(method, params)
        finally:
            calls.current = outer
        if "resultType" in result:  # absent, as from earlier revisions: complete
            revisions.result_kind(method, result)
        return result

    def _exchange(self, method: str, params: dict) -> dict:
        """One request through the twin's _request (in a version both sides speak)."""
        revisions = self.revisions
        if self._dead:  # the twin says only why; this names the request too
            raise McpError(f"{method} failed: {self._dead}", self.name)
        try:
            return super()._request(method, revisions.with_meta(params) if revisions.modern else params)
        except ReplyError as e:
            revisions.switch_version(method, e)  # raises unless a version both sides speak was found
            return super()._request(method, revisions.with_meta(params))

    def _send(self, message: dict) -> None:
        """The twin's writing hook: through the transport, by the deadline of the request this thread
        makes (a notification: by its timeout). Unlike the twin's, a failed write is an error the caller sees."""
        call = self._calls.current
        deadline = call.deadline if call else time.monotonic() + self.cfg.timeout
        for attempt in (1, 2):
            try:
                return self._transmit(message, deadline)
            except SessionExpired as e:
                if attempt == 2 or message.get("method") in (None, "initialize"):
                    raise McpError(f"{e}{' even after a new initialize' if attempt == 2 else ''}", self.name) from None
                self.link.renew_session(e.session)  # the server forgot our session: initialize again, once
            except TransportError as e:
                raise McpError(str(e), self.name) from None
            except TimeoutError:  # an HTTP transport waited for the answer itself, past the deadline
                self._cancel(message["id"], message["method"], f"no reply within {call.timeout:g} s")
                raise McpError(f"no reply to {message['method']} within {call.timeout:g} s", self.name) from None

    def send_message(self, message: dict, deadline: float) -> None:
        """One message through the transport by the deadline (now: one try, as answers and cancels are)."""
        try:
            self._transmit(message, deadline)
        except TransportError as e:
            raise McpError(str(e), self.name) from None

    def _transmit(self, message: dict, deadline: float) -> None:
        transport = self.link.transport
        if transport is None or self._dead:
            raise McpError(f"{message.get('method', 'reply')} failed: {self._dead or 'not started'}", self.name)
        transport.send(message, deadline, None if self.cfg.kind == "stdio" else self.revisions.headers(message))

    def _headers(self, message: dict) -> dict[str, str] | None:
        """What MCP asks a message to carry in headers, where a transport has them (not over stdio)."""
        return None if self.cfg.kind == "stdio" else self.revisions.headers(message)

    def _wait(self, request_id: int, method: str, waiter: queue.SimpleQueue) -> object:
        """The twin's timer hook: until the call's deadline, which progress may push out; what we give
        up on (the deadline, Ctrl-C) is cancelled; an error reply is named by its request."""
        call = self._calls.current
        try:
            reply = wait_for(waiter, call)
        except queue.Empty:
            with self._lock:  # from now on a late reply finds no waiter and is _reply's to handle
                self._pending.pop(request_id, None)
            try:
                reply = waiter.get_nowait()  # one that came while the wait was ending is still taken
            except queue.Empty:
                self._cancel(request_id, method, f"no reply within {call.timeout:g} s")
                raise McpError(f"no reply to {method} within {call.timeout:g} s", self.name) from None
        except KeyboardInterrupt:
            self._cancel(request_id, method, "cancelled by the user")
            raise
        if isinstance(reply, McpError):
            code = "" if reply.code is None else f" (code {reply.code})"
            return ReplyError(f"{method} failed: {reply}{code}", self.name, reply.code, getattr(reply, "data", None))
        return reply

    def _cancel(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server to stop working on a request we gave up on."""
        if method in ("initialize", "server/discover"):
            return  # the specification forbids cancelling the handshake; a probe is left alone as well
        if self.revisions.modern and self.cfg.kind != "stdio":
            return  # over HTTP in 2026-07-28 the closed answer stream is the cancel
        try:
            self.send_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": request_id, "reason": reason}}, time.monotonic())
        except McpError:
            pass  # the server is gone or not reading, so there is nothing left to cancel

    def _accept(self, line: bytes | dict) -> None:
        """The twin's, for every message the transport delivers: a reply, a server request or a
        notification; whatever goes wrong is reported, never dropped silently, so the reader lives on."""
        if isinstance(line, dict):
            message = line
        else:
            message, complaint = parse_message(line)
            if complaint:
                self._skipped(complaint)
            if message is None:
                return
        try:
            if "method" in message:
                self.from_server.handle(message)
            else:
                self._reply(message)
        except Exception as e:  # a message we cannot handle is reported; the reader thread must live on
            self.log(f"could not handle a message ({type(e).__name__}: {e}): {shorten(json.dumps(message))}")

    def _skipped(self, complaint: str) -> None:
        """A line that is no message: the first is said on stderr, the rest kept for /logs (all with --verbose)."""
        self._skipped_lines += 1
        if self._skipped_lines == 1 or self.from_server.echo:
            self.log(complaint + ("" if self.from_server.echo else " (more such lines go to /logs)"))
        else:
            self.from_server.tail.append(clean(complaint, one_line=True))

    def _reply(self, message: dict) -> None:
        """A reply goes to its waiter, through the twin's _settle; our ids are ints: true, 1.0 or "1"
        is no reply to request 1."""
        request_id = message.get("id")
        if type(request_id) is int and request_id == self.revisions.listen_id:
            return self.revisions.unsubscribed(message)
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {"message": str(message["error"])}
            code = error.get("code") if type(error.get("code")) is int else None
            outcome = ReplyError(shorten(str(error.get("message", "unknown error")), 2000), self.name, code,
                                 error.get("data"))
        elif not isinstance(message.get("result"), dict):
            outcome = McpError(f"the reply's result is not an object: {shorten(json.dumps(message.get('result')), 80)}",
                               self.name)
        else:
            outcome = message["result"]
        if type(request_id) is int and self._settle(request_id, outcome):
            return
        if isinstance(outcome, dict) and "supportedVersions" in outcome:  # a probe's late answer: not lost
            return self.revisions.late_discovery(outcome)
        self.log(f"dropped a reply to unknown or expired request id {shorten(repr(request_id), 80)}")

    # --- the twin's fields, for the link ---------------------------------------------------------

    @property
    def dead_reason(self) -> str | None:
        return self._dead

    def _revive(self) -> None:
        """Forget the last death: the link is starting the server again."""
        with self._lock:
            self._dead = None

    def _mark_dead(self, reason: str) -> None:
        """The twin's, recorded once: the first reason a server went away is the one reported."""
        with self._lock:
            if self._dead:
                return
        super()._mark_dead(reason)

    def _shutdown(self, reason: str) -> None:
        """Fail the waiters, then stop the transport (for stdio: the process group)."""
        self._mark_dead(reason)
        self.link.retire()

    def log(self, text: str) -> None:
        """Report on our stderr with the server's prefix: secrets masked, control characters made
        visible, one line (so a server cannot forge a line of another's, or the prompt)."""
        try:
            print(f"[mcp:{self.name}] {clean(mask_secrets(text), one_line=True)}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # our own stderr is closed: there is nowhere left to report to
