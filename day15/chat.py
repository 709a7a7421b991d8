"""Chat Completions and the tool-call loop (tutorial Day 15: chat.ts, unchanged on Day 15).

Owns the request to any OpenAI-compatible endpoint and the loop that runs the model's tool calls
through tools.run_tool() until the model answers in text. Printing is left to index.py, which
passes callbacks in; tools and permissions are left to tools.py; the HTTP exchange to net.py.
"""
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import sse
from sse import closed, stored, text_of
from net import (ERROR_BODY_CHARS, RETRY_STATUSES, Cutoff, Retryable, TooBig, connection_for, error_detail,
                 read_limited, retry_after, retrying, transport_error)
from tools import openai_tools, run_tool

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# A small, cheap model that supports function calling; override with OPENAI_MODEL.
DEFAULT_MODEL = "gpt-4o-mini"
# Long enough for a slow model to think and stream a long answer, short enough that a dead endpoint
# does not hang the REPL; a deadline for the whole request, however slowly the bytes arrive.
HTTP_TIMEOUT_S = 300.0
# Beyond the tutorial: a reply bigger than this is refused, not held in memory (real replies are KBs).
MAX_REPLY_BYTES = 64 << 20
# A model that keeps calling tools is stopped after this many rounds, so a loop cannot run forever.
MAX_ROUNDS = 30
STOPPED = "stopped after {rounds} rounds of tool calls without an answer"
# Beyond the tutorial: one reply runs at most this many tool calls (the rest are answered "not run"),
# and its results add at most this many characters (about 100,000 tokens) to the conversation, the
# rest cut with a note: one reply cannot make this and every later request megabytes long.
MAX_CALLS_PER_REPLY = 32
MAX_REPLY_RESULT_CHARS = 400_000

SYSTEM_PROMPT = (
    "You are GeekAgent, a helpful assistant in a terminal. You can call tools. Tools whose names "
    "start with mcp_ come from external MCP servers; the user approves each call. Use tools when "
    "they help, and answer briefly.")


class ChatError(Exception):
    """A model request failed; the message is one line the user can act on."""


class StreamRefused(ChatError):
    """The endpoint answered a streamed request with a 400 that names streaming."""


class Hiccup(Retryable, ChatError):
    """Beyond the tutorial: a 429, a 5xx that passes or a reset connection, tried again (net.retrying)."""


def retry_notice(text: str) -> None:
    """Where "trying again in 2 s" is said by default (index.py puts it on the activity line in a terminal)."""
    print(f"note: {text}", file=sys.stderr)


# Replies are streamed, as chat.ts streams them, until an endpoint refuses that (or this is set to
# False): then each reply comes whole, for the rest of the session.
streaming = True


def base_url() -> str:
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def model() -> str:
    return os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL


def new_history() -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT}]


def complete(messages: list[dict], on_text: Callable[[str], None] = lambda text: None,
             on_usage: Callable[[dict], None] = lambda usage: None, offer_tools: bool = True,
             on_retry: Callable[[str], None] | None = None, max_tokens: int | None = None) -> dict:
    """One Chat Completions request; text goes to on_text as it arrives; returns the message or raises ChatError.

    A KeyboardInterrupt while the reply streams carries the text that arrived as `partial`.
    """
    global streaming
    url = f"{base_url()}/chat/completions"
    body = {"model": model(), "messages": messages}
    specs = _choose(openai_tools(), messages) if offer_tools else []  # Beyond the tutorial: none for sampling
    if specs:
        body["tools"] = specs
    if max_tokens is not None:  # Beyond the tutorial: a server's sampling request names its limit
        body["max_tokens"] = max_tokens
    headers = {"Content-Type": "application/json"}
    if os.environ.get("OPENAI_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
    deadline = time.monotonic() + HTTP_TIMEOUT_S
    if streaming:
        streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
        try:
            return _retrying(url, json.dumps(streamed).encode("utf-8"), headers, on_text, on_usage, on_retry, deadline)
        except StreamRefused:
            streaming = False
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


# Beyond the tutorial: which of the tools a request offers, given the conversation: the agent's
# (beyond/servers/toolsearch.py) never more than the API takes, and with many a few and a search.
_choose: Callable[[list[dict], list[dict]], list[dict]] = lambda specs, messages: specs


def set_tool_choice(choose: Callable[[list[dict], list[dict]], list[dict]]) -> None:
    global _choose
    _choose = choose


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
            raise ChatError(f"no reply from {url} within {HTTP_TIMEOUT_S:g} s") from None
        error = Hiccup if isinstance(e, (ConnectionResetError, http.client.RemoteDisconnected)) else ChatError
        raise error(transport_error(url, e, "check OPENAI_BASE_URL")) from None
    finally:
        connection.close()
    return message


def _refuse(url: str, response, data: bytes) -> None:
    """An answer that is not a reply: a redirect (never followed), a refused stream, an HTTP error."""
    if response.status < 400:  # Beyond the tutorial: the key never follows a redirect
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
    reply, size = sse.StreamedReply(), 0
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
    except KeyboardInterrupt as e:
        e.partial = reply.message(with_calls=False)  # what arrived; a call cut short cannot be run
        raise
    if reply.usage:
        on_usage(reply.usage)
    return reply.message()


# What to check for the statuses a user can fix.
HTTP_HINTS = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and its permissions",
              404: "check OPENAI_MODEL and OPENAI_BASE_URL", 429: "rate limit or quota; wait and retry"}


def _http_error(url: str, status: int, body: bytes) -> str:
    detail = error_detail(body, "(empty body)")
    hint = HTTP_HINTS.get(status, "the server had a problem; try again" if status >= 500 else "")
    return f"HTTP {status} from {url}: {detail}" + (f" ({hint})" if hint else "")


def _message_of(url: str, raw: bytes, on_text=lambda text: None, on_usage=lambda usage: None) -> dict:
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


def run_turn(history: list[dict], user_text: str,
             on_tool: Callable[[str, str], None] = lambda name, result: None,
             waiting: Callable[[], AbstractContextManager] = contextlib.nullcontext,
             on_text: Callable[[str], None] = lambda text: None,
             on_usage: Callable[[dict], None] = lambda usage: None,
             on_retry: Callable[[str], None] | None = None) -> str:
    """One user turn: ask, run the tool calls, ask again, until the model answers in text.

    The model's text goes to on_text as it streams in. On any failure (ChatError, Ctrl-C) the turn
    is closed so the history stays valid, then the failure propagates: every tool call gets a tool
    message and the turn ends with an assistant message, as the API requires of the next request.
    """
    history.append({"role": "user", "content": user_text})
    try:
        for _ in range(MAX_ROUNDS):
            with waiting():
                message = stored(complete(history, on_text, on_usage, on_retry=on_retry), len(history))
            history.append(message)
            if not message.get("tool_calls"):
                return message["content"] or ""
            history.extend(_run_calls(message["tool_calls"], on_tool))
        return closed(history, STOPPED.format(rounds=MAX_ROUNDS))
    except ChatError as e:
        closed(history, f"the request failed: {e}")
        raise
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if partial and partial.get("content"):  # what streamed in before Ctrl-C stays in the conversation
            history.append(stored(partial, len(history)))
        closed(history, "cancelled by the user")
        raise
    except BaseException as e:  # Beyond the tutorial: whatever ends a turn, the history stays valid
        closed(history, f"the turn failed: {type(e).__name__}")
        raise


def _run_calls(calls: list[dict], on_tool: Callable[[str, str], None]) -> list[dict]:
    """The tool messages of one reply: its first MAX_CALLS_PER_REPLY calls run, their results
    within MAX_REPLY_RESULT_CHARS together; every call gets its message, run or not."""
    messages, room = [], MAX_REPLY_RESULT_CHARS
    for i, call in enumerate(calls):
        if i < MAX_CALLS_PER_REPLY:
            result = _run_call(call, on_tool)
            result, room = _within(result, room), max(0, room - len(result))
        else:
            result = (f"not run: too many calls in one reply (at most {MAX_CALLS_PER_REPLY}); "
                      "make this call again in your next reply if it is still needed")
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return messages


def _within(result: str, room: int) -> str:
    """A result cut to what is left of the reply's room, with a note saying how to get the rest."""
    if len(result) <= room:
        return result
    note = (f"\n[... {len(result) - room:,} more characters cut: the results of one reply may add "
            f"{MAX_REPLY_RESULT_CHARS:,} characters; call again in a later reply for the rest (read: with an offset)]")
    return result[:room] + note


def _run_call(call: dict, on_tool: Callable[[str, str], None]) -> str:
    name = call["function"]["name"]
    result = run_tool(name, call["function"]["arguments"] or "{}")
    on_tool(name, result)
    return result
