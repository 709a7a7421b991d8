"""Beyond the tutorial: the model endpoint, as the agent uses it beyond the tool loop of chat.py.

The model a server's sampling request is sent to (no tools), and what the banner says of the
endpoint: no key (the REPL stays usable, /call works without a model), plain http to another machine.
"""
import os
import urllib.parse

import chat
from net import is_this_machine
from sse import text_of


def sampling_model(history: list[dict], max_tokens: int) -> tuple[str, str]:
    """The configured model, without tools, for a server's sampling request: (its text, its name)."""
    reply = chat.complete(history, offer_tools=False, max_tokens=max_tokens)
    return text_of(reply.get("content")), chat.model()


def missing_key_hint(repl: bool = True) -> str | None:
    """A one-line hint when a request to the default endpoint could only fail for lack of a key (in
    the REPL, with what works without one): the REPL stays usable (/call) before a model is configured."""
    if os.environ.get("OPENAI_API_KEY") or chat.base_url() != chat.DEFAULT_BASE_URL:
        return None
    return ("No OPENAI_API_KEY set: put it in .env or the environment, or point OPENAI_BASE_URL at a "
            "local server (e.g. http://localhost:11434/v1)." + (" /call works without a model." if repl else ""))


def plain_http_hint() -> str | None:
    """A one-line warning when the endpoint is plain http and not this machine: the key can be read on the way."""
    parts = urllib.parse.urlsplit(chat.base_url())
    if parts.scheme != "http" or is_this_machine(parts.hostname):
        return None
    return f"warning: {chat.base_url()} is plain http to another machine: the key and the conversation travel unencrypted."
