"""Beyond the tutorial: what a server asks of the client: elicitation, sampling and roots.

The tutorial's client offers no capabilities, so a server cannot ask the user anything. The full
client declares the same capabilities every run (capabilities()): elicitation (form and URL)
always, so a server never takes a missing capability for consent; sampling when a model is
configured; roots always. Here each request gets its answer, in both eras: a server's own request
(up to 2025-11-25) or an input request of a 2026-07-28 input_required result.

Every question goes through the console (beyond_console.py), one at a time, waiting for the
terminal at most the entry's timeout; the server's words are shown under a header naming it,
each line marked as its own (beyond_text.quoted).
- elicitation, form: in a terminal, the form of beyond_form.py (Ctrl-C cancels). Without a
  terminal, the entry's "elicitation" decides: "decline" (the default) or "defaults" (accept with
  the schema's defaults when every required field has one). URL: the whole URL, and apart the host
  a browser opens (beyond_outbound.page_host: a URL whose host could mislead is declined unseen),
  opened only when the user says so, never fetched by us; without a terminal, declined.
- sampling: the server, its messages and system prompt (bounded, cleaned), the token limit, which
  is the one the model is asked with; on yes the configured model is asked (no tools), its answer
  shown and asked about again before it goes back. No is the error the specification names.
  Without a terminal, declined; the model is not asked.
- roots: the project folder (or the current one) as one file:// root.
Every elicitation and sampling is one line of the audit log: server, what was asked, the action.
"""
import os
import urllib.parse

from beyond.console import Busy, Console
from beyond.asks.form import form
from beyond.auth.outbound import page_host
from beyond.text import clean, quoted, shorten

# Shown of a server's message, of each sampling message, of a system prompt.
MESSAGE_CHARS = 2000
# JSON-RPC error of a sampling request the user refused (the specification's).
USER_REJECTED = -1
# A sampling request that names no limit gets this one (shown in the question, sent to the model).
DEFAULT_SAMPLING_TOKENS = 1000
# A question waits at most this long for the terminal when its entry names no timeout.
QUESTION_WAIT_S = 60.0

# The terminal every question goes through (index.py sets the agent's; a script gets its own).
_console: Console | None = None


def set_console(console: Console | None) -> None:
    global _console
    _console = console


def console() -> Console:
    global _console
    if _console is None:
        _console = Console()
    return _console


def _waits(config) -> float:
    """How long a server's question may wait for the terminal: its request's timeout."""
    return getattr(config, "timeout", QUESTION_WAIT_S)


# Where elicitations and samplings are recorded, and the model a sampling asks (index.py sets
# both: the audit log's record, chat.py's model without tools); model(history, max_tokens) -> (text, model name).
_record = lambda entry: None  # noqa: E731
_model = None


def set_record(record) -> None:
    global _record
    _record = record


def set_model(model) -> None:
    global _model
    _model = model


def model_configured() -> bool:
    return _model is not None and bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def capabilities() -> dict:
    """What this client offers servers, the same in every run (sampling only with a model)."""
    offered = {"elicitation": {"form": {}, "url": {}}, "roots": {}}
    if model_configured():
        offered["sampling"] = {}
    return offered


class Refused(Exception):
    """An answer that is a JSON-RPC error: its code and message."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# Whether a server's questions are put to the user: None means when stdin and stdout are a terminal
# (an unattended run, -p, sets False).
_interactive: bool | None = None


def set_interactive(interactive: bool | None) -> None:
    global _interactive
    _interactive = interactive


def answer(server: str, config, method: str, params: dict, interactive: bool | None = None) -> dict:
    """The result for one request of a server's; Refused for an error answer."""
    if interactive is None:
        interactive = console().terminal if _interactive is None else _interactive
    params = params if isinstance(params, dict) else {}
    if method == "roots/list":
        return {"roots": [{"uri": root_uri(), "name": os.path.basename(root_folder()) or "root"}]}
    if method == "elicitation/create":
        result = _elicit(server, config, params, interactive)
        fields = sorted((params.get("requestedSchema") or {}).get("properties") or {})
        _record({"kind": "elicitation", "server": server, "mode": params.get("mode", "form"),
                 "fields": fields, "action": result["action"]})
        return result
    if method == "sampling/createMessage":
        if not model_configured():
            raise Refused(-32601, "method not found: sampling/createMessage (no model is configured)")
        try:
            result = _sample(server, config, params, interactive)
        except Refused:
            _record({"kind": "sampling", "server": server, "action": "declined"})
            raise
        _record({"kind": "sampling", "server": server, "action": "accepted"})
        return result
    raise Refused(-32601, f"method not found: {shorten(method, 100)}")


# --- roots ----------------------------------------------------------------------------------

_root: str | None = None


def set_root(folder: str) -> None:
    global _root
    _root = folder


def root_folder() -> str:
    return os.path.abspath(_root or os.getcwd())


def root_uri() -> str:
    return "file://" + urllib.parse.quote(root_folder())


# --- elicitation ------------------------------------------------------------------------------

def _elicit(server: str, config, params: dict, interactive: bool) -> dict:
    shown = clean(shorten(str(server), 80), one_line=True)
    message = quoted(params.get("message", ""), MESSAGE_CHARS)
    if params.get("mode") == "url":
        return _elicit_url(shown, config, message, params.get("url"), interactive)
    schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
    fields = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = [r for r in schema.get("required") or [] if r in fields]
    if not interactive:
        policy = getattr(config, "elicitation", "decline")
        defaults = {k: v["default"] for k, v in fields.items() if isinstance(v, dict) and "default" in v}
        if policy == "defaults" and all(r in defaults for r in required):
            return {"action": "accept", "content": defaults}
        return {"action": "decline"}
    terminal = console()
    try:
        with terminal.question(_waits(config)):
            print(f"\nMCP server '{shown}' asks:\n{message}")
            try:
                return form(terminal.read_line, fields, required)
            except (KeyboardInterrupt, EOFError):
                print("\n(cancelled)")
                return {"action": "cancel"}
    except Busy:
        return {"action": "cancel"}  # the user was answering other questions all that time


def _elicit_url(server: str, config, message: str, url: object, interactive: bool) -> dict:
    host = page_host(url) if isinstance(url, str) else None
    if not interactive or host is None:
        return {"action": "decline"}  # not a page (file:, javascript:, ...), or one whose host could mislead
    terminal = console()
    try:
        with terminal.question(_waits(config)):
            print(f"\nMCP server '{server}' asks you to open a page:\n{message}")
            print(f"  host: {host}")
            print(f"  {clean(url, one_line=True)}")
            try:
                choice = terminal.read_line("[o]pen in your browser, [d]ecline, [c]ancel? ").strip().lower()
            except (KeyboardInterrupt, EOFError):
                print()
                return {"action": "cancel"}
    except Busy:
        return {"action": "cancel"}
    if choice in ("o", "open"):
        import webbrowser
        webbrowser.open(url)
        return {"action": "accept"}
    return {"action": "cancel" if choice in ("c", "cancel") else "decline"}


# --- sampling ----------------------------------------------------------------------------------

def _sample(server: str, config, params: dict, interactive: bool) -> dict:
    if not interactive:
        raise Refused(USER_REJECTED, "User rejected sampling request")
    shown = clean(shorten(str(server), 80), one_line=True)
    messages = [m for m in params.get("messages") or [] if isinstance(m, dict)]
    asked = params.get("maxTokens")
    limit = asked if type(asked) is int and asked > 0 else DEFAULT_SAMPLING_TOKENS  # what is shown is what is sent
    terminal = console()
    try:
        with terminal.question(_waits(config)):
            print(f"\nMCP server '{shown}' asks your model (at most {limit:,} tokens):")
            if params.get("systemPrompt"):
                print(f"  system:\n{quoted(params['systemPrompt'], MESSAGE_CHARS)}")
            for m in messages:
                print(f"  {clean(shorten(str(m.get('role', 'user')), 20), one_line=True)}:\n"
                      f"{quoted(_text(m.get('content')), MESSAGE_CHARS)}")
            try:
                text, model = _ask_model(terminal, params, messages, limit)
            except (KeyboardInterrupt, EOFError):
                print()
                raise Refused(USER_REJECTED, "User rejected sampling request") from None
    except Busy:
        raise Refused(USER_REJECTED, "User rejected sampling request (the user was answering another question)") from None
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model,
            "stopReason": "endTurn"}


def _ask_model(terminal: Console, params: dict, messages: list[dict], limit: int) -> tuple[str, str]:
    """Ask before the model is asked, and again before its answer goes back: (its text, its name)."""
    if terminal.read_line("Ask the model? [y/N] ").strip().lower() not in ("y", "yes"):
        raise Refused(USER_REJECTED, "User rejected sampling request")
    history = ([{"role": "system", "content": str(params["systemPrompt"])}] if params.get("systemPrompt") else [])
    history += [{"role": "assistant" if m.get("role") == "assistant" else "user", "content": _text(m.get("content"))}
                for m in messages]
    try:
        text, model = _model(history, limit)
    except Exception as e:  # the endpoint's error, whatever it is: the server is told the model could not
        raise Refused(USER_REJECTED, f"the model could not answer: {e}") from None
    print(f"  the model:\n{quoted(text, MESSAGE_CHARS)}")
    if terminal.read_line("Send this answer to the server? [y/N] ").strip().lower() not in ("y", "yes"):
        raise Refused(USER_REJECTED, "User rejected sampling request")
    return text, model


def _text(content) -> str:
    if isinstance(content, dict):
        return str(content.get("text", f"[{content.get('type', '?')} content]"))
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content)
    return str(content or "")
