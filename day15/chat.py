"""Chat Completions and the tool-call loop (tutorial Day 15: chat.ts, unchanged on Day 15).

Chat posts the conversation to any OpenAI-compatible endpoint with urllib, one request per
round, and runs the model's tool calls through tools.run_tool() until the model answers in text.
Printing is left to index.py (on_tool); tools and permissions to tools.py.
"""
import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable

from tools import openai_tools, run_tool

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# A small, cheap model that supports function calling; override with OPENAI_MODEL.
DEFAULT_MODEL = "gpt-4o-mini"
# Long enough for a slow model to answer at length, short enough that a dead endpoint does not hang.
HTTP_TIMEOUT_S = 300.0
# A model that keeps calling tools is stopped after this many rounds, so a loop cannot run forever.
MAX_ROUNDS = 30
STOPPED = "stopped after {rounds} rounds of tool calls without an answer"
# How much of an error's body a failed request shows: the API's message, not a whole page.
ERROR_BODY_CHARS = 300

SYSTEM_PROMPT = (
    "You are GeekAgent, a helpful assistant in a terminal. You can call tools. Tools whose names "
    "start with mcp_ come from external MCP servers; the user approves each call. Use tools when "
    "they help, and answer briefly.")


class ChatError(Exception):
    """A model request failed; the message is one line the user can act on."""


def base_url() -> str:
    return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def model() -> str:
    return os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL


def new_history() -> list[dict]:
    return [{"role": "system", "content": SYSTEM_PROMPT}]


class Chat:
    """The model and the tool loop: complete() is one request, run_turn() one turn of the user's.
    It holds nothing across turns: the conversation is the caller's history list. The loop calls its
    two steps, complete() and run_calls(), as methods, so a client of its own may replace them."""

    def run_turn(self, history: list[dict], user_text: str,
                 on_tool: Callable[[str, str], None] = lambda name, result: None) -> str:
        """Ask, run the tool calls, ask again, until the model answers in text; return that text."""
        history.append({"role": "user", "content": user_text})
        for _ in range(MAX_ROUNDS):
            message = self.complete(history)
            history.append(message)
            if not message.get("tool_calls"):
                return message.get("content") or ""
            history.extend(self.run_calls(message["tool_calls"], on_tool))
        return f"({STOPPED.format(rounds=MAX_ROUNDS)})"

    def complete(self, messages: list[dict]) -> dict:
        """One Chat Completions request with the tools on offer: its message, or ChatError."""
        url = f"{base_url()}/chat/completions"
        body = {"model": model(), "messages": messages}
        specs = openai_tools()
        if specs:
            body["tools"] = specs
        headers = {"Content-Type": "application/json"}
        if os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
        data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data, headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
                reply = json.loads(response.read())
            return reply["choices"][0]["message"]
        except urllib.error.HTTPError as e:
            detail = e.read(ERROR_BODY_CHARS).decode("utf-8", "replace")
            raise ChatError(f"HTTP {e.code} from {url}: {detail}") from None
        except urllib.error.URLError as e:
            raise ChatError(f"cannot reach {url}: {e.reason} (check OPENAI_BASE_URL)") from None
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            raise ChatError(f"no usable reply from {url}: {e}") from None

    def run_calls(self, calls: list[dict], on_tool: Callable[[str, str], None]) -> list[dict]:
        """One tool message for each call of a reply, in order; run_tool() always returns text."""
        messages = []
        for call in calls:
            name = call["function"]["name"]
            result = run_tool(name, call["function"]["arguments"] or "{}")
            on_tool(name, result)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return messages
