"""Beyond the tutorial: what comes back from a remote server: answers, and a stream that stays open.

A Stream is held by the HTTP transport (http.py): one per transport. It reads each POST's answer
(one JSON body, or Server-Sent Events) into the inbox, and the stream that stays open. In
revisions up to 2025-11-25 the stream is the session's GET stream, opened after the handshake; in
2026-07-28 it is the answer to a request whose answer stays open (subscriptions/listen). One
thread reads it and hands each message to the inbox, exactly as a line from a stdio server; a
stream that drops is opened again once, paced so that a server that drops it forever costs almost
nothing. A POST's answer stream that ends or breaks before its reply is come back for the same way
(resume: GET with Last-Event-ID, after the server's retry time); in 2026-07-28, which has no
resumption, a broken one is Dropped: the client sends the request again, with a new id. It asks its transport for
connections, headers, the path, parsed messages and error texts, through the transport's public methods.
"""
import http.client
import threading
import time

from beyond.waits import SIGNAL_CHECK_S
from beyond.text import loads_or_none, shorten
from beyond.wire.base import MAX_MESSAGE_BYTES, About, Dropped, TransportError
from beyond.net import ERROR_BODY_BYTES, HEADER_BREAK, Cutoff, read_limited, reason_of
from beyond import sse

# The GET stream of what the server sends unasked: after it drops it is opened again once, after
# this pause, doubled each time a stream ended without bringing a message (up to the cap), so a
# server that closes it at once, forever, costs a GET every few minutes. A failed reopening ends it
# until the next session.
REOPEN_INTERVAL_S = 1.0
REOPEN_INTERVAL_CAP_S = 300.0
# Start-up waits at most this long for the stream to open, so what the server says right after is heard.
STREAM_OPEN_WAIT_S = 5.0
# An event id longer than this is not kept to resume from (it goes back to the server as a header).
MAX_EVENT_ID_CHARS = 1024
# An answer stream that ends before its reply is resumed (GET with Last-Event-ID) at most this many
# times, after the server's retry time (at most MAX_RETRY_MS) or DEFAULT_RETRY_MS, within the deadline.
MAX_RESUMES = 3
# After the reply, the rest of its answer stream (usually just its end) is read for this long: a
# stream that ended leaves its connection reusable, as a JSON answer does.
DRAIN_S = 0.1
DEFAULT_RETRY_MS = 1000
MAX_RETRY_MS = 10_000


class Stream:
    """The stream of one transport (`transport`: an HttpTransport) that stays open."""

    def __init__(self, transport) -> None:
        self.transport = transport
        # _lock guards _listening and _cutoff, and is never held across I/O. _listening is set to end
        # the current stream's thread (stop(), or a new session); _cutoff is that stream's, whose
        # cut() ends a read in progress.
        self._lock = threading.Lock()
        self._listening = threading.Event()
        self._cutoff: Cutoff | None = None

    def open(self, about: About, request: dict | None = None) -> None:
        """A thread reading what the server sends unasked: the session's GET stream, or the answer to
        `request` (about.stays_open); a previous stream is ended. Waits (a little) until it is open."""
        stopped, ready = threading.Event(), threading.Event()
        self.end(stopped)
        threading.Thread(target=self._listener, args=(stopped, ready, request, about),
                         name=f"mcp-{self.transport.name}-listen", daemon=True).start()
        ready.wait(min(STREAM_OPEN_WAIT_S, self.transport.config.timeout))  # a change right after start-up is heard

    def end(self, successor: threading.Event | None = None) -> None:
        """End the current stream's thread (cutting its read); `successor` is the next one's, if any."""
        with self._lock:
            self._listening.set()
            self._listening, cutoff, self._cutoff = successor or threading.Event(), self._cutoff, None
        if cutoff:
            cutoff.cut()

    def _listener(self, stopped: threading.Event, ready: threading.Event, request: dict | None, about: About) -> None:
        """Open the stream (`ready` once it is open or will not be) and read it; after a drop, open it
        again once (see REOPEN_INTERVAL_S)."""
        last: dict = {"id": None}  # the last event id the server gave, to resume from
        pause = REOPEN_INTERVAL_S
        while True:
            try:
                brought = self._read(stopped, last, request, about, ready)
            except (OSError, http.client.HTTPException, ValueError, TransportError) as e:
                if not stopped.is_set():
                    self.transport.inbox.log(f"no stream of server messages until the next "
                                             f"{'start' if request else 'session'}: {reason_of(e)}")
                return
            finally:
                ready.set()
            if brought is None:
                return  # the server offers no stream (405), or we stopped listening
            pause = REOPEN_INTERVAL_S if brought else min(pause * 2, REOPEN_INTERVAL_CAP_S)
            if stopped.wait(pause):
                return

    def _read(self, stopped: threading.Event, last: dict, request: dict | None, about: About,
              ready: threading.Event) -> int | None:
        """Open one stream, a GET or the POST of `request` (errors raised), and hand on its messages
        until it ends (a drop is no error): how many were news; None if there is no stream to read."""
        transport = self.transport
        if request:
            headers, payload = transport.request_headers(None, about), transport.body(request)
        else:
            headers = transport.stream_headers(last["id"], about)
            payload = None
        connection = transport.connection(transport.config.timeout)
        cutoff = Cutoff(connection, time.monotonic() + transport.config.timeout)  # up to the answer's headers
        with self._lock:
            if stopped.is_set():
                return None
            self._cutoff = cutoff
        brought, opened = 0, False
        try:
            with cutoff:
                connection.request("POST" if request else "GET", transport.path(), payload, headers)
                response = connection.getresponse()
            if response.status == 405 and not request:
                return None
            if response.status != 200 or not response.getheader("Content-Type", "").startswith("text/event-stream"):
                body = read_limited(response, ERROR_BODY_BYTES, "an error") if response.status >= 400 else b""
                raise TransportError(transport.http_error(request or {"method": "GET"}, response, body))
            opened = True
            ready.set()
            cutoff.sock.settimeout(None)  # a stream may be quiet for hours; stop() or a new session cuts it
            for data in sse.events(response, MAX_MESSAGE_BYTES, lambda event_id: keep_id(event_id, last)):
                for message in self.messages(data.encode()):
                    brought += bool(transport.inbox.deliver(message))
                    if request and "method" not in message and message.get("id") == request["id"]:
                        return None  # the server ended what was asked (the subscription): not reopened
        except (OSError, http.client.HTTPException, ValueError) as e:
            if stopped.is_set():
                return None  # cut on purpose
            if not opened:
                raise
            transport.inbox.log(f"the stream of server messages dropped: {reason_of(e)}")
        finally:
            connection.close()
        return None if stopped.is_set() else brought

    def resume(self, message: dict, stream: dict, deadline: float, about: About) -> bool:
        """After the stream's retry time, GET the rest of a POST's answer from its last event id
        (stream["id"]); stream["done"] once the reply came. False if that cannot be."""
        transport = self.transport
        pause = (stream["retry_ms"] if stream["retry_ms"] is not None else DEFAULT_RETRY_MS) / 1000
        if time.monotonic() + pause >= deadline:
            return False
        waited = threading.Event()
        while not waited.wait(min(SIGNAL_CHECK_S, max(0.0, pause))) and pause > SIGNAL_CHECK_S:
            pause -= SIGNAL_CHECK_S  # in short steps: a Ctrl-C or SIGTERM on another thread is still seen
        connection = transport.connection(max(0.001, deadline - time.monotonic()))
        try:
            with Cutoff(connection, deadline):
                connection.request("GET", transport.path(), headers=transport.stream_headers(stream["id"], about))
                response = connection.getresponse()
                if response.status != 200 or not response.getheader("Content-Type", "").startswith("text/event-stream"):
                    read_limited(response, ERROR_BODY_BYTES, "an error")
                    return False
                try:
                    stream["done"] = self.delivered(message, self.events(response, stream))
                except (OSError, http.client.HTTPException):
                    return time.monotonic() < deadline  # broken again: come back from the newest event id
        except (OSError, http.client.HTTPException, ValueError):
            return False
        finally:
            connection.close()
        return True

    def answer(self, message: dict, response: http.client.HTTPResponse, deadline: float, about: About,
               connection=None) -> None:
        """The answer of a POST (its status was not an error): its messages handed to the inbox, a stream of
        them resumed if it ends before the reply; TransportError if no reply came. After the reply, the rest
        of a stream is read for DRAIN_S on `connection`: a stream that ended there leaves its connection to
        be kept for the next request."""
        transport = self.transport
        if "id" not in message or "method" not in message:
            read_limited(response, ERROR_BODY_BYTES, "an answer to a notification")  # 202, no body
            return
        if not response.headers.get("Content-Type", "").startswith("text/event-stream"):
            if self.delivered(message, self.messages(read_limited(response, MAX_MESSAGE_BYTES, "the answer"))):
                return
        else:
            stream = {"id": None, "retry_ms": None}  # where a dropped stream resumes, and when
            answers = self.events(response, stream)
            try:
                if self.delivered(message, answers):
                    return self._drain(answers, connection)
                broken = "the server ended its answer without a reply"
            except (OSError, http.client.HTTPException) as e:  # the connection broke in the middle
                if time.monotonic() >= deadline or (about.resumable and stream["id"] is None):
                    raise  # cut by the deadline, or nothing to resume from: the request fails
                broken = reason_of(e)
            if not about.resumable:  # 2026-07-28: the request is lost; the client sends it anew
                raise Dropped(f"{message['method']} to {transport.shown_url} failed: {broken}")
            for _ in range(MAX_RESUMES):  # it ended before our reply: come back for the rest, as the server said
                if stream["id"] is None or not self.resume(message, stream, deadline, about):
                    break
                if stream.get("done"):
                    return
        raise TransportError(f"{message['method']} to {transport.shown_url} failed: "
                             "the server ended its answer without a reply")

    def _drain(self, answers, connection) -> None:
        """What the stream brings within DRAIN_S after the reply goes to the inbox; then it is left. The
        clock ends it, whatever arrives meanwhile (comments, a byte at a time): the connection is shut
        down at DRAIN_S and then closed, not kept."""
        if connection is None or connection.sock is None:
            return
        try:
            with Cutoff(connection, time.monotonic() + DRAIN_S):
                for message in answers:
                    self.transport.inbox.deliver(message)
        except (OSError, http.client.HTTPException, ValueError):
            pass  # not ended in time: its connection is closed, not kept

    def messages(self, body: bytes) -> list[dict]:
        """A JSON body: one message, or a batch of them; anything else is reported, not dropped."""
        try:
            data = loads_or_none(body.decode())  # JSON over HTTP is UTF-8
        except UnicodeDecodeError:
            data = None
        if data is None:
            text = shorten(body.decode("utf-8", "replace"))
            self.transport.inbox.log(f"skipped an answer that is no JSON-RPC message: {text}")
            return []
        return [m for m in (data if isinstance(data, list) else [data]) if isinstance(m, dict)]

    def events(self, response: http.client.HTTPResponse, stream: dict):
        """Yield the JSON messages of a Server-Sent Events stream, event by event; no event over the
        limit. `stream` keeps the last event id and the retry time the server gave."""
        for data in sse.events(response, MAX_MESSAGE_BYTES, lambda event_id: keep_id(event_id, stream),
                               lambda ms: stream.__setitem__("retry_ms", min(ms, MAX_RETRY_MS))):
            yield from self.messages(data.encode())

    def delivered(self, message: dict, answers) -> bool:
        """Hand each message to the inbox; True once our reply was among them (the rest is not ours to wait for)."""
        for answer in answers:
            self.transport.inbox.deliver(answer)
            if "method" not in answer and answer.get("id") == message["id"]:
                return True
        return False


def keep_id(event_id: str, stream: dict) -> None:
    """Keep an event id to resume from (stream["id"]), unless it is too long or would forge a header."""
    if len(event_id) <= MAX_EVENT_ID_CHARS and not HEADER_BREAK.search(event_id):
        stream["id"] = event_id


def error_reply(message: dict, status: int, body: bytes) -> dict | None:
    """A 400 or 404 whose body is a JSON-RPC error, as the reply to this request; else None."""
    data = loads_or_none(body.decode("utf-8", "replace")) if status in (400, 404) else None
    error = data.get("error") if isinstance(data, dict) else None
    if "id" not in message or not isinstance(error, dict) or type(error.get("code")) is not int:
        return None
    return {"jsonrpc": "2.0", "id": message["id"], "error": error}
