"""Beyond the tutorial: the model as the full agent speaks to it, a chat.Chat made real.

The lesson's Chat posts each round with urllib and reads the JSON answer. ModelChat overrides its
request (complete) and keeps its loop: replies stream as chat.ts streams them (until an endpoint
refuses that), 429s, passing 5xx and resets are tried again while no text has shown, the whole
exchange has one deadline and a size limit, a redirect is never followed with the key, the tools
offered are those tool search chooses, one reply's calls run as reply_calls.py says, and whatever
ends a turn leaves the history valid. Beside it: the model a server's sampling request gets, and
what the banner says of the endpoint (no key; plain http to another machine).
"""
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable

import chat
from beyond import sse
from beyond.net import (ERROR_BODY_CHARS, RETRY_STATUSES, Cutoff, Retryable, TooBig, connection_for, error_detail,
                        read_limited, retry_after, retrying, transport_error)
from beyond.model.reply_calls import run_reply
from beyond.model.reply import StreamedReply, closed, stored, text_of
from beyond.servers import toolset
from beyond.servers.calls import Calls
from chat import ChatError

# A reply bigger than this is refused, not held in memory (real replies are KBs).
MAX_REPLY_BYTES = 64 << 20
# What to check for the statuses a user can fix.
HTTP_HINTS = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and its permissions",
              404: "check OPENAI_MODEL and OPENAI_BASE_URL", 429: "rate limit or quota; wait and retry"}


class StreamRefused(ChatError):
    """The endpoint answered a streamed request with a 400 that names streaming."""


class ChatInterrupted(KeyboardInterrupt):
    """Ctrl-C while a reply streamed in: `partial` is the message as far as it came (its text, no calls)."""

    def __init__(self, partial: dict) -> None:
        super().__init__()
        self.partial = partial


class Hiccup(Retryable, ChatError):
    """A 429, a 5xx that passes or a reset connection, tried again (net.retrying)."""


def retry_notice(text: str) -> None:
    """Where "trying again in 2 s" is said when the turn names no place (a terminal puts it on the activity line)."""
    print(f"note: {text}", file=sys.stderr)


class ModelChat(chat.Chat):
    """chat.Chat for the full agent. `choose(specs, messages)` picks the tools a request offers (tool
    search's; by default every one of the agent's set, servers/toolset.py); `calls` runs them (the agent's
    Calls: prepare(name, arguments) asks what the call needs asked and returns what runs it, so a reply's
    questions all come before its calls run); `system_note()` what the system prompt says of the agent now
    (the skills' catalog). One turn at a time: run_turn keeps its callbacks meanwhile."""

    def __init__(self, choose: Callable[[list[dict], list[dict]], list[dict]] | None = None,
                 calls: Calls | None = None, system_note: Callable[[], str] = str) -> None:
        self.choose, self.calls = choose or (lambda specs, messages: specs), calls or Calls()
        self.system_note = system_note  # what the system prompt says of the agent now (the skills' catalog)
        # Replies stream until an endpoint refuses that: then each comes whole, for the rest of the session.
        self.streaming = True
        self._turn: dict = {}  # this turn's on_text, on_usage, on_retry
        self._waiting: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext

    # --- the lesson's loop, with what the full agent adds --------------------------------------

    def run_turn(self, history: list[dict], user_text: str,
                 on_tool: Callable[[str, str], None] = lambda name, result: None,
                 waiting: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
                 on_text: Callable[[str], None] = lambda text: None,
                 on_usage: Callable[[dict], None] = lambda usage: None,
                 on_retry: Callable[[str], None] | None = None) -> str:
        """chat.Chat.run_turn, the model's text to on_text as it streams in. On any failure (ChatError,
        Ctrl-C) the turn is closed so the history stays valid, then the failure propagates: every tool
        call gets a tool message and the turn ends with an assistant message, as the API requires."""
        self._turn, self._waiting = {"on_text": on_text, "on_usage": on_usage, "on_retry": on_retry}, waiting
        try:
            answer = super().run_turn(history, user_text, on_tool)
            return closed(history, chat.STOPPED.format(rounds=chat.MAX_ROUNDS)) if history[-1]["role"] == "tool" \
                else answer
        except ChatError as e:
            closed(history, f"the request failed: {e}")
            raise
        except KeyboardInterrupt as e:
            partial = e.partial if isinstance(e, ChatInterrupted) else None
            if partial and partial.get("content"):  # what streamed in before Ctrl-C stays in the conversation
                history.append(stored(partial, len(history)))
            closed(history, "cancelled by the user")
            raise
        except BaseException as e:  # whatever ends a turn, the history stays valid
            closed(history, f"the turn failed: {type(e).__name__}")
            raise
        finally:
            self._turn, self._waiting = {}, contextlib.nullcontext

    def complete(self, messages: list[dict]) -> dict:
        """One request of the turn, streamed, its message stored as the API wants it back."""
        with self._waiting():
            return stored(self.request(messages, **self._turn), len(messages))

    def tools(self, messages: list[dict]) -> list[dict]:
        """What a request offers, of the registry's tools: as `choose` picks them (tool search's choice)."""
        return self.choose(toolset.specs(), messages)

    def run_calls(self, calls: list[dict], on_tool: Callable[[str, str], None]) -> list[dict]:
        """As the lesson's, through the agent's Calls, bounded; every question first, then the calls at once
        (reply_calls.py)."""
        return run_reply(calls, self.calls.prepare, on_tool)

    def sample(self, history: list[dict], max_tokens: int) -> tuple[str, str]:
        """The configured model, without tools, for a server's sampling request: (its text, its name)."""
        reply = self.request(history, offer_tools=False, max_tokens=max_tokens)
        return text_of(reply.get("content")), chat.model()

    # --- one request ----------------------------------------------------------------------------

    def request(self, messages: list[dict], on_text: Callable[[str], None] = lambda text: None,
                on_usage: Callable[[dict], None] = lambda usage: None, offer_tools: bool = True,
                on_retry: Callable[[str], None] | None = None, max_tokens: int | None = None) -> dict:
        """One Chat Completions request; text goes to on_text as it arrives; returns the message or raises
        ChatError. Ctrl-C while the reply streams is ChatInterrupted, with the message that arrived so far."""
        url = f"{chat.base_url()}/chat/completions"
        note = self.system_note() if offer_tools and messages and messages[0].get("role") == "system" else ""
        if note:  # added to what is sent, never to the history: it says what is there now
            messages = [{**messages[0], "content": f"{messages[0]['content']}\n\n{note}"}] + messages[1:]
        body = {"model": chat.model(), "messages": messages}
        specs = self.tools(messages) if offer_tools else []  # none for sampling
        if specs:
            body["tools"] = specs
        if max_tokens is not None:  # a server's sampling request names its limit
            body["max_tokens"] = max_tokens
        headers = {"Content-Type": "application/json"}
        if os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
        deadline = time.monotonic() + chat.HTTP_TIMEOUT_S
        if self.streaming:
            streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
            try:
                return _retrying(url, json.dumps(streamed).encode("utf-8"), headers, on_text, on_usage, on_retry,
                                 deadline)
            except StreamRefused:
                self.streaming = False
                print("note: the endpoint does not stream; replies come whole from now on", file=sys.stderr)
        return _retrying(url, json.dumps(body).encode("utf-8"), headers, on_text, on_usage, on_retry, deadline)


def _retrying(url: str, data: bytes, headers: dict, on_text, on_usage, on_retry, deadline: float) -> dict:
    """_request, tried again after a hiccup while no text has been shown (it would show twice)."""
    shown = []

    def text(chunk: str) -> None:
        shown.append(True)
        on_text(chunk)
    try:
        return retrying(lambda: _request(url, data, headers, text, on_usage, deadline), deadline,
                        on_retry or retry_notice, lambda: not shown)
    except Hiccup as e:
        raise ChatError(str(e) + (f" (it asks to wait {e.wait:g} s)" if e.wait else "")) from None


def _request(url: str, data: bytes, headers: dict, on_text, on_usage, deadline: float) -> dict:
    """POST and read the reply, streamed or whole; every failure is one ChatError line, all of it by the deadline."""
    import http.client
    try:
        connection, path = connection_for(url, max(0.001, deadline - time.monotonic()))
    except ValueError as e:  # a port that is no number, a broken IPv6 address
        raise ChatError(f"OPENAI_BASE_URL gives a URL that cannot be used ({url}): {e}") from None
    guard = Cutoff(connection, deadline)
    try:
        with guard:
            connection.request("POST", path, data, headers)
            response = connection.getresponse()
            if response.status >= 300:
                _refuse(url, response, data)
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                message = _read_stream(url, response, on_text, on_usage)
            else:
                message = _message_of(url, read_limited(response, MAX_REPLY_BYTES, f"the reply from {url}"),
                                      on_text, on_usage)
        if guard.expired:  # the socket was shut at the deadline; what came is not the whole reply
            raise TimeoutError
    except TooBig as e:
        raise ChatError(str(e)) from None
    except (OSError, http.client.HTTPException, ValueError) as e:
        if guard.expired or isinstance(e, TimeoutError):
            raise ChatError(f"no reply from {url} within {chat.HTTP_TIMEOUT_S:g} s") from None
        error = Hiccup if isinstance(e, (ConnectionResetError, http.client.RemoteDisconnected)) else ChatError
        raise error(transport_error(url, e, "check OPENAI_BASE_URL")) from None
    finally:
        connection.close()
    return message


def _refuse(url: str, response, data: bytes) -> None:
    """An answer that is not a reply: a redirect (never followed: the key stays), a refused stream, an HTTP error."""
    if response.status < 400:
        raise ChatError(f"{url} redirects (HTTP {response.status}) to {response.getheader('Location')}; "
                        "not followed, so your key is not sent there (check OPENAI_BASE_URL)")
    body = read_limited(response, MAX_REPLY_BYTES, f"the error from {url}")
    if response.status == 400 and b'"stream"' in data and b"stream" in body.lower():
        raise StreamRefused(_http_error(url, response.status, body))
    if response.status in RETRY_STATUSES:
        raise Hiccup(_http_error(url, response.status, body), retry_after(response.getheader("Retry-After")))
    raise ChatError(_http_error(url, response.status, body))


def _read_stream(url: str, response, on_text, on_usage) -> dict:
    """Show the text of a streamed reply as it arrives; the whole message once the stream ends."""
    reply, size = StreamedReply(), 0
    try:
        for data in sse.events(response, MAX_REPLY_BYTES):
            size += len(data)
            if size > MAX_REPLY_BYTES:
                raise TooBig(f"the reply from {url} is over the {MAX_REPLY_BYTES >> 20} MB limit and was refused")
            if data.strip() == "[DONE]":
                break
            try:
                chunk = json.loads(data)
            except (ValueError, RecursionError):
                raise ChatError(f"a chunk of the reply from {url} is not JSON: {data[:ERROR_BODY_CHARS]!r}") from None
            text = reply.add(chunk) if isinstance(chunk, dict) else ""
            if text:
                on_text(text)
    except KeyboardInterrupt:
        raise ChatInterrupted(reply.message(with_calls=False)) from None  # a call cut short cannot be run
    if reply.usage:
        on_usage(reply.usage)
    return reply.message()


def _http_error(url: str, status: int, body: bytes) -> str:
    detail = error_detail(body, "(empty body)")
    hint = HTTP_HINTS.get(status, "the server had a problem; try again" if status >= 500 else "")
    return f"HTTP {status} from {url}: {detail}" + (f" ({hint})" if hint else "")


def _message_of(url: str, raw: bytes, on_text, on_usage) -> dict:
    """The message of a whole (not streamed) reply; its text and usage go to the callbacks too."""
    try:
        reply = json.loads(raw)
    except (ValueError, RecursionError):
        raise ChatError(f"the reply from {url} is not JSON: {raw[:ERROR_BODY_CHARS]!r}") from None
    try:
        message = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ChatError(f"the reply from {url} has no choices: {raw[:ERROR_BODY_CHARS]!r}") from None
    if not isinstance(message, dict):
        raise ChatError(f"the reply from {url} has no message: {raw[:ERROR_BODY_CHARS]!r}")
    if text_of(message.get("content")):
        on_text(text_of(message["content"]))
    if isinstance(reply.get("usage"), dict):
        on_usage(reply["usage"])
    return message
