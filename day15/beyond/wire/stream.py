"""Beyond the tutorial: what a remote server sends unasked, read from a stream that stays open.

The Listening part of beyond_http.HttpTransport. In revisions up to 2025-11-25 the stream is the
session's GET stream, opened after the handshake; in 2026-07-28 it is the answer to the client's
subscriptions/listen request. One thread reads it and hands each message to the client, exactly
as a line from a stdio server; a stream that drops is opened again once, paced so that a server
that drops it forever costs almost nothing. A POST's answer stream that ends before its reply is
come back for the same way (_resumed: GET with Last-Event-ID, after the server's retry time). It
uses the transport's lock, headers, connection, error text and parsing, and sets the transport's
_listening and _stream.
"""
import http.client
import json
import threading
import time

from beyond.waits import SIGNAL_CHECK_S
from beyond.wire.base import MAX_MESSAGE_BYTES, TransportError
from net import ERROR_BODY_BYTES, HEADER_BREAK, Cutoff, read_limited, reason_of
import sse

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
DEFAULT_RETRY_MS = 1000
MAX_RETRY_MS = 10_000


class Listening:
    """Mixed into beyond_http.HttpTransport: the thread that reads the server's stream."""

    def listen(self, request: dict | None = None, headers: dict[str, str] | None = None) -> None:
        """A thread reading what the server sends unasked: the session's GET stream, or in 2026-07-28
        the answer to `request` (subscriptions/listen); the client's `headers` go with it. A previous
        stream is closed."""
        stopped, ready = threading.Event(), threading.Event()
        self._end_listening(stopped)
        threading.Thread(target=self._listener, args=(stopped, ready, request, headers or {}),
                         name=f"mcp-{self.name}-listen", daemon=True).start()
        ready.wait(min(STREAM_OPEN_WAIT_S, self.config.timeout))  # a change right after start-up is then heard

    def _end_listening(self, successor: threading.Event) -> None:
        """End the current stream's thread (cutting its read) and let `successor` be the current one."""
        with self._lock:
            self._listening.set()
            self._listening, stream, self._stream = successor, self._stream, None
        if stream:
            stream.cut()

    def _listener(self, stopped: threading.Event, ready: threading.Event, request: dict | None,
                  extra: dict[str, str]) -> None:
        """Open the stream (`ready` once it is open or will not be) and read it; after a drop, open it
        again once (see REOPEN_INTERVAL_S)."""
        last: dict = {"id": None}  # the last event id the server gave, to resume from
        pause = REOPEN_INTERVAL_S
        while True:
            try:
                brought = self._read_stream(stopped, last, request, extra, ready)
            except (OSError, http.client.HTTPException, ValueError, TransportError) as e:
                if not stopped.is_set():
                    self.inbox.log(f"no stream of server messages until the next {'start' if request else 'session'}: "
                             f"{reason_of(e)}")
                return
            finally:
                ready.set()
            if brought is None:
                return  # the server offers no stream (405), or we stopped listening
            pause = REOPEN_INTERVAL_S if brought else min(pause * 2, REOPEN_INTERVAL_CAP_S)
            if stopped.wait(pause):
                return

    def _read_stream(self, stopped: threading.Event, last: dict, request: dict | None,
                     extra: dict[str, str], ready: threading.Event) -> int | None:
        """Open one stream, a GET or the POST of `request` (errors raised), and route its messages as on
        stdio until it ends (a drop is no error): the number of messages it brought; None if there is
        no stream to read."""
        if request:
            headers, payload = self._headers(None, extra), json.dumps(request).encode()
        else:
            headers = {k: v for k, v in self._headers(self.session_id, extra).items() if k != "Content-Type"}  # no body
            headers.update({"Accept": "text/event-stream", **({"Last-Event-ID": last["id"]} if last["id"] else {})})
            payload = None
        connection = self._connection(self.config.timeout)
        guard = Cutoff(connection, time.monotonic() + self.config.timeout)  # up to the answer's headers
        with self._lock:
            if stopped.is_set():
                return None
            self._stream = guard
        brought, opened = 0, False
        try:
            with guard:
                connection.request("POST" if request else "GET", self._path(), payload, headers)
                response = connection.getresponse()
            if response.status == 405 and not request:
                return None
            if response.status != 200 or not response.getheader("Content-Type", "").startswith("text/event-stream"):
                body = read_limited(response, ERROR_BODY_BYTES, "an error") if response.status >= 400 else b""
                raise TransportError(self._http_error(request or {"method": "GET"}, response, body))
            opened = True
            ready.set()
            guard.sock.settimeout(None)  # a stream may be quiet for hours; stop() or a new session cuts it
            for data in sse.events(response, MAX_MESSAGE_BYTES, lambda event_id: self._keep_id(event_id, last)):
                for message in self._json_messages(data.encode()):
                    self.inbox.deliver(message)
                    if request and "method" not in message and message.get("id") == request["id"]:
                        return None  # the server ended the subscription: it is not reopened
                    # What counts is news; the acknowledgement of a subscription opened again is not.
                    brought += message.get("method") != "notifications/subscriptions/acknowledged"
        except (OSError, http.client.HTTPException, ValueError) as e:
            if stopped.is_set():
                return None  # cut on purpose
            if not opened:
                raise
            self.inbox.log(f"the stream of server messages dropped: {reason_of(e)}")
        finally:
            connection.close()
        return None if stopped.is_set() else brought

    def _resumed(self, message: dict, stream: dict, deadline: float, extra: dict[str, str]) -> bool:
        """After the stream's retry time, GET the rest of it from its last event id; False if that cannot be."""
        pause = (stream["retry_ms"] if stream["retry_ms"] is not None else DEFAULT_RETRY_MS) / 1000
        if time.monotonic() + pause >= deadline:
            return False
        waited = threading.Event()
        while not waited.wait(min(SIGNAL_CHECK_S, max(0.0, pause))) and pause > SIGNAL_CHECK_S:
            pause -= SIGNAL_CHECK_S  # in short steps: a Ctrl-C or SIGTERM on another thread is still seen
        headers = {k: v for k, v in self._headers(self.session_id, extra).items() if k != "Content-Type"}
        headers.update({"Accept": "text/event-stream", "Last-Event-ID": stream["id"]})
        connection = self._connection(max(0.001, deadline - time.monotonic()))
        try:
            with Cutoff(connection, deadline):
                connection.request("GET", self._path(), headers=headers)
                response = connection.getresponse()
                if response.status != 200 or not response.getheader("Content-Type", "").startswith("text/event-stream"):
                    read_limited(response, ERROR_BODY_BYTES, "an error")
                    return False
                stream["done"] = self._delivered(message, self._sse_messages(response, stream))
        except (OSError, http.client.HTTPException, ValueError):
            return False
        finally:
            connection.close()
        return True

    @staticmethod
    def _keep_id(event_id: str, stream: dict) -> None:
        """Keep an event id to resume from (stream["id"]), unless it is too long or would forge a header."""
        if len(event_id) <= MAX_EVENT_ID_CHARS and not HEADER_BREAK.search(event_id):
            stream["id"] = event_id
