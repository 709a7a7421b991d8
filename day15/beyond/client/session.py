"""Beyond the tutorial: the full MCP client, the twin's McpClient (mcp.py) made ready for real servers.

Lifts the limits tutorial section 6 names and those real servers run into: one transport interface
(wire/: hardened stdio, Streamable HTTP), per-server timeouts and cancellation, one restart after a
crash and a new session when an HTTP server forgot ours (link.py), answers to the server's own
requests and its notifications (from_server.py), paginated lists and content other than text
(content.py), version checks and the 2026-07-28 revision, which has no handshake (revisions.py).

It extends the twin through the hooks the twin lists at the top of its class (_waiter, _send,
_wait, _accept, _settle); the twin's _request runs every request, each with a Waiter that carries
its Call (deadline, progress). Its collaborators come in: the handlers of what a server asks
(asked.Asks), where a login meets the user (a Screen of auth/login.py), what to do when its tools change.
"""
import json
import queue
import sys
import time
from collections.abc import Callable

import mcp
from beyond.client.asked import Asks, NoAsks
from beyond.client.config import ServerConfig, parse_server_config
from beyond.client.content import call_text, gathered, parse_message, prompt_messages, resource_text
from beyond.client.from_server import FromServer
from beyond.client.link import Link
from beyond.client.revisions import MAX_INPUT_ROUNDS, Revisions
from beyond.text import clean, shorten
from beyond.waits import Call, wait_for
from beyond.wire.base import About, Deadline, SessionExpired, TransportError, kind_for
from mcp import McpError
from permissions import mask_secrets

# These requests (what start-up asks) wait startupTimeout; the others timeout.
STARTUP_METHODS = ("initialize", "server/discover", "tools/list", "resources/list", "resources/templates/list")
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


class Waiter(queue.SimpleQueue):
    """The reply slot of one request (the twin's _waiter), with its Call: the deadline the hooks write
    and wait by, and where its progress goes."""

    __slots__ = ("call",)

    def __init__(self, call: Call) -> None:
        super().__init__()
        self.call = call


class McpClient(mcp.McpClient):
    """One MCP server over a transport, with the same constructor and public methods as the twin's.

    What the server sends on its own is handled by its FromServer, the revision it speaks by its
    Revisions, its transport kept by its Link; `echo` prints the server's words as they come.
    """

    def __init__(self, name: str, cfg: dict | ServerConfig, on_tools_changed: Callable[["McpClient"], None] | None = None,
                 echo: bool = False, asks: Asks | None = None, screen=None, transport=None) -> None:
        super().__init__(name, cfg if isinstance(cfg, ServerConfig) else parse_server_config(name, cfg))
        self.tools: list[dict] = []
        # The URIs and URI templates of its resources, as last listed: its reader tool and @ completion.
        self.listed: list[str] = []
        self.capabilities: dict = {}  # what the server declared in its handshake (or server/discover)
        # Called (from a helper thread) after the server's tool list changed and was read again.
        self.on_tools_changed = on_tools_changed
        self.asks = asks or NoAsks()
        self.screen = screen  # where a login meets the user, for a transport that logs in
        # What makes its transport: Kind(name, config, inbox); the entry's kind (wire/base.py) unless given.
        self.transport_kind = transport or kind_for(self.cfg)
        self.closed = False  # stop() was called: never restart
        self.login = False  # whether a remote server that asks for a login gets one (start(login=True))
        self._skipped_lines = 0  # lines from the server that were no JSON-RPC message
        self.from_server = FromServer(self, echo)
        self.revisions = Revisions(name, self.cfg, self._request, self._notify, self.from_server.said,
                                   self.reconnect, self.asks.capabilities)
        self.link = Link(self)  # the transport, and how it is replaced

    @property
    def revision(self) -> str | None:
        return self.revisions.revision

    # --- the twin's public methods, overridden -------------------------------------------------

    def start(self, login: bool | None = None) -> list[dict]:
        """Start the transport, agree on a revision (the handshake, or not) and list the tools; on
        failure, shut it down. With `login`, a remote server that asks for a login gets one (the
        browser, or a URL to open); without, that is LoginNeeded (later starts keep the choice)."""
        if login is not None:
            self.login = login
        try:
            self.connect()
            self.capabilities = self.revisions.open()
            self.listen()
            self.tools = self.list_tools()
            self.listed = self.list_uris()
            self.revisions.subscribe(self.capabilities, self.open_stream, self.new_request_id)
            return self.tools
        except McpError as e:
            self._shutdown(str(e))
            raise

    def list_tools(self) -> list[dict]:
        """tools/list, following nextCursor; a server that answers "method not found" has no tools."""
        transport = self.link.transport
        headers, usable = bool(transport and transport.carries_headers), []
        for tool in gathered(self._request, "tools/list", "tools", self.name):
            why = self.revisions.unusable(tool, headers)
            if why:
                self.log(f"skipped tool {shorten(str(tool.get('name')), 80)}: {why}")
            else:
                usable.append(tool)
        return usable

    # Resources and prompts: tutorial sections 3.1 and 6 leave them out.
    def list_resources(self) -> list[dict]:
        return gathered(self._request, "resources/list", "resources", self.name)

    def list_resource_templates(self) -> list[dict]:
        return gathered(self._request, "resources/templates/list", "resourceTemplates", self.name)

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

    def relist(self, stale: set[str]) -> bool:
        """Read the lists announced changed ("tools", "resources") again; True when either is not what it was."""
        before = self.tools, self.listed
        if "resources" in stale:
            self.listed = self.list_uris()  # says itself what it could not list
        try:
            if "tools" in stale:
                self.tools = self.list_tools()
        except McpError as e:
            self.log(f"could not read the changed tool list: {e}")
        return (self.tools, self.listed) != before

    def read_resource(self, uri: str) -> str:
        """resources/read: text as it is, anything else described."""
        return resource_text(self._request("resources/read", {"uri": uri}))

    def list_prompts(self) -> list[dict]:
        return gathered(self._request, "prompts/list", "prompts", self.name)

    def get_prompt(self, name: str, arguments: dict[str, str]) -> list[dict]:
        """prompts/get: the prompt's messages, each {"role", "text"}."""
        return prompt_messages(self._request("prompts/get", {"name": name, "arguments": arguments}))

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
        return call_text(result, output_schema, self.name)

    def login_status(self) -> str | None:
        """A remote server's login (logged in until when, which scopes), or None where there is none."""
        transport = self.link.transport
        return transport.login_status() if transport else None

    def stop(self) -> None:
        """Stop the server for good (no restart). Idempotent; never raises."""
        self.closed = True
        self._shutdown("server stopped")

    # --- connecting; what the link and the revisions ask of it --------------------------------------

    def connect(self) -> None:
        """A new transport (the link's), started; what it could not do is this server's McpError."""
        try:
            self.link.connect(self.login)
        except TransportError as e:
            raise McpError(str(e), self.name) from None

    def reconnect(self) -> None:
        """A stdio server that exited (on a probe it did not understand) is started again."""
        self.link.reconnect_if_dead()

    def listen(self) -> None:
        """Open the stream of what the server sends unasked, where the transport has one (before
        2026-07-28: Streamable HTTP's GET stream; 2026-07-28 subscribes instead)."""
        if not self.revisions.modern:
            self.link.transport.listen(About(self.revision))

    def open_stream(self, request: dict) -> None:
        """Send a request whose answer stays open (2026-07-28's subscriptions/listen), which no one waits for."""
        about = self.revisions.about(request, self.tools)
        self._transmit(request, time.monotonic() + self.cfg.timeout,
                       About(about.revision, about.routed, about.method, about.name, stays_open=True))

    def renew(self) -> None:
        """The server forgot our session: initialize again, and listen again."""
        self.capabilities = self.revisions.handshake()
        self.listen()

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
        revisions = self.revisions
        result = self._exchange(method, params, call)
        for _ in range(MAX_INPUT_ROUNDS):
            params = revisions.retry_params(method, params, result, self._answer) if "resultType" in result else None
            if params is None:
                break
            result = self._exchange(method, params, call)
        if "resultType" in result:  # absent, as from earlier revisions: complete
            revisions.result_kind(method, result)
        return result

    def _answer(self, method: str, params: object) -> dict:
        """What the handlers answer one request of the server's (AskRefused for an error answer)."""
        return self.asks.answer(self.name, self.cfg, method, params)

    def _exchange(self, method: str, params: dict, call: Call) -> dict:
        """One request through the twin's _request (in a version both sides speak)."""
        revisions = self.revisions
        if self._dead:  # the twin says only why; this names the request too
            raise McpError(f"{method} failed: {self._dead}", self.name)
        try:
            return super()._request(method, revisions.with_meta(params), Waiter(call))
        except ReplyError as e:
            revisions.switch_version(method, e)  # raises unless a version both sides speak was found
            return super()._request(method, revisions.with_meta(params), Waiter(call))

    def _send(self, message: dict, waiter: Waiter | None = None) -> None:
        """The twin's writing hook: through the transport, by the request's deadline (a notification:
        by its timeout). Unlike the twin's, a failed write is an error the caller sees."""
        call = waiter.call if waiter is not None else None
        deadline = call.deadline if call else time.monotonic() + self.cfg.timeout
        for attempt in (1, 2):
            try:
                return self._transmit(message, deadline, self.revisions.about(message, self.tools))
            except SessionExpired as e:
                if attempt == 2 or message.get("method") in (None, "initialize"):
                    raise McpError(f"{e}{' even after a new initialize' if attempt == 2 else ''}", self.name) from None
                self.link.renew_session(e.session)  # the server forgot our session: initialize again, once
            except Deadline as e:
                if call is None:
                    raise McpError(str(e), self.name) from None
                self._cancel(message["id"], message["method"], f"no reply within {call.timeout:g} s")
                raise McpError(f"no reply to {message['method']} within {call.timeout:g} s", self.name) from None
            except TransportError as e:
                raise McpError(str(e), self.name) from None

    def send_message(self, message: dict, deadline: float) -> None:
        """One message through the transport by the deadline (now: one try, as answers and cancels are)."""
        try:
            self._transmit(message, deadline, self.revisions.about(message, self.tools))
        except TransportError as e:
            raise McpError(str(e), self.name) from None

    def _transmit(self, message: dict, deadline: float, about: About) -> None:
        transport = self.link.transport
        if transport is None or self._dead:
            raise McpError(f"{message.get('method', 'reply')} failed: {self._dead or 'not started'}", self.name)
        transport.send(message, deadline, about)

    def _wait(self, request_id: int, method: str, waiter: Waiter) -> object:
        """The twin's timer hook: until the call's deadline, which progress may push out; what we give
        up on (the deadline, Ctrl-C) is cancelled; an error reply is named by its request."""
        call = waiter.call
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
        transport = self.link.transport
        if self.revisions.modern and transport is not None and transport.answers_apart:
            return  # in 2026-07-28 a request's own answer stream, closed, is the cancel
        try:
            self.send_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": request_id, "reason": reason}}, time.monotonic())
        except McpError:
            pass  # the server is gone or not reading, so there is nothing left to cancel

    # --- what the transport's inbox hands on (link.py) ------------------------------------------

    def accept(self, line: bytes | dict) -> bool:
        """One message the transport read: a line (stdio) or parsed already (HTTP); True when news."""
        return self._accept(line)

    def _accept(self, line: bytes | dict) -> bool:
        """The twin's, for every message: a reply, a server request or a notification; whatever goes
        wrong is reported, never dropped silently, so the reader lives on."""
        if isinstance(line, dict):
            message = line
        else:
            message, complaint = parse_message(line)
            if complaint:
                self._skipped(complaint)
            if message is None:
                return False
        try:
            if "method" in message:
                return self.from_server.handle(message)
            self._reply(message)
        except Exception as e:  # a message we cannot handle is reported; the reader thread must live on
            self.log(f"could not handle a message ({type(e).__name__}: {e}): {shorten(json.dumps(message))}")
        return True

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

    def end(self, reason: str) -> None:
        """The connection is gone for good: every waiter fails with the reason (the first one kept)."""
        self._mark_dead(reason)

    def reject(self, request_id: int, reason: str) -> None:
        """The reply to this request was discarded (over the message limit): its waiter fails with why."""
        self._settle(request_id, McpError(reason, self.name))

    @property
    def dead_reason(self) -> str | None:
        return self._dead

    def revive(self) -> None:
        """Forget the last death: the link is starting the server again."""
        with self._lock:
            self._dead = None

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
