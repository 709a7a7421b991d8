"""Beyond the tutorial: what the start-up says of the model endpoint before a request is made: no key for
the default endpoint (the REPL stays usable, /call works), plain http to another machine (the key travels
unencrypted)."""
import os
import urllib.parse

import chat
from beyond.net import is_this_machine


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
    return (f"warning: {chat.base_url()} is plain http to another machine: the key and the conversation travel "
            "unencrypted.")
