"""What a server asks of the client (beyond/asks/handlers.py): elicitation, sampling, roots; in both eras.

Tests run without a terminal, so the policy answers; the terminal form is driven through a console
whose stdin types the answers.
"""
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from beyond.asks.handlers import DEFAULT_SAMPLING_TOKENS, Handlers
from beyond.console import Console
from conftest import fake
from fakes.openai_server import answer
from mcp import McpError


def handlers(model=None, root=None, answers: list | None = None, prompts: list | None = None,
             interactive: bool | None = None) -> Handlers:
    """The agent's handlers with the console's stdin typing `answers` (none: a console that is no
    terminal, as in these tests), a model, a root."""
    if answers is None:
        return Handlers(Console(), model=model, root=root, interactive=interactive)
    shown = io.StringIO()
    console = Console(stdin=Typed(answers, [] if prompts is None else prompts, shown), stdout=shown)
    return Handlers(console, model=model, root=root, interactive=True if interactive is None else interactive)


def asked(client, tool: str, arguments: dict | None = None) -> dict:
    """What the client answered the fake server's own request (the tool returns it)."""
    return json.loads(client.call_tool(tool, arguments or {}))


def test_the_same_capabilities_every_run(started, monkeypatch):
    """elicitation (form and URL), roots and the skills extension always; sampling only once a model is configured."""
    assert asked(started(fake("normal")), "capabilities") == {"elicitation": {"form": {}, "url": {}}, "roots": {},
                                                              "extensions": {"io.modelcontextprotocol/skills": {}}}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with_model = handlers(model=lambda history, limit: ("fine", "scripted"))
    assert "sampling" in asked(started(fake("normal"), name="second", asks=with_model), "capabilities")


def test_without_a_terminal_a_form_is_declined_unless_the_entry_takes_its_defaults(started):
    """The default policy declines; "elicitation": "defaults" accepts the schema's defaults (every required one
    has one)."""
    assert asked(started(fake("normal")), "ask_form")["result"] == {"action": "decline"}
    defaults = started(fake("normal", elicitation="defaults"), name="defaults")
    assert asked(defaults, "ask_form")["result"] == {"action": "accept", "content": {"name": "Ada", "count": 3}}


def test_a_url_is_never_fetched_by_the_client_and_declined_without_a_terminal(started):
    """A URL elicitation without a terminal is declined, and the page it names is never requested."""
    hits = []

    class Count(BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass
    server = ThreadingHTTPServer(("127.0.0.1", 0), Count)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/login"
        assert asked(started(fake("normal")), "ask_url", {"url": url})["result"] == {"action": "decline"}
        assert hits == []
    finally:
        server.shutdown()
        server.server_close()


def test_roots_are_the_project_folder(started, tmp_path):
    (root,) = asked(started(fake("normal"), asks=handlers(root=str(tmp_path))), "ask_roots")["result"]["roots"]
    assert root["uri"] == "file://" + str(tmp_path)


def test_sampling_without_a_terminal_is_declined_and_the_model_is_not_asked(started, monkeypatch):
    asked_model = []
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = handlers(model=lambda history, limit: asked_model.append(history) or ("an answer", "scripted"))
    reply = asked(started(fake("normal"), asks=model), "ask_sampling")
    assert reply["error"] == {"code": -1, "message": "User rejected sampling request"} and asked_model == []


class Typed:
    """A console's stdin that types the answers in order (a KeyboardInterrupt among them is raised, as
    Ctrl-C would); the prompt each answer was typed at goes to `prompts`."""

    def __init__(self, answers: list, prompts: list, shown: io.StringIO) -> None:
        self.answers, self.prompts, self.shown, self.seen = answers, prompts, shown, 0

    def readline(self) -> str:
        self.prompts.append(self.shown.getvalue()[self.seen:])
        self.seen = len(self.shown.getvalue())
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer + "\n"


SCHEMA = {"type": "object", "required": ["email", "count"], "properties": {
    "email": {"type": "string", "format": "email", "title": "Your email"},
    "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2},
    "color": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"]},
    "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
    "ok": {"type": "boolean"}}}


def test_the_form_checks_each_field_as_typed_then_is_reviewed(monkeypatch, capsys):
    """Wrong values are asked again with what to type; Enter keeps a default; the review edits, then accepts."""
    prompts: list = []
    left = ["not-an-email", "ada@example.com", "12", "", "2", "1,3", "y", "e", "count", "7", "a"]
    result = handlers(answers=left, prompts=prompts).answer(
        "srv", None, "elicitation/create", {"message": "Who?", "requestedSchema": SCHEMA})
    assert result == {"action": "accept", "content": {"email": "ada@example.com", "count": 7, "color": "green",
                                                      "tags": ["a", "c"], "ok": True}}
    assert left == []
    shown = capsys.readouterr().out
    assert "type an email address" in shown and "at most 10" in shown
    assert "Your email (required)" in prompts[0] and "[2]" in prompts[2]  # the title, and the default shown
    assert prompts[-1] == "[a]ccept, [e]dit, [d]ecline, [c]ancel? "


def test_a_multi_select_takes_numbers_with_spaces_and_choices_show_their_titles(capsys):
    """`2 3` is 2 and 3 as `2,3` is; the prompt says how to pick; a default shows its title, not its value."""
    schema = {"type": "object", "properties": {
        "heroes": {"type": "array", "items": {"oneOf": [{"const": "hero-1", "title": "Ada"},
                                                        {"const": "hero-2", "title": "Grace"},
                                                        {"const": "hero-3", "title": "Edsger"}]}},
        "lead": {"type": "string", "default": "hero-2",
                 "oneOf": [{"const": "hero-1", "title": "Ada"}, {"const": "hero-2", "title": "Grace"}]}}}
    prompts: list = []
    result = handlers(answers=["2 3", "", "a"], prompts=prompts).answer(
        "srv", None, "elicitation/create", {"message": "Team?", "requestedSchema": schema})
    assert result == {"action": "accept", "content": {"heroes": ["hero-2", "hero-3"], "lead": "hero-2"}}
    assert "(numbers, such as 1,3)" in prompts[0]
    assert prompts[1].endswith('  lead ["Grace"]: ') and "hero-2" not in prompts[1]
    review = capsys.readouterr().out.split("lead")[-1]  # the review shows the titles the form showed
    assert '"Grace"' in review and "hero-2" not in review


@pytest.mark.parametrize("answers, action", [
    (["ada@example.com", "", "", "", "", "d"], "decline"),
    (["ada@example.com", KeyboardInterrupt()], "cancel"),
    (["ada@example.com", "", "", "", "", "c"], "cancel"),
])
def test_decline_and_cancel_are_what_the_server_gets(monkeypatch, answers, action):
    result = handlers(answers=list(answers)).answer(
        "srv", None, "elicitation/create", {"message": "Who?", "requestedSchema": SCHEMA})
    assert result == {"action": action}


def test_input_required_rounds_echo_the_state_with_new_ids(started, tmp_path):
    """2026-07-28: each round is a new request carrying the answers and exactly the state the server gave."""
    client = started(fake("modern", protocol="2026-07-28"), asks=handlers(root=str(tmp_path)))
    rounds = json.loads(client.call_tool("needs_input", {}))
    assert [r["state"] for r in rounds] == [None, "round-1", "round-2"]
    assert len({r["id"] for r in rounds}) == 3
    first_answers = rounds[1]["responses"]
    assert first_answers["where"]["roots"][0]["uri"] == "file://" + str(tmp_path)
    assert first_answers["confirm"] == {"action": "decline"}  # no terminal: the default policy
    assert rounds[0]["responses"] is None and rounds[2]["responses"] is None  # the last round asked for nothing


def test_a_server_that_always_wants_more_input_is_given_up_on(started):
    client = started(fake("modern", protocol="2026-07-28"))
    with pytest.raises(McpError, match="asked for input more than 8 times"):
        client.call_tool("needs_input", {"forever": True})
    assert client.call_tool("echo", {"text": "next"}) == "next"


def test_what_a_server_writes_into_a_question_is_shown_not_obeyed(monkeypatch, capsys):
    """Escape sequences in a form's message, titles and defaults, and in a sampling's token limit,
    are made visible: none reaches the terminal as it was."""
    asks = handlers(answers=["", "d"])
    schema = {"type": "object", "properties": {"x": {"type": "string", "title": "\x1b[2Jwipe",
                                                      "default": "\x1b]52;c;AAAA\x07"}}}
    asks.answer("srv\x1b[31m", None, "elicitation/create", {"message": "hi\x1b[8m", "requestedSchema": schema})
    assert "\x1b" not in capsys.readouterr().out


def test_the_login_url_is_shown_cleaned(capsys, monkeypatch):
    """The authorization endpoint is the authorization server's string: shown with escapes made visible."""
    import queue
    from beyond.auth import login
    replies = queue.SimpleQueue()
    replies.put({"state": "s", "code": "c"})
    login._code_from_user("remote\x1b[31m", "https://auth.example/authorize?\x1b[2J&state=s", replies, "s",
                                 login.Screen(browser=False))
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "https://auth.example/authorize?" in shown


def test_roots_are_answered_at_once_while_a_question_of_the_same_server_waits(started):
    """A form of the server's waits for the user; meanwhile its roots/list is answered at once, not
    turned away as busy (requests that need nobody need no turn at the terminal)."""
    import threading
    asked, release = threading.Event(), threading.Event()

    class Waiting:
        def readline(self) -> str:
            asked.set()
            release.wait(30)
            return "\n"
    try:
        console = Console(stdin=Waiting(), stdout=io.StringIO())
        client = started(fake("normal"), asks=Handlers(console, interactive=True))
        client.call_tool("ask_later", {"after": 0})
        assert asked.wait(30)
        reply = json.loads(client.call_tool("ask_roots", {}))
        assert "roots" in reply.get("result", {}), reply
    finally:
        release.set()


@pytest.mark.parametrize("url, host", [
    ("https://accounts.google.com/o/auth", "accounts.google.com"),
    ("https://ACCOUNTS.Google.com./x", "accounts.google.com."),
    ("https://\u0430ccounts.google.com/", "xn--ccounts-1fg.google.com"),  # a Cyrillic a: shown as what it is
    ("https://evil.test\\@accounts.google.com/", None),  # browsers open evil.test
    ("https://accounts.google.com@evil.test/", None),  # a user name before the host
    ("https://evil%2etest/", None), ("https://0x7f.1/", None), ("https://2130706433/", None),
    ("https://127.0.0.1:8443/ok", "127.0.0.1"), ("https://ev\til.test/", None), ("javascript:alert(1)", None),
    ("file:///etc/passwd", None), ("https://[::1]/", "[::1]")])
def test_a_page_to_open_shows_the_host_a_browser_opens(url, host):
    """The host as browsers parse it: lowercased, punycode for what is not ASCII; None (declined unseen)
    where browsers and Python's parser could disagree."""
    from beyond.auth.outbound import page_host
    assert page_host(url) == host


def test_a_page_whose_host_could_mislead_is_declined_unseen(started, capsys):
    """A URL question naming one host to Python and another to browsers is declined, and never shown."""
    left = ["o"]
    reply = asked(started(fake("normal"), asks=handlers(answers=left)), "ask_url",
                  {"url": "https://evil.test\\@accounts.google.com/"})
    assert reply["result"] == {"action": "decline"} and left == ["o"]
    assert "accounts.google.com" not in capsys.readouterr().out


def test_sampling_sends_the_limit_it_shows(monkeypatch, capsys):
    """The token limit the sampling question shows is the one the model is asked with (a request
    without one gets the default, shown as such)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    limits = []
    model = lambda history, max_tokens: limits.append(max_tokens) or ("fine", "scripted")  # noqa: E731
    for params, limit in (({"maxTokens": 5}, 5), ({}, DEFAULT_SAMPLING_TOKENS)):
        handlers(model=model, answers=["y", "y"]).answer(
            "srv", None, "sampling/createMessage",
            {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], **params})
        assert f"at most {limit:,} tokens" in capsys.readouterr().out
    assert limits == [5, DEFAULT_SAMPLING_TOKENS]


def test_a_form_shows_the_servers_words_masked(monkeypatch, capsys):
    """A form that repeats a secret of the user's in its message, a field's title, description, default and
    choices: shown masked everywhere, the review too; what is typed is the user's own."""
    monkeypatch.setenv("GH_TOKEN", "ghp_formed0123456789")
    secret = "ghp_formed0123456789"
    schema = {"type": "object", "properties": {"pick": {"type": "string", "title": f"T {secret}", "description":
              f"D {secret}", "enum": [secret, "x"], "default": secret}}}
    prompts: list = []
    result = handlers(answers=["", "a"], prompts=prompts).answer(
        "srv", None, "elicitation/create", {"message": f"M {secret}", "requestedSchema": schema})
    assert result == {"action": "accept", "content": {"pick": secret}}
    shown = capsys.readouterr().out + "".join(prompts)
    assert secret not in shown and shown.count("[REDACTED:GH_TOKEN]") >= 5


def test_a_sampling_request_is_masked_on_the_screen_and_for_the_model(monkeypatch, capsys):
    """A server that puts a secret of the user's in its sampling request: shown masked, sent to the model masked."""
    monkeypatch.setenv("GH_TOKEN", "ghp_sampled0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    histories = []
    model = lambda history, max_tokens: histories.append(history) or ("fine", "scripted")  # noqa: E731
    handlers(model=model, answers=["y", "y"]).answer("srv", None, "sampling/createMessage", {
        "systemPrompt": "use ghp_sampled0123456789", "messages": [
            {"role": "user", "content": {"type": "text", "text": "the token=ghp_sampled0123456789"}}]})
    shown, sent = capsys.readouterr().out, json.dumps(histories)
    assert "ghp_sampled" not in shown + sent and "[REDACTED:GH_TOKEN]" in shown and "[REDACTED" in sent


def test_the_sampling_model_is_asked_with_the_limit(endpoint):
    """The agent's sampling model sends the limit as the request's max_tokens, without tools."""
    from beyond.model.client import ModelChat
    fake_model = endpoint(answer("short"))
    assert ModelChat().sample([{"role": "user", "content": "hi"}], 7) == ("short", "test-model")
    assert fake_model.requests[0]["max_tokens"] == 7 and "tools" not in fake_model.requests[0]


def test_after_a_page_for_a_request_enter_sends_it_again_and_c_gives_up():
    """Handlers.finished (-32042): Enter is done, c cancels; without a terminal only the server's word counts."""
    prompts = []
    assert handlers(answers=[""], prompts=prompts).finished("bank", None, lambda: False) is True
    assert "sent again" in prompts[0]
    assert handlers(answers=["c"]).finished("bank", None, lambda: False) is False
    assert handlers().finished("bank", None, lambda: False) is False
    assert handlers().finished("bank", None, lambda: True) is True
