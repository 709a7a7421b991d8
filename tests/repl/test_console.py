"""The one owner of the terminal (beyond/console.py), on a pseudo-terminal: a server's question that
comes while the prompt or another question has the terminal, Ctrl-C in a form, and what is kept."""
import json
import re
import sys


from conftest import AGENT, agent_env, demo, fake, run_in_pty, workdir
from fakes.openai_server import FakeOpenAI, answer

ALLOWED = {"mcp_fake_ask_later": "allow", "mcp_fake_replies": "allow"}
# The answer to a server's question is written by its own thread, so the next call may overtake it: asked again.
AGAIN = "/call mcp_fake_replies\r"


def pty_env(tmp_path, base_url=None) -> dict:
    return {**agent_env(base_url, key="sk-test" if base_url else None), "NO_COLOR": "1", "TERM": "xterm",
            "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def later(tmp_path, **more) -> str:
    """The /call that makes the fake server ask for a token once `tmp_path/now` exists."""
    return "/call mcp_fake_ask_later " + json.dumps({"when": str(tmp_path / "now"), **more}) + "\r"


def now(tmp_path, keys: str = ""):
    """A step's keys that first let the server ask (it is waiting for the file)."""
    def act(shown: str) -> str:
        (tmp_path / "now").touch()
        return keys
    return act


def replies(screen: str) -> dict:
    """What the fake server got for its own requests, as the last /call mcp_fake_replies printed it."""
    printed = [line for line in lines(screen) if line.startswith("{")]  # keys typed meanwhile may follow on the line
    return json.JSONDecoder().raw_decode(printed[-1])[0]


def received(tmp_path) -> str:
    """The keys that make the fake server write what it got for its requests where the test reads it."""
    return f'/call mcp_fake_replies {{"file": "{tmp_path / "replies.json"}"}}\r'


def lines(screen: str) -> list[str]:
    """The terminal's lines, without the sequences that clear the activity line or switch bracketed paste."""
    return re.sub(r"\x1b\[K|\x1b\[\?2004[hl]", "", screen).replace("\r\n", "\n").replace("\r", "\n").split("\n")


def test_a_question_at_the_prompt_takes_the_terminal_whole(tmp_path):
    """The server asks while "half typed" waits at the prompt: the prompt gives way, the token typed goes
    to the form only (never to the model, never to the history file), and the prompt comes back with
    "half typed", which Enter sends as the message. The server's words are marked as its own."""
    cwd = workdir(tmp_path / "p", {"fake": fake("normal")}, ALLOWED)
    with FakeOpenAI([answer("noted")]) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", later(tmp_path)), ("scheduled", "half typed"), ("half typed", now(tmp_path)),
            ("token (required)", "tok-secret-1\r"), ("[a]ccept", "a\r"), ("> half typed", "\r"),
            ("noted", received(tmp_path)), ('"accept"', "/exit\r", received(tmp_path))])
    (user,) = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert user == "half typed"
    got = json.loads((tmp_path / "replies.json").read_text())
    assert list(got.values()) == [{"action": "accept", "content": {"token": "tok-secret-1"}}]
    assert "tok-secret-1" not in (tmp_path / "state" / "geekagent" / "history").read_text()
    assert "  | MCP server 'bank' asks: type y then Enter" in screen and "\nMCP server 'bank'" not in screen
    assert "<U+202E>" in screen and "\u202e" not in screen


def test_a_question_that_comes_during_the_permission_question_waits_for_it(tmp_path):
    """A form arrives while Allow? waits and says "type y": the y answers the permission question, then
    the form is shown and gets what is typed for it."""
    cwd = workdir(tmp_path / "p", {"fake": fake("normal")}, ALLOWED)
    sent = tmp_path / "sent"

    def once_sent(shown: str) -> str:
        from conftest import wait_until
        (tmp_path / "now").touch()
        assert wait_until(sent.exists, 20)  # the form is on its way while the question waits
        return "y\r"
    screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path), [
        ("> ", later(tmp_path, sent=str(sent))), ("scheduled", '/call mcp_fake_echo {"text": "ran"}\r'),
        ("Allow?", once_sent), ("token (required)", "tok-2\r"), ("[a]ccept", "a\r"),
        ("> ", received(tmp_path)), ('"accept"', "/exit\r", received(tmp_path))])
    assert "ran" in lines(screen)
    got = json.loads((tmp_path / "replies.json").read_text())
    assert list(got.values()) == [{"action": "accept", "content": {"token": "tok-2"}}]


def test_ctrl_c_in_a_form_cancels_it_and_the_next_line_goes_to_the_repl(tmp_path):
    """Ctrl-C at a field of a server's form: the server gets cancel, and the agent goes on at its prompt."""
    cwd = workdir(tmp_path / "p", {"fake": fake("normal")}, ALLOWED)
    screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path), [
        ("> ", later(tmp_path)), ("scheduled", now(tmp_path)), ("token (required)", "\x03"),
        ("(cancelled)", "/call mcp_fake_replies\r"), ('"cancel"', "/exit\r", AGAIN)])
    assert list(replies(screen).values()) == [{"action": "cancel"}]


def test_the_time_a_person_takes_to_answer_is_not_the_tools(monkeypatch):
    """Console.asked_within: what this thread's questions took lately, which /audit's durations leave out."""
    import io
    from beyond import console as console_module
    clock = [100.0]
    monkeypatch.setattr(console_module.time, "monotonic", lambda: clock[0])
    console = console_module.Console(stdin=io.StringIO(), stdout=io.StringIO())
    with console.question():
        clock[0] += 5.0  # the person reads and answers
    clock[0] += 2.0  # the tool runs
    assert console.asked_within(7.0) == 5.0 and console.asked_within(1.0) == 0.0


def test_the_prompt_comes_within_the_grace_and_a_slow_server_joins_with_its_line(tmp_path):
    """A server that starts only once a turn was made (it waits for a file the test makes then): the
    prompt comes first (it is named as still starting, and /mcp shows it so); the turn is offered the
    others' tools; when it comes, one line says so, and the next turn is offered its tools too."""
    late = fake("named", '["echo"]', env={"INIT_WHEN": str(tmp_path / "go")})
    cwd = workdir(tmp_path / "p", {"demo": demo(), "late": late})
    with FakeOpenAI([answer("first"), answer("second")]) as model:
        shown = run_in_pty([sys.executable, AGENT], cwd, {**agent_env(model.base_url), "NO_COLOR": "1"},
                           [("> ", "/mcp\n"), ("still starting (", "hi\n"),
                            ("first", lambda shown: (tmp_path / "go").touch() or ""),
                            ("[mcp] late: ready", "again\n"), ("second", "/exit\n")], timeout=60)
    assert shown.index("Type a message") < shown.index("[mcp] late: ready")
    assert "late(starting)" in shown and "late is still starting (it joins when it is up)" in shown
    offered = [{t["function"]["name"] for t in r.get("tools", [])} for r in model.requests]
    assert not any(name.startswith("mcp_late_") for name in offered[0])
    assert "mcp_late_echo" in offered[1]


def test_a_line_typed_while_the_model_works_never_answers_the_next_question(tmp_path):
    """"y" and Enter typed while the model still thinks is not taken as the Allow? answer that follows: the
    question waits for what is typed after it shows; the "y" is sent as the next message once the turn ends,
    alone (the line typed after it is never glued to it), and a half-typed line stays a draft."""
    import threading
    from fakes.openai_server import answer_from_tools, tool_calls
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    typed = threading.Event()

    def thinking(request: dict) -> dict:
        assert typed.wait(20), "the test never typed ahead"
        return tool_calls(("mcp_demo_dice", {}))
    with FakeOpenAI([thinking, answer_from_tools, answer("yes to what?")]) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            # "y" and Enter, then "half", typed while the model is waited for (the terminal may not echo it)
            ("> ", "roll\r"), ("waiting for the model", "y\rhalf"),
            ("waiting for the model", lambda shown: typed.set() or ""),
            ("Allow?", "n\r"), ("> half", "\x15/exit\r", "\x15/exit\r")])
    assert "rolled" not in screen and "call cancelled" in screen
    assert "yes to what?" in screen and model.requests[2]["messages"][-1] == {"role": "user", "content": "y"}


def test_call_to_a_server_still_starting_waits_for_it(tmp_path):
    """/call of a tool whose server is still starting never says "no tool": it waits for the server, then
    runs the tool; one that fails meanwhile is named as failed."""
    late = fake("named", '["echo"]', env={"INIT_WHEN": str(tmp_path / "go")})
    broken = fake("named", '["echo"]', env={"INIT_WHEN": str(tmp_path / "never")}, startupTimeout=1)
    cwd = workdir(tmp_path / "p", {"late": late, "broken": broken}, {"mcp_late_echo": "allow"})
    shown = run_in_pty([sys.executable, AGENT], cwd, {**agent_env(key=None), "NO_COLOR": "1"},
                       [("> ", '/call mcp_late_echo {"text": "hello"}\n'),
                        ("is still starting; waiting for it", lambda shown: (tmp_path / "go").touch() or ""),
                        ("hello", "/call mcp_broken_echo {}\n"), ("broken", "/exit\n")], timeout=60)
    assert "no tool" not in shown and "late is still starting; waiting for it" in shown
    assert re.search(r"mcp_broken_echo: broken (failed to start: .*|is still starting after its startupTimeout)",
                     shown), shown
