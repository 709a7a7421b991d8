"""Beyond the tutorial: what a server asks of the client: elicitation, sampling and roots.

The tutorial's client offers no capabilities, so a server cannot ask the user anything. The agent
gives each client one Handlers (beyond/client/capabilities.py's Asks), which declares the same
capabilities every run: elicitation (form and URL) always, so a server never takes a missing
capability for consent; sampling when a model is configured; roots always. Each request gets its
answer, in both eras: a server's own request (up to 2025-11-25) or an input request of a
2026-07-28 input_required result.

Every question goes through the console (beyond/console.py), one at a time, waiting for the
terminal at most the entry's timeout; the server's words are shown under a header naming it,
each line marked as its own and masked (beyond/terminal.py: quoted).
- elicitation, form: in a terminal, the form of form.py (Ctrl-C cancels). Without a terminal, the
  entry's "elicitation" decides: "decline" (the default) or "defaults" (accept with the schema's
  defaults when every required field has one). URL: the whole URL, and apart the host a browser
  opens (beyond/auth/outbound.py: page_host; a URL whose host could mislead is declined unseen),
  opened only when the user says so, never fetched by us; without a terminal, declined.
- sampling: the server, its messages and system prompt (bounded, cleaned), the token limit, which
  is the one the model is asked with; on yes the configured model is asked (no tools), its answer
  shown and asked about again before it goes back. No is the error the specification names.
  Without a terminal, declined; the model is not asked.
- roots: as client/roots.py chooses them (the entry's "roots", the folders its args name, else the
  project folder, or the current one), each a file:// root.
Every elicitation and sampling is one line of the audit log: server, what was asked, the action.
"""
import os
import sys
import urllib.parse

from beyond.asks.form import form
from beyond.client.roots import roots_now
from beyond.auth.outbound import page_host
from beyond.client.capabilities import METHOD_NOT_FOUND, AskRefused
from beyond.console import Busy, Console
from beyond.secrets import mask
from beyond.terminal import quoted
from beyond.text import clean, shorten

# Shown of a server's message, of each sampling message, of a system prompt.
MESSAGE_CHARS = 2000
# JSON-RPC error of a sampling request the user refused (the specification's).
USER_REJECTED = -1
REJECTED = "User rejected sampling request"
# A sampling request that names no limit gets this one (shown in the question, sent to the model).
DEFAULT_SAMPLING_TOKENS = 1000
# A question waits at most this long for the terminal when its entry names no timeout.
QUESTION_WAIT_S = 60.0


class Handlers:
    """The agent's answers to what servers ask. `console` asks the user (questions are put only when
    `interactive`, by default when it is a terminal); model(history, max_tokens) -> (text, model name)
    is the configured model without tools, for sampling; record(entry) takes one line for the audit
    log; `root` is the project folder, the one root."""

    def __init__(self, console: Console, model=None, record=lambda entry: None, root: str | None = None,
                 interactive: bool | None = None) -> None:
        self.console, self.model, self.record, self.root = console, model, record, root
        self.interactive = console.terminal if interactive is None else interactive

    def model_configured(self) -> bool:
        return self.model is not None and bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))

    def capabilities(self) -> dict:
        """What this client offers servers, the same in every run (sampling only with a model)."""
        offered = {"elicitation": {"form": {}, "url": {}}, "roots": {}}
        if self.model_configured():
            offered["sampling"] = {}
        return offered

    def answer(self, server: str, config, method: str, params: object) -> dict:
        """The result for one request of a server's; AskRefused for an error answer."""
        params = params if isinstance(params, dict) else {}
        if method == "roots/list":
            if getattr(config, "roots", None) is False:
                raise AskRefused(METHOD_NOT_FOUND, "method not found: roots/list (the entry says \"roots\": false)")
            roots, moved = roots_now(config, self.root_folder())
            for folder in moved:
                print(f"[mcp:{clean(server, one_line=True)}] {clean(folder, one_line=True)} is left out of its roots: "
                      "it is not where the trust question showed it", file=sys.stderr)
            return {"roots": [{"uri": "file://" + urllib.parse.quote(folder),
                               "name": os.path.basename(folder) or "root"} for folder in roots]}
        if method == "elicitation/create":
            result = self._elicit(server, config, params)
            fields = sorted((params.get("requestedSchema") or {}).get("properties") or {})
            self.record({"kind": "elicitation", "server": server, "mode": params.get("mode", "form"),
                         "fields": fields, "action": result["action"]})
            return result
        if method == "sampling/createMessage":
            if not self.model_configured():
                raise AskRefused(METHOD_NOT_FOUND, "method not found: sampling/createMessage (no model is configured)")
            try:
                result = self._sample(server, config, params)
            except AskRefused:
                self.record({"kind": "sampling", "server": server, "action": "declined"})
                raise
            self.record({"kind": "sampling", "server": server, "action": "accepted"})
            return result
        raise AskRefused(METHOD_NOT_FOUND, f"method not found: {shorten(method, 100)}")

    def root_folder(self) -> str:
        return os.path.abspath(self.root or os.getcwd())

    # --- elicitation ----------------------------------------------------------------------------

    def _elicit(self, server: str, config, params: dict) -> dict:
        shown = clean(shorten(str(server), 80), one_line=True)
        message = quoted(params.get("message", ""), MESSAGE_CHARS)
        if params.get("mode") == "url":
            return self._elicit_url(shown, config, message, params.get("url"))
        schema = params.get("requestedSchema") if isinstance(params.get("requestedSchema"), dict) else {}
        fields = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required") or [] if r in fields]
        if not self.interactive:
            policy = getattr(config, "elicitation", "decline")
            defaults = {k: v["default"] for k, v in fields.items() if isinstance(v, dict) and "default" in v}
            if policy == "defaults" and all(r in defaults for r in required):
                return {"action": "accept", "content": defaults}
            return {"action": "decline"}
        try:
            with self.console.question(_waits(config)):
                print(f"\nMCP server '{shown}' asks:\n{message}")
                try:
                    return form(self.console.read_line, fields, required)
                except (KeyboardInterrupt, EOFError):
                    print("\n(cancelled)")
                    return {"action": "cancel"}
        except Busy:
            return {"action": "cancel"}  # the user was answering other questions all that time

    def _elicit_url(self, server: str, config, message: str, url: object) -> dict:
        host = page_host(url) if isinstance(url, str) else None
        if not self.interactive or host is None:
            return {"action": "decline"}  # not a page (file:, javascript:, ...), or one whose host could mislead
        try:
            with self.console.question(_waits(config)):
                print(f"\nMCP server '{server}' asks you to open a page:\n{message}")
                print(f"  host: {host}")
                print(f"  {clean(mask(url), one_line=True)}")  # what is opened is the URL whole
                try:
                    choice = self.console.read_line("[o]pen in your browser, [d]ecline, [c]ancel? ").strip().lower()
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

    def finished(self, server: str, config, completed) -> bool:
        """Asks.finished: Enter once the page is done with (or the server's word that it is); c cancels."""
        if not self.interactive:
            return completed()
        try:
            with self.console.question(_waits(config)):
                try:
                    said = self.console.read_line(
                        f"Press Enter once you are done on that page (c to cancel; "
                        f"then the request to {clean(server, one_line=True)} is sent again): ", until=completed)
                except (KeyboardInterrupt, EOFError):
                    print()
                    return False
        except Busy:
            return completed()
        return said is None or said.strip().lower() not in ("c", "cancel")

    # --- sampling --------------------------------------------------------------------------------

    def _sample(self, server: str, config, params: dict) -> dict:
        if not self.interactive:
            raise AskRefused(USER_REJECTED, REJECTED)
        shown = clean(shorten(str(server), 80), one_line=True)
        messages = [m for m in params.get("messages") or [] if isinstance(m, dict)]
        asked = params.get("maxTokens")
        limit = asked if type(asked) is int and asked > 0 else DEFAULT_SAMPLING_TOKENS  # what is shown is what is sent
        try:
            with self.console.question(_waits(config)):
                print(f"\nMCP server '{shown}' asks your model (at most {limit:,} tokens):")
                if params.get("systemPrompt"):
                    print(f"  system:\n{quoted(params['systemPrompt'], MESSAGE_CHARS)}")
                for m in messages:
                    print(f"  {clean(shorten(mask(str(m.get('role', 'user'))), 20), one_line=True)}:\n"
                          f"{quoted(_text(m.get('content')), MESSAGE_CHARS)}")
                try:
                    text, model = self._ask_model(params, messages, limit)
                except (KeyboardInterrupt, EOFError):
                    print()
                    raise AskRefused(USER_REJECTED, REJECTED) from None
        except Busy:
            raise AskRefused(USER_REJECTED, f"{REJECTED} (the user was answering another question)") from None
        return {"role": "assistant", "content": {"type": "text", "text": text}, "model": model,
                "stopReason": "endTurn"}

    def _ask_model(self, params: dict, messages: list[dict], limit: int) -> tuple[str, str]:
        """Ask before the model is asked, and again before its answer goes back: (its text, its name)."""
        if not self.console.confirm("Ask the model?", always=False):  # Ctrl-D is no, as at every y/N
            raise AskRefused(USER_REJECTED, REJECTED)
        # What the server wrote goes to the model: masked, as all of a server's words the model reads.
        history = ([{"role": "system", "content": mask(str(params["systemPrompt"]))}] if params.get("systemPrompt")
                   else [])
        history += [{"role": "assistant" if m.get("role") == "assistant" else "user",
                     "content": mask(_text(m.get("content")))} for m in messages]
        try:
            text, model = self.model(history, limit)
        except Exception as e:  # the endpoint's error, whatever it is: the server is told the model could not
            raise AskRefused(USER_REJECTED, f"the model could not answer: {e}") from None
        print(f"  the model:\n{quoted(text, MESSAGE_CHARS)}")
        if not self.console.confirm("Send this answer to the server?", always=False):
            raise AskRefused(USER_REJECTED, REJECTED)
        return text, model


def _waits(config) -> float:
    """How long a server's question may wait for the terminal: its request's timeout."""
    return getattr(config, "timeout", QUESTION_WAIT_S)


def _text(content) -> str:
    if isinstance(content, dict):
        return str(content.get("text", f"[{content.get('type', '?')} content]"))
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content)
    return str(content or "")
