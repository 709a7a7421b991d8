"""chat.py against the scripted OpenAI-compatible server: the tool loop, errors, history, .env."""
import json
import signal
import socket
import sys
import threading

import pytest

import chat
from beyond.model import client as model_module
from beyond import net
import tools
from beyond.folder import dotenv
from beyond.model.hints import missing_key_hint
from fakes.openai_server import Hang, HttpError, Raw, answer, answer_from_tools, check_request, tool_calls
from tools import Tool
from conftest import set_tool_policy


@pytest.fixture
def echo():
    """An allowed tool that records its calls."""
    calls = []
    tools.register_tool(Tool("echo", "Echo.", {"type": "object", "properties": {}},
                             lambda args: calls.append(args) or f"echoed {args.get('text')}"))
    set_tool_policy("echo", "allow")
    return calls


def test_tool_loop_runs_calls_and_returns_answer(model, endpoint, echo):
    """tool_calls are run in order, their results sent back, and the text answer returned."""
    fake = endpoint(tool_calls(("echo", {"text": "a"}), ("echo", {"text": "b"})), answer_from_tools)
    shown = []
    history = chat.new_history()
    result = model.run_turn(history, "hi", on_tool=lambda name, text: shown.append((name, text)))
    assert result == "Results: echoed a | echoed b"
    assert echo == [{"text": "a"}, {"text": "b"}]
    assert shown == [("echo", "echoed a"), ("echo", "echoed b")]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert history[2]["content"] is None


def test_request_shape(model, endpoint, echo):
    """POST carries model, messages, tools and the bearer key."""
    fake = endpoint(answer("hello"))
    assert model.run_turn(chat.new_history(), "hi") == "hello"
    body, headers = fake.requests[0], fake.headers[0]
    assert body["model"] == "test-model" and body["messages"][-1] == {"role": "user", "content": "hi"}
    assert [t["function"]["name"] for t in body["tools"]] == ["echo"]
    assert headers["Authorization"] == "Bearer sk-test-key"


def test_no_tools_and_no_key_omit_fields(model, endpoint, monkeypatch):
    """With an empty registry `tools` is omitted; with no key there is no Authorization header."""
    fake = endpoint(answer("ok"))
    monkeypatch.delenv("OPENAI_API_KEY")
    model.run_turn(chat.new_history(), "hi")
    assert "tools" not in fake.requests[0] and "Authorization" not in fake.headers[0]


def test_round_limit(model, endpoint, echo, monkeypatch):
    """A model that never stops calling tools is stopped after MAX_ROUNDS with a clear line."""
    monkeypatch.setattr(chat, "MAX_ROUNDS", 3)
    fake = endpoint(*[tool_calls(("echo", {"text": str(i)})) for i in range(3)], answer("next turn"))
    history = chat.new_history()
    assert "stopped after 3 rounds" in model.run_turn(history, "loop")
    assert len(echo) == 3
    assert model.run_turn(history, "again") == "next turn"  # the history is valid for the API


@pytest.mark.parametrize("failure, expected", [
    (HttpError(401, '{"error": {"message": "Incorrect API key"}}'), "HTTP 401 .*Incorrect API key .*OPENAI_API_KEY"),
    (HttpError(404, '{"error": {"message": "model nope not found"}}'), "HTTP 404 .*model nope not found.*OPENAI_MODEL"),
    (HttpError(429, '{"error": {"message": "slow down"}}'), "HTTP 429 .*slow down.*rate limit"),
    (HttpError(503, "<!DOCTYPE html>\n<html><head><title>503 Service\n Unavailable</title></head><body>nginx "
                    "upstream down" + " " * 5000 + "</body></html>"),
     r"HTTP 503 .*: an HTML page \('503 Service Unavailable'\)"),
    (HttpError(502, "<html lang=en><body>bad gateway</body></html>"), r"HTTP 502 .*: an HTML page without a title"),
    (lambda body: "not-a-message", "has no message"),
])
def test_http_and_reply_errors(model, endpoint, failure, expected, monkeypatch):
    """Each failure becomes one ChatError line with the status and the API's message (whole replies);
    an HTML page (a wrong base URL, a proxy) is reduced to its title."""
    model.streaming = False
    monkeypatch.setattr(net, "RETRIES", 0)  # the statuses that are tried again fail at the first answer here
    endpoint(failure)
    with pytest.raises(chat.ChatError, match=expected):
        model.run_turn(chat.new_history(), "hi")


@pytest.fixture
def notices(monkeypatch):
    said = []
    monkeypatch.setattr(model_module, "retry_notice", said.append)
    return said


@pytest.mark.parametrize("streamed", [True, False])
def test_a_503_then_200_answers(model, endpoint, notices, streamed, monkeypatch):
    """A 503 with Retry-After is tried again after what it asks; the answer that follows is the turn's."""
    model.streaming = streamed
    fake = endpoint(HttpError(503, '{"error": {"message": "busy"}}', retry_after="0"), answer("here it is"))
    assert model.run_turn(chat.new_history(), "hi") == "here it is"
    assert len(fake.requests) == 2 and fake.requests[0] == fake.requests[1] and fake.violations == []
    assert len(notices) == 1 and notices[0].startswith("trying again in 0 s (1 of 3): HTTP 503 from ")


def test_hiccups_are_tried_again_with_growing_waits_then_reported(model, endpoint, notices, monkeypatch):
    """429, 502, 504 and a reset connection are each tried again, after 1, 2, 4 times the first wait;
    past RETRIES the last failure is the turn's error."""
    monkeypatch.setattr(net, "RETRY_FIRST_WAIT_S", 0.01)
    fake = endpoint(HttpError(429), HttpError(502), Raw(b""), HttpError(504), answer("unused"))
    with pytest.raises(chat.ChatError, match="HTTP 504"):
        model.run_turn(chat.new_history(), "hi")
    assert len(fake.requests) == 4
    assert [n.split("trying again in ")[1].split(" s")[0] for n in notices] == ["0.01", "0.02", "0.04"]
    assert "RemoteDisconnected" in notices[2]


def test_a_retry_note_shows_the_endpoints_words_made_visible_and_bounded(model, endpoint, notices):
    """An endpoint's message with escape sequences, a newline and a bidi override, 5,000 long: the note
    that goes to the terminal obeys none of them and stays short."""
    hostile = "\x1b[2J\x1b]0;owned\x07\nfake prompt> \u202e" + "x" * 5000
    fake = endpoint(HttpError(503, json.dumps({"error": {"message": hostile}}), retry_after="0"), answer("ok"))
    assert model.run_turn(chat.new_history(), "hi") == "ok" and len(fake.requests) == 2
    (note,) = notices
    assert not any(c in note for c in "\x1b\x07\n\u202e") and "\\x1b[2J" in note and "\\u202e" in note
    assert len(note) <= net.NOTICE_CHARS + 60


def test_a_retry_after_past_the_deadline_fails_at_once(model, endpoint, notices):
    """An endpoint that asks for more time than the request has left is not waited for: the error says what it asked."""
    fake = endpoint(HttpError(429, '{"error": {"message": "quota"}}', retry_after=str(chat.HTTP_TIMEOUT_S + 60)))
    with pytest.raises(chat.ChatError, match=r"HTTP 429 .*quota.*\(it asks to wait \d+ s\)"):
        model.run_turn(chat.new_history(), "hi")
    assert len(fake.requests) == 1 and notices == []


def test_reply_not_json_and_without_choices(monkeypatch):
    """A body that is not JSON, or has no choices, is a ChatError naming the problem."""
    for raw, expected in ((b"<html>", "is not JSON"), (b'{"object": "list"}', "has no choices")):
        with pytest.raises(chat.ChatError, match=expected):
            model_module._message_of("http://x/v1/chat/completions", raw, print, print)


def test_connection_refused_names_url(model, monkeypatch):
    """A closed port is reported with the URL and a hint."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    with pytest.raises(chat.ChatError, match=f"cannot reach http://127.0.0.1:{port}/v1/chat/completions.*refused"):
        model.request(chat.new_history())


def test_timeout(model, endpoint, monkeypatch):
    """A server that never answers fails after HTTP_TIMEOUT_S."""
    monkeypatch.setattr(chat, "HTTP_TIMEOUT_S", 0.5)
    endpoint(Hang(threading.Event()))
    with pytest.raises(chat.ChatError, match="no reply from .* within 0.5 s"):
        model.run_turn(chat.new_history(), "hi")


def test_history_valid_after_error_mid_turn(model, endpoint, echo):
    """A failure after tool calls leaves a history the API accepts; the next turn works."""
    fake = endpoint(tool_calls(("echo", {"text": "x"})), HttpError(400), answer("fine"))
    history = chat.new_history()
    with pytest.raises(chat.ChatError, match="HTTP 400"):
        model.run_turn(history, "first")
    assert check_request({"model": "m", "messages": history}) == []
    assert history[-1]["role"] == "assistant" and "request failed" in history[-1]["content"]
    assert model.run_turn(history, "second") == "fine"
    assert fake.requests[-1]["messages"][1]["content"] == "first"  # nothing the user said is lost


def test_interrupt_during_tools_answers_every_call(model, endpoint):
    """Ctrl-C (it reaches the main thread) while a reply's calls run on their threads: every call still gets a
    tool message, the turn is closed; each call's wait ends as its Ctrl-C would end it."""
    import _thread
    from beyond.waits import cancelled
    from conftest import wait_until

    def interrupt(args):
        _thread.interrupt_main()
        if not wait_until(cancelled, 30):
            raise AssertionError("the call was not cancelled")
        raise KeyboardInterrupt
    tools.register_tool(Tool("slow", "", {"type": "object"}, interrupt))
    set_tool_policy("slow", "allow")
    endpoint(tool_calls(("slow", {}), ("slow", {})))
    history = chat.new_history()
    with pytest.raises(KeyboardInterrupt):
        model.run_turn(history, "go")
    assert check_request({"model": "m", "messages": history}) == []
    assert [m["content"] for m in history if m["role"] == "tool"] == ["(cancelled by the user)"] * 2


def test_dotenv_parsing(tmp_path, monkeypatch):
    """KEY=VALUE, comments, quotes and export are understood; the environment wins."""
    (tmp_path / ".env").write_text(
        "# a comment\nexport A_ONE=1\nA_TWO=\"two words\"\nA_THREE='x # y'\nA_FOUR=plain # note\n"
        "not a pair\nA_SET=from-file\n")
    for name in ("A_ONE", "A_TWO", "A_THREE", "A_FOUR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("A_SET", "from-env")
    dotenv.load_dotenv(str(tmp_path / ".env"))
    import os
    assert [os.environ[k] for k in ("A_ONE", "A_TWO", "A_THREE", "A_FOUR", "A_SET")] == \
        ["1", "two words", "x # y", "plain", "from-env"]
    for name in ("A_ONE", "A_TWO", "A_THREE", "A_FOUR"):
        monkeypatch.delenv(name)


def test_missing_key_hint_only_for_default_endpoint(monkeypatch):
    """No key and the default URL: a hint; a local base URL needs no key."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert "OPENAI_API_KEY" in missing_key_hint()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert missing_key_hint() is None


def test_the_calls_of_one_reply_that_ask_nobody_run_at_once(tmp_path):
    """One reply calls a tool that answers only once the other is called (the Python SDK's parallel_calls):
    both are allowed, so they run at once and both answer, in the model's order, within one timeout; a call
    that asks is asked, and its result takes its place in that order."""
    from conftest import agent_env, fake, run_agent, workdir
    from fakes.openai_server import FakeOpenAI
    named = fake("named", '["wait_for_pair", "echo", "pair"]', timeout=5)
    cwd = workdir(tmp_path, {"fake": named}, {"mcp_fake_wait_for_pair": "allow", "mcp_fake_pair": "allow"})
    script = [tool_calls(("mcp_fake_wait_for_pair", {}), ("mcp_fake_echo", {"text": "asked"}), ("mcp_fake_pair", {})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["go", "y", "/exit"], agent_env(model.base_url))
    assert "Results: paired | asked | pair" in done.stdout, done.stdout
    assert done.stdout.count("Allow?") == 1


def test_ctrl_c_cancels_the_calls_of_a_reply_that_run_at_once(started, remote, tmp_path):
    """Ctrl-C (it reaches the main thread only) while three calls of one reply wait on threads of their own: on
    a stdio server, over HTTP, and a task: each server is told its call was cancelled (the task by tasks/cancel),
    and the turn's KeyboardInterrupt comes once the calls have ended."""
    import _thread
    from conftest import FAKES, fake, wait_until
    log = tmp_path / "tasks.jsonl"

    def received(method: str) -> bool:  # what the tasks server logged (a line may be half written yet)
        return log.exists() and f'"method": "{method}"' in log.read_text()
    stdio = started(fake("named", '["hang", "cancellations"]', timeout=60))
    server, http = remote("hang", timeout=60)
    tasks = started({"command": sys.executable, "args": [str(FAKES / "tasks_server.py")], "protocol": "2026-07-28",
                     "env": {"TASKS_LOG": str(log)}})
    calls = {"stdio": lambda: stdio.call_tool("hang", {}), "http": lambda: http.call_tool("echo", {"text": "x"}),
             "task": lambda: tasks.call_tool("forever", {})}
    running, ended = [], []

    def run_tool(name: str, arguments: str) -> str:
        running.append(name)
        try:
            return calls[name]()
        finally:
            ended.append(name)

    def ctrl_c_once_all_run() -> None:
        seen.append(server.wait_for(lambda: any(m.get("method") == "tools/call" for _, m in server.posts), 30))
        seen.append(wait_until(lambda: received("tools/call") and len(running) == 3, 30))
        if all(seen):
            _thread.interrupt_main()
    seen = []  # whether each call was seen running, before the Ctrl-C
    class Unasked:  # the agent's Calls for tools that ask nobody: each call's run, prepared at once
        def prepare(self, name: str, arguments: str):
            return lambda: run_tool(name, arguments)
    chat_ = model_module.ModelChat(calls=Unasked())
    threading.Thread(target=ctrl_c_once_all_run, daemon=True).start()
    default = signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell may start the tests ignoring it
    try:
        with pytest.raises(KeyboardInterrupt):
            chat_.run_calls([{"id": f"c{i}", "function": {"name": name, "arguments": "{}"}}
                             for i, name in enumerate(calls)], lambda name, result: None)
    finally:
        signal.signal(signal.SIGINT, default)
    assert seen == [True, True] and sorted(ended) == ["http", "stdio", "task"], (seen, running, ended)
    assert server.wait_for(lambda: server.cancelled, 10), "the HTTP server was not told"
    assert server.cancelled[0]["reason"] == "cancelled by the user"
    told = json.loads(stdio.call_tool("cancellations", {}))
    assert [c["reason"] for c in told] == ["cancelled by the user"]
    assert wait_until(lambda: received("tasks/cancel")), "the task was not cancelled"
