"""One HTTP request with a deadline for the whole exchange and a size limit (http.client, stdlib only).

The TypeScript agent has fetch; Python's urllib follows redirects (with the key) and bounds each
read, not the exchange. This module is what chat.py (the model) and beyond_http.py (remote MCP
servers) share: Deadline, read_limited, and one-line error texts.
"""
import contextlib
import json
import re
import threading
import time

# How much of an error body is shown: enough for the API's message, not a whole HTML page.
ERROR_BODY_CHARS = 300
# Of an error body, only the start is read: the server's explanation, not a whole page.
ERROR_BODY_BYTES = 64 * 1024
# A header value that would end the header early and start another: refused, never sent.
HEADER_BREAK = re.compile(r"[\r\n\0]")


def connection_for(url: str, timeout: float):
    """(an http.client connection to url's host whose timeout bounds the connect, the path); ValueError if unusable."""
    import http.client  # on first use: http.client (with ssl and email) costs more start-up time than the REPL
    import urllib.parse
    parts = urllib.parse.urlsplit(url)
    parts.port  # raises ValueError for a port that is no number or out of range
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return kind(parts.hostname, parts.port, timeout=timeout), (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class Deadline:
    """A whole-exchange deadline for one http.client connection: entering connects (bounded by the
    connection's timeout); at `at` (time.monotonic()) the socket is shut down, so no header, body or
    stream read outlives it (a socket timeout only bounds each read, and a server may trickle one
    byte per read forever). Reads after the `with` block have no deadline; cut() still ends them."""

    def __init__(self, connection, at: float) -> None:
        self.connection, self.at, self.expired = connection, at, False
        self.sock = None
        self._timer = threading.Timer(max(0.0, at - time.monotonic()), self.cut)
        self._timer.daemon = True

    def __enter__(self) -> "Deadline":
        self.connection.connect()
        self.sock = self.connection.sock  # kept: http.client forgets it once a reply will close it
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()

    def cut(self) -> None:
        """End the exchange now, from any thread: a blocked read returns at once."""
        self.expired = True
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not connected yet
            self.sock.shutdown(2)  # socket.SHUT_RDWR


class TooBig(ValueError):
    """A body over its size limit; the message names what and the limit."""


def read_limited(response, limit: int, what: str, step: int = 65536) -> bytes:
    """The body of a response, refused (TooBig) as soon as it passes `limit` bytes."""
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
    """An exception in a few words: an OS error's own words, else its text, else its type."""
    return getattr(e, "strerror", None) or str(e) or type(e).__name__


def error_detail(body: bytes, fallback: str) -> str:
    """What an HTTP error body says: its JSON error message, else its start, else `fallback`."""
    text = body.decode("utf-8", "replace")
    try:
        detail = json.loads(text)["error"]
        detail = detail.get("message", detail) if isinstance(detail, dict) else detail
    except (ValueError, KeyError, TypeError):
        detail = text.strip()[:ERROR_BODY_CHARS]
    return str(detail) or fallback


