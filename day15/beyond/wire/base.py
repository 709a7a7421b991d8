"""Beyond the tutorial: what every transport is: bytes in, messages out, knowing no MCP.

The interface every transport has (Transport) and its one contract for send(); the inbox it
reports into (Inbox); its errors (TransportError; SessionExpired; Deadline, for a deadline that
passed; Rejected, an error status that is no reply); what the client says of a message for a
transport that carries it in headers (About); the limit every transport holds a message to, and how
it writes one (encode).
"""
import json
import json.encoder
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

# One JSON-RPC message may be this big (a 20 MB tool result is fine); a longer line or event is
# discarded as it streams, so a hostile server costs at most this much memory, once.
MAX_MESSAGE_BYTES = 64 << 20
# JSON-RPC's "method not found": what a server answers a method it does not serve (over HTTP, as a 404).
METHOD_NOT_FOUND = -32601


class Inbox(Protocol):
    """What a transport hands its client, from the transport's own threads. The client owns it."""

    def deliver(self, message: bytes | dict) -> bool:
        """A message from the server: a line as read (stdio), or parsed already (HTTP). True when it
        was news (anything but an acknowledgement of the stream a transport just opened)."""

    def ended(self, reason: str) -> None:
        """The connection is gone for good (the process exited, a message was cut in half); why."""

    def rejected(self, request_id: int, reason: str) -> None:
        """No reply to this request will come: it was discarded (over MAX_MESSAGE_BYTES), or the request was
        not written (queued behind another thread's write that failed); why."""

    def log(self, text: str) -> None:
        """A line of the transport's own about this server, for the user."""

    def said(self, line: str) -> None:
        """A line the server wrote for people (its stderr)."""


@dataclass(frozen=True)
class About:
    """What the client says of a message, for a transport that carries it in headers (HTTP): the
    revision agreed; whether it is routed by its headers (2026-07-28), and then its method, the name
    it targets and the arguments a tool asks to see; whether it opens a new session (its answer sets
    the session; the old one is not sent); whether its answer is a stream that stays open; whether
    an answer stream that breaks may be resumed."""
    revision: str | None = None
    routed: bool = False
    method: str | None = None
    name: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    new_session: bool = False
    stays_open: bool = False
    resumable: bool = True  # a broken answer stream may be resumed (up to 2025-11-25; 2026-07-28 sends anew)


class Transport:
    """Every transport: Kind(name, config, inbox), then start(), send(), listen(), stop().

    It carries JSON-RPC messages and reports what arrives, and its end, into the inbox; it knows
    nothing of MCP's handshake, tools or revisions: what a message is, the client says (About).

    send(message, deadline, about) has one meaning everywhere: the message is handed to the server by
    `deadline`, and whatever the server answers reaches the inbox, perhaps before send returns (HTTP
    reads the answer to a request on the caller's thread, by the same deadline; a message whose
    answer stays open is read on by a thread of the transport's). It raises TransportError if the
    server does not take the message, Deadline when the deadline passed first, SessionExpired when
    the server forgot the session (the client then initializes again). A message that stdio queues
    behind another thread's write is written by that thread, and a request of it that cannot be
    fails through inbox.rejected.
    """

    session_id: str | None = None  # the server's session, where the transport has one (Streamable HTTP)
    carries_headers = False  # whether what About says travels in headers
    answers_apart = False  # whether each request's answer comes on a stream of its own (closing it cancels)

    def __init__(self, name: str, config, inbox: Inbox) -> None:
        self.name, self.config, self.inbox = name, config, inbox

    def start(self) -> None:
        """Connect (spawn the process, check the URL); TransportError if that cannot be done."""
        raise NotImplementedError

    def send(self, message: dict, deadline: float, about: About) -> None:
        """See the class: hand one message to the server by `deadline`."""
        raise NotImplementedError

    def listen(self, about: About) -> None:
        """Open the way for what the server sends unasked, where that is a way of its own (Streamable
        HTTP's GET stream); a stdio server's stdout is always open."""

    def allow_login(self, allowed: bool) -> None:
        """Where a transport has logins (HTTP's OAuth), whether it may start one when the server asks."""

    def login_status(self) -> str | None:
        """Where a transport has logins: whether it is logged in (until when, with which scopes); else None."""
        return None

    def issuer(self) -> str | None:
        """Where a transport has logins: the authorization server of the one held; else None."""
        return None

    def stop(self) -> None:
        """Close the connection for good. Idempotent; never raises."""
        raise NotImplementedError


class TransportError(Exception):
    """A transport could not start or carry a message; the words are for the user (the client adds
    the server's name: an McpError)."""


class Deadline(TransportError):
    """The deadline passed before the message was taken, or before its answer was read."""


class Rejected(TransportError):
    """The server answered with an error status that is no JSON-RPC reply (HTTP 400 and above): it
    is there, and said no; `status` says how."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class Dropped(TransportError):
    """The connection broke while a request's answer streamed, before its reply, where the stream may
    not be resumed (About.resumable false): the client sends the request again, as a new one."""


class SessionExpired(TransportError):
    """The server does not know the session any more (HTTP 404, as the specification has it)."""

    def __init__(self, message: str, session: str) -> None:
        super().__init__(message)
        self.session = session  # the session it forgot


def _one_encoder() -> Callable[[object], str]:
    """JSONEncoder.encode() builds a C encoder for every message; this is one built once, with the
    arguments iterencode() gives it (no circular check: our messages are trees). Where the json
    module has no C encoder, or it takes other arguments, the encoder's own encode()."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
    try:
        c_encode = json.encoder.c_make_encoder(None, encoder.default, json.encoder.c_encode_basestring,
                                               None, encoder.key_separator, encoder.item_separator,
                                               False, False, False)
        if "".join(c_encode({"a": [1, "\u00e9"]}, 0)) == encoder.encode({"a": [1, "\u00e9"]}):
            return lambda message: "".join(c_encode(message, 0))
    except TypeError:  # None (no C encoder), or arguments it does not take
        pass
    return encoder.encode


_to_json = _one_encoder()


def encode(message: dict, end: str = "") -> bytes:
    """One message as UTF-8 JSON, then `end` (stdio's newline). ValueError for what JSON cannot
    carry: NaN, Infinity, or a lone surrogate (which UTF-8 has no bytes for)."""
    return (_to_json(message) + end).encode("utf-8")
