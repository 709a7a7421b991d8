"""Beyond the tutorial: the request path of the full client, its own (the twin's, mcp.py, waits 10 s for all).

Every request has an id, a Call (the deadline, which progress pushes out) and a waiter, the queue the reader
thread puts the reply in. Per-server timeouts, the cancellation of what is given up on; for 2026-07-28 _meta,
one retry in a version both speak, input_required's rounds; a failed transport is this server's McpError, a
forgotten session is initialized again; every message read is routed (a reply to its waiter, the rest to FromServer).
"""
import json
import queue
import sys
import threading
import time

from beyond.client.capabilities import URL_ELICITATION_REQUIRED, AskRefused, Asks, NoAsks, offered_to, pages_visited
from beyond.client.content import parse_message
from beyond.client.errors import Interrupted, NoReply, Refused, ReplyError, ServerError
from beyond.client.from_server import FromServer
from beyond.client.link import Link, kind_for
from beyond.client.pending import Pending
from beyond.client.revisions import MAX_INPUT_ROUNDS, Revisions
from beyond.secrets import mask
from beyond.text import clean, shorten
from beyond.waits import SIGNAL_CHECK_S, Call, cancelled
from beyond.wire.base import About, Deadline, Dropped, Rejected, SessionExpired, TransportError
from mcp import McpError

# These requests (what start-up asks) wait startupTimeout; the others timeout.
STARTUP_METHODS = ("initialize", "server/discover", "tools/list", "resources/list", "resources/templates/list")


class Requests:
    """One server's requests and what it sends; its parts: what the server sends unasked (FromServer),
    the revision spoken (Revisions), the transport and its restarts (Link)."""

    def __init__(self, name: str, cfg, echo: bool = False, asks: Asks | None = None, screen=None,
                 transport=None) -> None:
        self.name, self.cfg = name, cfg
        self.pending = Pending(name)  # the requests awaiting replies, and why none can come
        self.tools: list[dict] = []  # as last listed (revisions name a call's mirrored arguments from them)
        self.capabilities: dict = {}  # what the server declared in its handshake (or server/discover)
        self.asks = asks or NoAsks()
        self.screen = screen  # where a login meets the user, for a transport that logs in
        # What makes its transport: Kind(name, config, inbox); the entry's kind (wire/base.py) unless given.
        self.transport_kind = transport or kind_for(self.cfg)
        self.closed = False  # stop() was called: never restart
        self.login = False  # whether a remote server that asks for a login gets one (start(login=True))
        self.from_server = FromServer(self, echo)
        self.revisions = Revisions(name, self.cfg, self.request, self._notify, self.from_server.said,
                                   self.reconnect, lambda: offered_to(self.asks, self.cfg))
        self.link = Link(self)  # the transport, and how it is replaced

    # --- connecting; what the link and the revisions ask of it --------------------------------------

    def connect(self) -> None:
        """A new transport (the link's), started; what it could not do is this server's McpError."""
        try:
            self.link.connect(self.login)
        except TransportError as e:
            raise ServerError(str(e), self.name) from None

    def reconnect(self) -> None:
        self.link.reconnect_if_dead()  # a stdio server that exited on a probe it did not understand

    def listen(self) -> None:
        """Open what the server sends unasked (before 2026-07-28, HTTP's GET stream; 2026-07-28 subscribes)."""
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
        return self.pending.new_id()

    # --- a request, in the order a message travels ----------------------------------------------

    def request(self, method: str, params: dict, timeout: float | None = None, call: Call | None = None) -> dict:
        """One request, by the server's own timeouts (or `timeout`, or a `call` made already); for 2026-07-28,
        _meta on it, one retry in another version when it refuses this one, and the rounds of an input_required
        answer (each a new request, all within the one call's deadline)."""
        if call is None:
            call = Call.within(timeout or (self.cfg.startup_timeout if method in STARTUP_METHODS else self.cfg.timeout))
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
        return self.asks.answer(self.name, self.cfg, method, params)  # AskRefused for an error answer

    def answer_input(self, method: str, params: object) -> dict | None:
        """A task's input request answered as the same request of the server's would be; None for an error."""
        try:
            return self._answer(method, params)
        except AskRefused:
            return None

    def _exchange(self, method: str, params: dict, call: Call) -> dict:
        """One request and its reply (in a version both sides speak)."""
        revisions = self.revisions
        sent = revisions.with_meta(params) if revisions.modern else params  # _meta is 2026-07-28's
        try:
            return self._request(method, sent, call)
        except Interrupted:  # 2026-07-28: a broken answer is lost; the request goes again, once, with a new id
            return self._request(method, sent, call)
        except ReplyError as e:
            if e.code == URL_ELICITATION_REQUIRED and not revisions.modern:  # pages to visit first, then once more
                began = time.monotonic()
                if not pages_visited(self.asks, self.name, self.cfg, e.data, self.from_server.completed):
                    raise
                waited = time.monotonic() - began  # the person's time is not the request's
                call.deadline, call.latest = call.deadline + waited, call.latest + waited
            else:
                revisions.switch_version(method, e)  # raises unless a version both sides speak was found
            return self._request(method, revisions.with_meta(params), call)

    def _request(self, method: str, params: dict, call: Call) -> dict:
        """Send a request with a new id and wait for the reply its waiter gets, by the call's deadline."""
        waiter, link = queue.SimpleQueue(), self.link
        while True:  # nothing reaches a restarted server before its handshake is complete
            if link.restarting and link.restarter != threading.get_ident():
                link.wait_if_restarting()
            request_id = self.pending.add(method, waiter)
            if not (link.restarting and link.restarter != threading.get_ident()):  # one that began meanwhile
                break
            self.pending.drop(request_id)
        try:
            self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, call)
            reply = self._wait(request_id, method, waiter, call)
        except BaseException:
            self.pending.drop(request_id)  # given up on: a reply that comes later finds no waiter
            raise
        if isinstance(reply, McpError):
            raise reply
        return reply

    def _notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})  # no id, no reply, written by the server's timeout

    def _send(self, message: dict, call: Call | None = None) -> None:
        """Through the transport, by the request's deadline (a notification: by its timeout), or McpError."""
        deadline = call.deadline if call else time.monotonic() + self.cfg.timeout
        revisions = self.revisions
        for attempt in (1, 2):
            # Before 2026-07-28 every message but initialize says the same (a renewal may change it).
            about = revisions.about(message, self.tools) if revisions.modern or message.get("method") == "initialize" \
                else revisions.plain
            try:
                return self._transmit(message, deadline, about)
            except SessionExpired as e:
                if attempt == 2 or message.get("method") in (None, "initialize"):
                    again = " even after a new initialize" if attempt == 2 else ""
                    raise ServerError(f"{e}{again}", self.name) from None
                self.link.renew_session(e.session)  # the server forgot our session: initialize again, once
            except Deadline as e:
                if call is None:
                    raise ServerError(str(e), self.name) from None
                if cancelled():  # its answer was cut by the main thread's Ctrl-C (waits.py)
                    self._cancel(message["id"], message["method"], "cancelled by the user")
                    raise KeyboardInterrupt from None
                self._cancel(message["id"], message["method"], f"no reply within {call.timeout:g} s")
                raise NoReply(f"no reply to {message['method']} within {call.timeout:g} s", self.name) from None
            except Rejected as e:
                raise Refused(str(e), self.name, e.status) from None
            except Dropped as e:
                raise Interrupted(str(e), self.name) from None
            except TransportError as e:
                raise ServerError(str(e), self.name) from None

    def send_message(self, message: dict, deadline: float) -> None:
        """One message through the transport by the deadline (now: one try, as answers and cancels are)."""
        try:
            self._transmit(message, deadline, self.revisions.about(message, self.tools))
        except TransportError as e:
            raise ServerError(str(e), self.name) from None

    def _transmit(self, message: dict, deadline: float, about: About) -> None:
        link, dead = self.link, self.pending.dead
        transport = link.transport
        restarting = link.restarting and link.restarter != threading.get_ident()  # by another thread
        if transport is None or dead or ("id" in message and restarting):
            why = dead or ("the server was restarted meanwhile" if transport else "not started")
            raise ServerError(f"{message.get('method', 'reply')} failed: {why}", self.name)
        transport.send(message, deadline, about)

    def _wait(self, request_id: int, method: str, waiter: queue.SimpleQueue, call: Call) -> object:
        """Until the call's deadline, which progress may push out meanwhile, in steps short enough to notice
        signals; what we give up on (the deadline, Ctrl-C) is cancelled; an error reply is named by its request."""
        try:
            while True:
                try:
                    reply = waiter.get(timeout=max(0.0, min(SIGNAL_CHECK_S, call.deadline - time.monotonic())))
                    break
                except queue.Empty:
                    if cancelled():  # the main thread's Ctrl-C, for a call on a thread of its own (waits.py)
                        raise KeyboardInterrupt from None
                    if time.monotonic() >= call.deadline:
                        raise
        except queue.Empty:
            self.pending.drop(request_id)  # from now on a late reply finds no waiter and is _reply's to handle
            try:
                reply = waiter.get_nowait()  # one that came while the wait was ending is still taken
            except queue.Empty:
                self._cancel(request_id, method, f"no reply within {call.timeout:g} s")
                raise NoReply(f"no reply to {method} within {call.timeout:g} s", self.name) from None
        except KeyboardInterrupt:
            self._cancel(request_id, method, "cancelled by the user")
            raise
        if isinstance(reply, McpError):
            code, data = (reply.code, reply.data) if isinstance(reply, ReplyError) else (None, None)
            return ReplyError(f"{method} failed: {reply}{'' if code is None else f' (code {code})'}", self.name, code,
                              data)
        return reply

    def _cancel(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server to stop working on a request we gave up on."""
        if method in ("initialize", "server/discover") or method.startswith("tasks/"):
            return  # the specification forbids cancelling the handshake (and a task this way); a probe is left alone
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
        """One message the transport read (what the twin's _accept does for replies): a line (stdio) or
        parsed already (HTTP): a reply, a server request or a notification; True when news. Whatever
        goes wrong is reported, never dropped silently, so the reader lives on."""
        if isinstance(line, dict):
            message = line
        else:
            message, complaint = parse_message(line)
            if complaint:
                self.from_server.skipped(complaint)
            if message is None:
                return False
        try:
            if "method" in message:
                return self.from_server.handle(message)
            self._reply(message)
        except Exception as e:  # a message we cannot handle is reported; the reader thread must live on
            self.from_server.said(f"could not handle a message ({type(e).__name__}: {e}): "
                                  f"{shorten(json.dumps(message))}", loud=True)
        return True

    def _reply(self, message: dict) -> None:
        """A reply goes to its waiter; our ids are ints: true, 1.0 or "1" is no reply to request 1."""
        request_id = message.get("id")
        if type(request_id) is int and request_id == self.revisions.listen_id:
            return self.revisions.unsubscribed(message)
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {"message": str(message["error"])}
            code = error.get("code") if type(error.get("code")) is int else None
            outcome = ReplyError(shorten(str(error.get("message", "unknown error")), 2000), self.name, code,
                                 error.get("data"))
        elif not isinstance(message.get("result"), dict):
            outcome = ServerError("the reply's result is not an object: "
                                  f"{shorten(json.dumps(message.get('result')), 80)}", self.name)
        else:
            outcome = message["result"]
        if type(request_id) is int and self.pending.settle(request_id, outcome):
            return
        if isinstance(outcome, dict) and "supportedVersions" in outcome:  # a probe's late answer: not lost
            return self.revisions.late_discovery(outcome)
        # As many as a server sends: printed within the server's print budget, all kept for /logs.
        self.from_server.said(f"dropped a reply to unknown or expired request id {shorten(repr(request_id), 80)}",
                              loud=True)

    def end(self, reason: str) -> None:
        """The connection is gone for good: every waiter fails with the reason (the first one kept)."""
        self.pending.fail_all(reason)

    def reject(self, request_id: int, reason: str) -> None:
        """No reply to this request will come (discarded over the message limit, or the request not written):
        its waiter fails with why."""
        self.pending.settle(request_id, ServerError(reason, self.name))

    @property
    def dead_reason(self) -> str | None:
        return self.pending.dead

    def revive(self) -> None:
        self.pending.revive()  # forget the last death: the link is starting the server again

    def _shutdown(self, reason: str) -> None:
        self.pending.fail_all(reason)  # the waiters first, then the transport (for stdio: the process group)
        self.link.retire()

    def log(self, text: str) -> None:
        """Report on our stderr with the server's prefix: masked, control characters visible, one line (no
        forged line of another's, or prompt); on a terminal its row cleared first (no activity line glued)."""
        try:
            start = "\r\x1b[K" if sys.stderr.isatty() else ""
            print(f"{start}[mcp:{self.name}] {clean(mask(text), one_line=True)}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass  # our own stderr is closed: there is nowhere left to report to
