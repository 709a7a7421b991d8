"""Beyond the tutorial: what the full client's parts share, in one small module they import downward.

The interface every transport has (Transport), the inbox it reports into (Inbox) and its errors; the
limits every transport holds a message to, and how it writes one (encode); what a server is started
with (`${VAR}` expanded, a safe part of the environment, apart from the agent's terminal); the
helpers that wait in steps short enough to notice Ctrl-C and SIGTERM; the JSON-RPC code more than
one part answers or checks; and the user's own folders (XDG), where answers, pins and history live.
It imports none of ours: nothing here knows of MCP, tools or the REPL.

A deadline is one type everywhere: an instant of time.monotonic(), in seconds.
"""
import json
import json.encoder
import os
import re
import time
from collections.abc import Callable
from typing import Protocol


# One JSON-RPC message may be this big (a 20 MB tool result is fine); a longer line or event is
# discarded as it streams, so a hostile server costs at most this much memory, once.
MAX_MESSAGE_BYTES = 64 << 20
# JSON-RPC's "method not found": what we answer a request we do not serve (and what a server
# without tools may answer tools/list with).
METHOD_NOT_FOUND = -32601

# ${VAR} or ${VAR:-default}, as in shells and in Claude Code's configs; ${env:VAR}, as VS Code writes it.
VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class Inbox(Protocol):
    """What a transport hands its client, from the transport's own threads. The client owns it."""

    def deliver(self, message: bytes | dict) -> None:
        """A message from the server: a line as read (stdio), or parsed already (HTTP)."""

    def ended(self, reason: str) -> None:
        """The connection is gone for good (the process exited, a message was cut in half); why."""

    def rejected(self, request_id: int, reason: str) -> None:
        """The reply to this request was discarded (over MAX_MESSAGE_BYTES); why."""

    def log(self, text: str) -> None:
        """A line of the transport's own about this server, for the user."""

    def said(self, line: str) -> None:
        """A line the server wrote for people (its stderr)."""


class Transport:
    """Every transport: Kind(name, config, inbox), then start(), send(), listen(), stop().

    It carries JSON-RPC messages and reports what arrives and its end into the inbox; it knows nothing
    of MCP's handshake, tools or revisions. An HTTP session the server forgot is SessionExpired,
    which the client answers by initializing again.
    """

    session_id: str | None = None  # the server's session, where the transport has one (Streamable HTTP)

    def __init__(self, name: str, config, inbox: Inbox) -> None:
        self.name, self.config, self.inbox = name, config, inbox

    def start(self) -> None:
        """Connect (spawn the process, check the URL); TransportError if that cannot be done."""
        raise NotImplementedError

    def send(self, message: dict, deadline: float, headers: dict[str, str] | None = None) -> None:
        """Hand one message to the server by `deadline`; TransportError if it does not take it.
        `headers` go with it where the transport has headers (HTTP), and are ignored elsewhere."""
        raise NotImplementedError

    def allow_login(self, allowed: bool) -> None:
        """Where a transport has logins (HTTP's OAuth), whether it may start one when the server asks."""

    def login_status(self) -> str | None:
        """Where a transport has logins: whether it is logged in (until when, with which scopes); else None."""
        return None

    def listen(self, request: dict | None = None, headers: dict[str, str] | None = None) -> None:
        """Open the way for what the server sends unasked (a stdio server's stdout is always open),
        with `request` where the revision asks for it (2026-07-28's subscriptions/listen)."""
        if request is not None:
            self.send(request, time.monotonic() + self.config.timeout)

    def stop(self) -> None:
        """Close the connection for good. Idempotent; never raises."""
        raise NotImplementedError


class TransportError(Exception):
    """A transport could not start or carry a message; the words are for the user (the client adds
    the server's name: an McpError)."""


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


def expand(text: str, where: str) -> str:
    """${VAR} and ${VAR:-default} from the agent's environment; a missing VAR is an error."""
    def value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise TransportError(f"{where}: ${{{name}}} is not set; set it in the environment or .env, "
                             f"or write ${{{name}:-default}}")
    return VARIABLE.sub(value, text)


