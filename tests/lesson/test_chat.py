"""The lesson's chat.py (chat.ts): one urllib request per round, the tool loop through the registry, a
failed request as one ChatError line. The full agent's model client is tested in tests/model/test_model*.py."""
import socket

import pytest

import chat
import tools
from fakes.openai_server import HttpError, answer, answer_from_tools, tool_calls
from conftest import set_tool_policy


@pytest.fixture
def echo():
    calls = []
    tools.register_tool(tools.Tool("echo", "Echo.", {"type": "object", "properties": {}},
                                   lambda args: calls.append(args) or f"echoed {args.get('text')}"))
    set_tool_policy("echo", "allow")
    return calls


def test_the_loop_runs_each_call_through_the_registry_and_returns_the_answer(endpoint, echo):
    """tool_calls run in order, their results go back as tool messages, the text answer is returned."""
    fake = endpoint(tool_calls(("echo", {"text": "a"}), ("echo", {"text": "b"})), answer_from_tools)
    shown, history = [], chat.new_history()
    result = chat.Chat().run_turn(history, "hi", on_tool=lambda name, text: shown.append((name, text)))
    assert result == "Results: echoed a | echoed b" and echo == [{"text": "a"}, {"text": "b"}]
    assert shown == [("echo", "echoed a"), ("echo", "echoed b")]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert "stream" not in fake.requests[0]  # one JSON answer a round: no streaming in the lesson


def test_a_request_carries_the_model_the_messages_the_tools_and_the_key(endpoint, echo):
    fake = endpoint(answer("hello"))
    assert chat.Chat().run_turn(chat.new_history(), "hi") == "hello"
    body, headers = fake.requests[0], fake.headers[0]
    assert body["model"] == "test-model" and body["messages"][-1] == {"role": "user", "content": "hi"}
    assert [t["function"]["name"] for t in body["tools"]] == ["echo"]
    assert headers["Authorization"] == "Bearer sk-test-key"


def test_a_model_that_never_stops_calling_tools_is_stopped(endpoint, echo, monkeypatch):
    monkeypatch.setattr(chat, "MAX_ROUNDS", 3)
    endpoint(*[tool_calls(("echo", {"text": str(i)})) for i in range(3)])
    stopped = "(stopped after 3 rounds of tool calls without an answer)"
    assert chat.Chat().run_turn(chat.new_history(), "loop") == stopped
    assert len(echo) == 3


def test_a_failed_request_is_one_line_naming_the_status_or_the_url(endpoint, monkeypatch):
    endpoint(HttpError(404, '{"error": {"message": "model nope not found"}}'))
    with pytest.raises(chat.ChatError, match=r"HTTP 404 from http://127\.0\.0\.1:\d+/v1/chat/completions: .*nope"):
        chat.Chat().run_turn(chat.new_history(), "hi")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    with pytest.raises(chat.ChatError, match=f"cannot reach http://127.0.0.1:{port}/v1/chat/completions"):
        chat.Chat().complete(chat.new_history())


def test_the_lesson_imports_no_http_client_of_its_own():
    """chat.py speaks urllib.request; http.client and sockets are the product's (beyond/net.py)."""
    source = open(chat.__file__).read()
    assert "import urllib.request" in source and "http.client" not in source and "import socket" not in source
