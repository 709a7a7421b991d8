"""Beyond the tutorial: one HTTP request with a deadline for the whole exchange and a size limit (http.client).

The lesson's chat.py uses urllib, which follows redirects (with the key) and bounds each read, not the
exchange; the model client (model/client.py), remote servers (wire/) and logins (auth/) share this."""
import contextlib
import heapq
import ipaddress
import itertools
import json
import re
import select
import sys
import threading
import time
import urllib.parse

# How much of an error body is shown: enough for the API's message, not a whole HTML page.
ERROR_BODY_CHARS = 300
# Of an error body, only the start is read: the server's explanation, not a whole page.
ERROR_BODY_BYTES = 64 * 1024
# A header value that would end the header early and start another: refused, never sent.
HEADER_BREAK = re.compile(r"[\r\n\0]")
# The start of an HTML page, where an API would have answered JSON.
HTML_PAGE = re.compile(r"\s*<(!doctype\s+html|html)[\s>]", re.IGNORECASE)
# Statuses that say "try again later": a rate limit, a server or gateway that hiccups. Such a failure
# is tried again this many times, after 0.5 s, 1 s, 2 s (or what Retry-After asks, up to a minute).
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRIES = 3
RETRY_FIRST_WAIT_S = 0.5
RETRY_AFTER_CAP_S = 60.0


def connection_for(url: str, timeout: float):
    """(an http.client connection to url's host whose timeout bounds the connect, the path); ValueError if unusable."""
    parts = urllib.parse.urlsplit(url)
    parts.port  # raises ValueError for a port that is no number or out of range
    return connection_to(parts, timeout), (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def connection_to(parts, timeout: float):
    """A new http.client connection to the host of a split URL (https or http); its timeout bounds the connect."""
    import http.client  # on first use: with ssl and email it slows every start-up, a script's without remote hosts too
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.hostname, parts.port, timeout=timeout)


def is_this_machine(host: str | None) -> bool:
    """Whether a host name or address is this machine's own: localhost, or a loopback address."""
    if not host:
        return False
    if host.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


class Cutoff:
    """One http.client connection cut at a deadline, so the whole exchange ends by it: entering
    connects (bounded by the connection's timeout) unless it is connected already (a kept-alive
    connection); at `at` (time.monotonic()) the socket is shut down, so no header, body or stream
    read outlives it (a socket timeout only bounds each read, and a server may trickle one byte per
    read forever).
    Reads after the `with` block have no deadline; cut() still ends them. One watcher thread serves
    every deadline: a timer thread per request cost 200 µs of each."""

    def __init__(self, connection, at: float) -> None:
        self.connection, self.at, self.expired = connection, at, False
        self.sock = None
        # _lock guards active: once the block has ended, the watcher never touches the socket
        # (it may be back in a pool, or carrying the next request).
        self._lock = threading.Lock()
        self.active = False

    def __enter__(self) -> "Cutoff":
        if self.connection.sock is None:
            self.connection.connect()
        self.sock = self.connection.sock  # kept: http.client forgets it once a reply will close it
        self.active = True
        _watcher.watch(self)
        return self

    def __exit__(self, *exc) -> None:
        with self._lock:
            self.active = False
        _watcher.done()

    def cut(self) -> None:
        """End the exchange now, from any thread: a blocked read returns at once."""
        self.expired = True
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not connected yet
            self.sock.shutdown(2)  # socket.SHUT_RDWR

    def due(self) -> None:
        """The watcher's call at `at`: cut, if the exchange is still under way."""
        with self._lock:
            if self.active:
                self.cut()


class _Watcher:
    """The one thread that cuts deadlines when they come: a heap of them by time. Deadlines that end
    early stay in the heap until they come up or the heap is rebuilt (when most of it has ended).
    _condition guards _heap and _active."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Cutoff]] = []
        self._order = itertools.count()  # ties broken by arrival, never by comparing deadlines
        self._active = 0
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, cutoff: Cutoff) -> None:
        with self._condition:
            self._active += 1
            if len(self._heap) > 64 and len(self._heap) > 4 * self._active:
                self._heap = [entry for entry in self._heap if entry[2].active]
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, (cutoff.at, next(self._order), cutoff))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="deadlines", daemon=True)
                self._thread.start()
            if self._heap[0][2] is cutoff:
                self._condition.notify()  # it is the nearest now: the thread's wait must be shorter

    def done(self) -> None:
        with self._condition:
            self._active -= 1

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._heap and not self._heap[0][2].active:
                    heapq.heappop(self._heap)
                wait = self._heap[0][0] - time.monotonic() if self._heap else None
                if wait is None or wait > 0:
                    self._condition.wait(wait)
                    continue
                due = heapq.heappop(self._heap)[2]
            try:
                due.due()  # outside the condition: a shutdown may take a moment
            except Exception as e:  # this thread must outlive any one socket: the others wait on it
                print(f"warning: a deadline could not cut its connection: {e!r}", file=sys.stderr)


_watcher = _Watcher()


class ConnectionPool:
    """Kept-alive connections to one server, each carrying one request at a time: take() gives an
    idle one the server has not closed (None when there is none), keep() puts back one whose answer
    was read to its end, close() ends them all. _lock guards _idle and _closed."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._idle: list = []
        self._closed = False
        self._lock = threading.Lock()

    def take(self, timeout: float):
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return None
            # An idle connection with something to read has been closed by the server (or is broken).
            if connection.sock and not select.select([connection.sock], [], [], 0)[0]:
                connection.sock.settimeout(timeout)
                return connection
            connection.close()

    def keep(self, connection, response) -> bool:
        """True when the connection was kept for the next request; the caller closes it otherwise."""
        if response.will_close:
            return False
        if not response.isclosed() and response.length == 0:
            response.read()  # nothing is left: this tells http.client the answer is done
        with self._lock:
            if response.isclosed() and len(self._idle) < self.size and not self._closed:
                self._idle.append(connection)
                return True
        return False

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for connection in idle:
            connection.close()


class TooBig(ValueError):
    """A body over its size limit; the message names what and the limit."""


def read_limited(response, limit: int, what: str, step: int = 65536) -> bytes:
    """The body of a response, refused (TooBig) as soon as it passes `limit` bytes."""
    if response.length is not None and response.length <= limit:
        return response.read()  # as long as its Content-Length says (IncompleteRead if cut short)
    chunks, size = [], 0
    while chunk := response.read1(step):
        size += len(chunk)
        if size > limit:
            raise TooBig(f"{what} is over the {limit >> 20} MB limit and was refused")
        chunks.append(chunk)
    if response.length:  # read1() ends quietly where the peer hung up early; the length says so
        import http.client
        raise http.client.IncompleteRead(b"".join(chunks), response.length)
    return b"".join(chunks)


def transport_error(url: str, e: Exception, hint: str) -> str:
    """One line for a connection that failed: refused, reset, cut short, or not speaking HTTP."""
    reason = " ".join(reason_of(e).split())  # one line
    if isinstance(e, ConnectionRefusedError) or "Name or service not known" in reason:
        return f"cannot reach {url}: {reason} ({hint})"
    return f"request to {url} failed: {type(e).__name__}: {reason[:ERROR_BODY_CHARS]} ({hint})"


def reason_of(e: Exception) -> str:
    """An exception in a few words: http.client's as sentences, an OS error's own words, else its text,
    else its type."""
    import http.client  # loaded already wherever its errors can come from
    said = ((http.client.IncompleteRead, "the connection closed in the middle of the answer"),
            (http.client.RemoteDisconnected, "the server closed the connection without answering"),
            ((http.client.BadStatusLine, http.client.LineTooLong), "the server's answer is not HTTP"))
    return next((text for kind, text in said if isinstance(e, kind)), None) or getattr(e, "strerror", None) \
        or str(e) or type(e).__name__


def html_title(body: bytes) -> str | None:
    """An HTML page's title (what a proxy's page says happened), on one line ("": none); None: no HTML page."""
    text = body.decode("utf-8", "replace")
    if not HTML_PAGE.match(text):
        return None
    import html
    title = re.search(r"<title[^>]*>(.{0,2000}?)</title", text, re.IGNORECASE | re.DOTALL)
    return " ".join(html.unescape(title.group(1)).split())[:ERROR_BODY_CHARS] if title else ""


def error_detail(body: bytes, fallback: str) -> str:
    """What an HTTP error body says: its JSON error message, an HTML page's title, else its start, else `fallback`."""
    title = html_title(body)
    if title is not None:
        return f"an HTML page ({title!r})" if title else "an HTML page without a title"
    text = body.decode("utf-8", "replace")
    try:
        detail = json.loads(text)["error"]
        detail = detail.get("message", detail) if isinstance(detail, dict) else detail
    except (ValueError, KeyError, TypeError):
        detail = text.strip()[:ERROR_BODY_CHARS]
    return str(detail) or fallback


def retry_after(value: str | None) -> float | None:
    """The seconds a Retry-After header asks for (a number or an HTTP date), or None when it says none."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time()) if when.tzinfo else None


# A retry's note shows this much of the failure (the other side's words: bounded, and made visible).
NOTICE_CHARS = 300


def printable(text: str, limit: int) -> str:
    """One line of at most `limit` characters; control, bidi and other unprintable characters as escapes."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Retryable(Exception):
    """A failure that may pass (a rate limit, a gateway's hiccup, a reset); `wait`: what the other side asked."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def retrying(attempt, deadline: float, notice, may_retry=lambda: True):
    """attempt() again after a Retryable, while may_retry() and the deadline allow (notice(text) says
    so); then the last Retryable is raised. A Ctrl-C during a wait ends it at once."""
    for tried in range(RETRIES + 1):
        try:
            return attempt()
        except Retryable as e:
            wait = RETRY_FIRST_WAIT_S * 2 ** tried if e.wait is None else e.wait
            if tried == RETRIES or wait > RETRY_AFTER_CAP_S or time.monotonic() + wait >= deadline or not may_retry():
                raise
            notice(f"trying again in {wait:g} s ({tried + 1} of {RETRIES}): {printable(str(e), NOTICE_CHARS)}")
            time.sleep(wait)
    raise AssertionError("unreachable")
