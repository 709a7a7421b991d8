"""Chat Completions over urllib, and the tool-call loop (tutorial Day 15: chat.ts, without streaming).

Owns the HTTP request to any OpenAI-compatible endpoint and the loop that runs the model's tool
calls through tools.run_tool() until the model answers in text. Printing is left to index.py,
which passes callbacks in; tools and permissions are left to tools.py.
"""
import contextlib
import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager

from tools import openai_tools, run_tool

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# A small, cheap model that supports function calling; override with OPENAI_MODEL.
DEFAULT_MODEL = "gpt-4o-mini"
# Long enough for a slow model to think, short enough that a dead endpoint does not hang the REPL.
HTTP_TIMEOUT_S = 120.0
# A model that keeps calling tools is stopped after this many rounds, so a loop cannot run forever.
MAX_ROUNDS = 30
# How much of an error body we show: enough for the API's message, not a whole HTML page.
ERROR_BODY_CHARS = 300

SYSTEM_PROMPT = (
    "You are GeekAgent, a helpful assistant in a terminal. You can call tools. Tools whose names "
    "start with mcp_ come from external MCP servers; the user approves each call. Use tools when "
    "they help, and answer briefly.")


class ChatError(Exception):
    """A model request failed; the message is one line the user can act on."""


# Beyond the tutorial: settings from a .env file, so a key need not live in the shell profile.
def load_dotenv(path: str = ".env") -> None:
    """Read KEY=VALUE lines into the environment; variables already set win."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):]
        key, sep, value = line.partition("=")
        if line.startswith("#") or not sep or not key.strip():
            continue
        os.environ.setdefault(key.strip(), _dotenv_value(value.strip()))


def _dotenv_value(value: str) -> str:
    """Strip matching quotes; an unquoted value ends at ' #' (a trailing comment)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value.split(" #", 1)[0].strip()


def base_url() -> str:
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def model() -> str:
    return os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL


# Beyond the tutorial: the REPL stays usable (/call) before a model is configured.
def missing_key_hint() -> str | None:
    """A one-line hint when a request to the default endpoint could only fail for lack of a key."""
    if os.environ.get("OPENAI_API_KEY") or base_url() != DEFAULT_BASE_URL:
        return None
    return ("No OPENAI_API_KEY set: put it in .env or the environment, or point OPENAI_BASE_URL at a "
            "local server (e.g. http://localhost:11434/v1). /call works without a model.")


def new_history() -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT}]


def complete(messages: list[dict]) -> dict:
    """One Chat Completions request; returns the reply's message or raises ChatError."""
    url = f"{base_url()}/chat/completions"
    body = {"model": model(), "messages": messages}
    specs = openai_tools()
    if specs:
        body["tools"] = specs
    headers = {"Content-Type": "application/json"}
    if os.environ.get("OPENAI_API_KEY"):
        headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
    return _message_of(url, _post(url, json.dumps(body).encode("utf-8"), headers))


def _post(url: str, data: bytes, headers: dict) -> bytes:
    # Imported on first use: urllib.request (with http, ssl and email) costs more start-up time
    # than the rest of the agent together, and the REPL is useful before the first chat turn.
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url, data, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
            return response.read()
    except urllib.error.HTTPError as e:
        raise ChatError(_http_error(url, e.code, e.read())) from None
    except TimeoutError:
        raise ChatError(f"no reply from {url} within {HTTP_TIMEOUT_S:g} s") from None
    except urllib.error.URLError as e:
        reason = e.reason.strerror if isinstance(e.reason, OSError) and e.reason.strerror else e.reason
        raise ChatError(f"cannot reach {url}: {reason} (check OPENAI_BASE_URL)") from None
    except OSError as e:  # connection reset mid-reply and the like
        raise ChatError(f"request to {url} failed: {e}") from None


# What to check for the statuses a user can fix.
HTTP_HINTS = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and its permissions",
              404: "check OPENAI_MODEL and OPENAI_BASE_URL", 429: "rate limit or quota; wait and retry"}


def _http_error(url: str, status: int, body: bytes) -> str:
    detail = error_detail(body, "(empty body)")
    hint = HTTP_HINTS.get(status, "the server had a problem; try again" if status >= 500 else "")
    return f"HTTP {status} from {url}: {detail}" + (f" ({hint})" if hint else "")


def error_detail(body: bytes, fallback: str) -> str:
    """What an HTTP error body says: its JSON error message, else its start, else `fallback`."""
    text = body.decode("utf-8", "replace")
    try:
        detail = json.loads(text)["error"]
        detail = detail.get("message", detail) if isinstance(detail, dict) else detail
    except (ValueError, KeyError, TypeError):
        detail = text.strip()[:ERROR_BODY_CHARS]
    return str(detail) or fallback


def _message_of(url: str, raw: bytes) -> dict:
    try:
        reply = json.loads(raw)
    except ValueError:
        raise ChatError(f"the reply from {url} is not JSON: {raw[:ERROR_BODY_CHARS]!r}") from None
    try:
        message = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        raise ChatError(f"the reply from {url} has no choices: {raw[:ERROR_BODY_CHARS]!r}") from None
    if not isinstance(message, dict):
        raise ChatError(f"the reply from {url} has no message: {raw[:ERROR_BODY_CHARS]!r}")
    return message


def run_turn(history: list[dict], user_text: str,
             on_tool: Callable[[str, str], None] = lambda name, result: None,
             waiting: Callable[[], AbstractContextManager] = contextlib.nullcontext) -> str:
    """One user turn: ask, run the tool calls, ask again, until the model answers in text.

    On any failure (ChatError, Ctrl-C) the turn is closed so the history stays valid, then
    the failure propagates: every tool call gets a tool message and the turn ends with an
    assistant message, as the API requires of the next request.
    """
    history.append({"role": "user", "content": user_text})
    try:
        for _ in range(MAX_ROUNDS):
            with waiting():
                message = complete(history)
            calls = message.get("tool_calls") or []
            history.append({"role": "assistant", "content": message.get("content") or None,
                            **({"tool_calls": calls} if calls else {})})
            if not calls:
                return message.get("content") or ""
            for call in calls:
                history.append(_run_call(call, on_tool))
        return _close_turn(history, f"stopped after {MAX_ROUNDS} rounds of tool calls without an answer")
    except ChatError as e:
        _close_turn(history, f"the request failed: {e}")
        raise
    except KeyboardInterrupt:
        _close_turn(history, "cancelled by the user")
        raise


def _run_call(call: dict, on_tool: Callable[[str, str], None]) -> dict:
    function = call.get("function") or {}
    name = function.get("name", "")
    result = run_tool(name, function.get("arguments") or "{}")
    on_tool(name, result)
    return {"role": "tool", "tool_call_id": call.get("id", ""), "content": result}


# Beyond the tutorial: a failed turn is closed, not dropped, so the next request is still valid.
def _close_turn(history: list[dict], reason: str) -> str:
    """Answer every unanswered tool call, then end the turn with an assistant note."""
    answered = {m.get("tool_call_id") for m in history if m["role"] == "tool"}
    last = next((m for m in reversed(history) if m["role"] == "assistant"), {})
    for call in last.get("tool_calls", []):
        if call.get("id") not in answered:
            history.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": f"({reason})"})
    if history[-1]["role"] != "assistant" or history[-1].get("tool_calls"):
        history.append({"role": "assistant", "content": f"({reason})"})
    return f"({reason})"
