"""Beyond the tutorial: remote servers over Streamable HTTP (MCP 2025-03-26 to 2026-07-28), stdlib only.

The tutorial's client speaks only stdio (its section 6 names this first). Every JSON-RPC message
is a POST to the server's URL; the answer is 202 (nothing), one JSON body, or a stream of
Server-Sent Events whose messages may include server requests and notifications before the
response. What the server sends unasked (list changes, log lines, pings) comes on a stream that
stays open (stream.py): the session's GET stream, or (2026-07-28) the answer of a request that
stays open. Each message goes into the inbox exactly as a line on stdio. A session the server
forgot is SessionExpired: the client initializes again. The headers MCP's HTTP transport asks for
are built here from what the client says of each message (base.About): the version, and in
2026-07-28 the method, its target and the arguments a tool asks to see. Logins are auth/'s.
"""
import base64
import contextlib
import http.client
import os
import time
import urllib.parse

from beyond import secrets
from beyond.auth.errors import AuthError, LoginNeeded
from beyond.auth.screen import Screen
from beyond.auth.provider import MAX_STEP_UPS, OAuth
from beyond.dirs import UnsetVariable, expand
from beyond.text import shorten
from beyond.waits import cut_on_cancel
from beyond.wire.base import (METHOD_NOT_FOUND, About, Deadline, Inbox, Rejected, SessionExpired,
                              Transport, TransportError, encode)
from beyond.wire.headers import about_headers
from beyond.wire.stream import Stream, error_reply
from beyond.net import (ERROR_BODY_BYTES, HEADER_BREAK, ConnectionPool, Cutoff, connection_to, error_detail, html_title,
                 is_this_machine, read_limited, reason_of)

# stop() sends DELETE to end the session; a server that does not answer quickly is left alone.
DELETE_TIMEOUT_S = 2.0
# A notification or our answer to a server's request (a ping) gets this long: the client passes
# "now" as its deadline for those (one try, never wait), but over HTTP one try is a whole POST.
ANSWER_TIMEOUT_S = 2.0
# Connections kept alive for the next POST (each POST takes one for itself, so threads never share
# one): as many as callers usually run at once; a new connection costs about 350 µs, a reused none.
MAX_IDLE_CONNECTIONS = 8


class HttpTransport(Transport):
    """One remote server: one POST per message, on a kept-alive connection of its own while it runs,
    so threads never share one; what it sends unasked is read by its Stream."""

    carries_headers = True
    answers_apart = True

    def __init__(self, name: str, config, inbox: Inbox) -> None:
        super().__init__(name, config, inbox)
        # As written in mcp.json (${VAR} unexpanded), a password in it masked: this is what messages show.
        self.shown_url = secrets.mask(config.url)
        self.url: urllib.parse.SplitResult | None = None  # expanded and checked by start()
        self.headers: dict[str, str] = {}
        # session_id (Mcp-Session-Id) comes with the answer that opens a session, and is replaced whole by the next.
        self.session_id: str | None = None
        self._pool = ConnectionPool(MAX_IDLE_CONNECTIONS)  # the connections kept alive between POSTs
        self.oauth: OAuth | None = None  # the login, unless the entry sends its own Authorization header
        self._login_allowed = False
        self.revision: str | None = None  # the version the last message went in (the DELETE says it too)
        self.stream = Stream(self)

    def start(self) -> None:
        """Expand and check the URL and headers; there is nothing to connect until the first request."""
        if self.config.kind == "sse":
            raise TransportError("the old HTTP+SSE transport (\"type\": \"sse\") is not supported; "
                                 "use the server's Streamable HTTP endpoint with \"type\": \"http\"")
        try:
            self.headers = {k: expand(v, f"headers.{k}") for k, v in self.config.headers.items()}
            self.url = urllib.parse.urlsplit(expand(self.config.url, "url"))
            secrets.learn_entry({"headers": self.config.headers, "url": self.config.url},  # masked from now on
                                {"headers": self.headers, "url": self.url.geturl()})
            self.url.port  # raises for a port that is no number or out of range
        except UnsetVariable as e:
            raise TransportError(str(e)) from None
        except ValueError as e:
            raise TransportError(f"url {self.shown_url} cannot be used: {e}") from None
        broken = next((k for k, v in self.headers.items() if HEADER_BREAK.search(k + v)), None)
        if broken is not None:
            raise TransportError(f"headers.{broken} holds a line break or NUL, which would forge headers")
        if self.url.scheme not in ("http", "https") or not self.url.hostname:
            raise TransportError(f"url {self.shown_url} must start with http:// or https://")
        if self.url.username is not None:  # user:password@ means Basic authorization; it is never shown
            pair = f"{urllib.parse.unquote(self.url.username)}:{urllib.parse.unquote(self.url.password or '')}"
            self.headers.setdefault("Authorization", "Basic " + base64.b64encode(pair.encode()).decode())
        if self.url.scheme == "http" and not is_this_machine(self.url.hostname) and not self.config.allow_insecure:
            raise TransportError(f"plain http to {self.url.hostname} would send everything unencrypted; "
                                 "use https, or add \"allowInsecure\": true to the entry")
        if "authorization" not in {k.lower() for k in self.headers}:
            screen = getattr(self.inbox, "screen", None) or Screen()
            self.oauth = OAuth(self.name, urllib.parse.urlunsplit(self.url), self.config.oauth, self.inbox.log,
                               allow_insecure=self.config.allow_insecure, screen=screen,
                               folder=os.getcwd() if getattr(self.config, "folder_entry", False) else None)
            self.oauth.login_allowed = self._login_allowed

    def allow_login(self, allowed: bool) -> None:
        self._login_allowed = allowed
        if self.oauth:
            self.oauth.login_allowed = allowed

    def login_status(self) -> str | None:
        return self.oauth.status() if self.oauth else None

    def issuer(self) -> str | None:
        return self.oauth.issuer() if self.oauth else None

    def send(self, message: dict, deadline: float, about: About) -> None:
        """Transport.send: POST one message and hand every message of its answer to the inbox, by the
        deadline; an answer that stays open (about.stays_open) goes to the stream's thread instead."""
        self.revision = about.revision or self.revision
        if about.stays_open:
            return self.stream.open(about, message)
        if "id" not in message or "method" not in message:  # a notification or an answer: see above
            deadline = max(deadline, time.monotonic() + ANSWER_TIMEOUT_S)
        # A message that opens a session does not carry the last one's id (its answer sets the new one;
        # until then other requests still carry the last, and find it forgotten).
        session = None if about.new_session else self.session_id
        logins = 0
        try:
            for _ in range(2 + MAX_STEP_UPS):
                outcome = self._post(message, session, deadline, about)
                if not isinstance(outcome, _Refused):
                    return
                if outcome.status == 401 and self.oauth and self.oauth.nonce_retry(outcome.challenge, outcome.nonce):
                    continue  # DPoP (RFC 9449 section 9): once more, with the nonce the server gave
                if not self.oauth or (outcome.status == 401 and logins):
                    raise TransportError(outcome.error)
                began = time.monotonic()
                if outcome.status == 401:
                    logins += 1
                    try:
                        self.oauth.unauthorized(outcome.sent, outcome.challenge)
                    except LoginNeeded as e:
                        raise LoginNeeded(f"{outcome.error} ({e})") from None
                elif not self.oauth.forbidden(outcome.challenge):
                    raise TransportError(outcome.error)
                deadline += time.monotonic() - began  # the time the login took is not the request's
            raise TransportError(outcome.error)
        except AuthError as e:  # a login that could not be done is this request's failure
            raise TransportError(str(e)) from None

    def listen(self, about: About) -> None:
        """The session's GET stream of what the server sends unasked (a 405: the server has none)."""
        self.stream.open(about)

    def stop(self) -> None:
        """End the stream, then the session with DELETE (a 405 means the server does not allow that; fine)."""
        self.stream.end()
        self._pool.close()
        session, self.session_id = self.session_id, None
        if not session:
            return
        connection = self.connection(DELETE_TIMEOUT_S)
        try:
            with Cutoff(connection, time.monotonic() + DELETE_TIMEOUT_S):
                connection.request("DELETE", self.path(), headers=self.end_headers(session))
                read_limited(connection.getresponse(), ERROR_BODY_BYTES, "the answer to DELETE")
        except (OSError, http.client.HTTPException, ValueError):
            pass  # the server is gone, slow or odd; the session expires on its own
        finally:
            connection.close()

    def end_headers(self, session: str) -> dict[str, str]:
        """The DELETE's: the entry's, the version and the login's as every request has them (the
        token as it is: ending a session never starts a refresh), and the session."""
        headers = {**self.headers, **about_headers(About(revision=self.revision)), "Mcp-Session-Id": session}
        return {**headers, **(self.oauth.header(renew=False, method="DELETE") if self.oauth else {})}

    # --- what the stream (stream.py) asks of its transport ---------------------------------------

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """A new connection; its timeout bounds the connect, the caller's Cutoff all the rest."""
        return connection_to(self.url, timeout)

    def path(self) -> str:
        return (self.url.path or "/") + (f"?{self.url.query}" if self.url.query else "")

    @staticmethod
    def body(message: dict) -> bytes:
        try:
            return encode(message)
        except ValueError as e:  # NaN, Infinity, or a lone surrogate: refused rather than sent
            raise TransportError(f"{_what(message)} not sent: {e}") from None

    def request_headers(self, session: str | None, about: About, method: str = "POST") -> dict[str, str]:
        """The entry's headers, those of MCP for what the client says of the message, the session's, the
        login's (for a `method` request: a DPoP proof names it)."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   **self.headers, **about_headers(about)}
        if session:
            headers["Mcp-Session-Id"] = session
        if self.oauth:
            headers.update(self.oauth.header(method=method))
        return headers

    def stream_headers(self, last_event: str | None, about: About) -> dict[str, str]:
        """A GET for the session's stream (from `last_event`, to resume one): no body, SSE only."""
        headers = {k: v for k, v in self.request_headers(self.session_id, about, "GET").items() if k != "Content-Type"}
        headers["Accept"] = "text/event-stream"
        if last_event:
            headers["Last-Event-ID"] = last_event
        return headers

    def http_error(self, message: dict, response: http.client.HTTPResponse, body: bytes) -> str:
        """One line: HTTP status and the JSON-RPC error's message (or an HTML page's title), and a hint."""
        title = html_title(body)
        if title is not None:
            detail = f"{response.reason} ({shorten(title or 'an HTML page', 120)})"
        else:
            detail = error_detail(body, response.reason)
        return (f"{_what(message)} to {self.shown_url} failed: HTTP {response.status}: {detail}"
                f"{self._hint(response.status)}")

    # --- one POST, in the order a message travels -----------------------------------------------

    def _post(self, message: dict, session: str | None, deadline: float, about: About,
              fresh: bool = False) -> "int | _Refused":
        """One POST; returns the status after the answer was read and delivered, or the 401 or 403 that
        refused it; SessionExpired when the server forgot the session.
        A kept-alive connection the server closed before the request went out whole is given up, and
        the request sent once more on a new one (`fresh`); never one the server may have read."""
        body = self.body(message)
        connection, reused = self._take(deadline, fresh)
        guard, kept = Cutoff(connection, deadline), False
        # The main thread's Ctrl-C cuts a request's wait on another thread too (not what says it was cancelled).
        cancel = cut_on_cancel(guard.cut) if "id" in message and "method" in message else contextlib.nullcontext()
        try:
            with guard, cancel:
                sent = self.request_headers(session, about)
                try:
                    connection.request("POST", self.path(), body, sent)
                except OSError:
                    if reused and not guard.expired:
                        raise _Closed from None
                    raise
                response = connection.getresponse()
                if response.status >= 400:
                    return self._refused(message, session, response, sent)
                if about.new_session:  # the session the answer opens (a server without sessions gives none)
                    self.session_id = response.getheader("Mcp-Session-Id") or None
                self.stream.answer(message, response, deadline, about, connection)
            kept = self._pool.keep(connection, response)
            return response.status
        except _Closed:
            return self._post(message, session, deadline, about, fresh=True)
        except (OSError, http.client.HTTPException, ValueError, TransportError) as e:
            if guard.expired or isinstance(e, TimeoutError):  # the deadline cut the answer short
                raise Deadline(f"no answer to {_what(message)} in time") from None
            if isinstance(e, TransportError):
                raise
            raise TransportError(f"{_what(message)} to {self.shown_url} failed: {reason_of(e)}{self._hint(0)}") \
                from None
        finally:
            if not kept:
                connection.close()

    def _refused(self, message: dict, session: str | None, response, sent: dict) -> "int | _Refused":
        """An answer of 400 and above: a JSON-RPC error reply, a session forgotten, a login wanted, or an error."""
        body = read_limited(response, ERROR_BODY_BYTES, "an error")
        error = error_reply(message, response.status, body)
        if error and (error["error"]["code"] == METHOD_NOT_FOUND or not session):
            # The reply: an unknown method, or (no session to have forgotten) any JSON-RPC error.
            self.inbox.deliver(error)
            return response.status
        if session and (response.status == 404 or (response.status == 400 and b"session" in body.lower())):
            # The server forgot it (the specification says 404; some say 400).
            raise SessionExpired(f"{_what(message)} to {self.shown_url} failed: the server does not know the session",
                                 session)
        if response.status in (401, 403):  # a login is wanted, or more scopes: see send()
            return _Refused(response.status, response.getheader("WWW-Authenticate"), sent,
                            self.http_error(message, response, body), response.getheader("DPoP-Nonce"))
        raise Rejected(self.http_error(message, response, body), response.status)

    def _take(self, deadline: float, fresh: bool) -> tuple[http.client.HTTPConnection, bool]:
        """(a connection, whether it was kept alive): an idle one the server has not closed, else a new one."""
        timeout = max(0.001, deadline - time.monotonic())
        connection = None if fresh else self._pool.take(timeout)
        return (connection, True) if connection else (self.connection(timeout), False)

    def _hint(self, status: int) -> str:
        """What to check, for the statuses a config can cause."""
        if status == 401:
            return " (check the entry's headers)" if not self.oauth else ""
        if status == 403:
            return (" (the server refuses this client or host; some allow only \"localhost\", not \"127.0.0.1\","
                    " or the reverse; check the url, then the headers)")
        if self.url.path.rstrip("/").endswith("/sse"):
            return (" (a url ending in /sse looks like the old HTTP+SSE transport; use the server's Streamable "
                    "HTTP endpoint, often /mcp)")
        return ""


class _Refused:
    """A 401 or 403: the challenge in its WWW-Authenticate, the headers the request carried, the error to
    say, the DPoP-Nonce it gave."""

    def __init__(self, status: int, challenge: str | None, sent: dict[str, str], error: str,
                 nonce: str | None = None) -> None:
        self.status, self.challenge, self.sent, self.error, self.nonce = status, challenge, sent, error, nonce


class _Closed(Exception):
    """A kept-alive connection turned out closed before the request went out whole."""


def _what(message: dict) -> str:
    return message.get("method", "reply")
