"""The full agent's model client's limits (beyond/model/client.py): a deadline for the whole exchange, a size
limit, broken HTTP as one line, odd messages stored as the API wants them, no redirect followed with the key."""
import threading

import pytest

import chat
import tools
from beyond.model import client as model_module
from conftest import set_tool_policy, unhung
from fakes.openai_server import FakeOpenAI, answer


def test_trickling_chat_reply_ends_at_the_deadline(model, endpoint, monkeypatch):
    """An endpoint that sends one byte every 0.1 s forever: ChatError once the 1 s deadline passes."""
    from fakes.openai_server import Trickle
    monkeypatch.setattr(chat, "HTTP_TIMEOUT_S", 1.0)
    endpoint(Trickle(threading.Event()))
    with pytest.raises(chat.ChatError, match="no reply from .* within 1 s"):  # a per-read timeout: never
        unhung(model.request, chat.new_history())


def test_oversized_chat_reply_is_refused(model, endpoint, monkeypatch):
    """A reply over the limit (1 MB here) is a ChatError naming the limit, not memory."""
    from fakes.openai_server import answer
    monkeypatch.setattr(model_module, "MAX_REPLY_BYTES", 1 << 20)
    endpoint(answer("w" * 2_000_000))
    with pytest.raises(chat.ChatError, match="over the 1 MB limit"):
        model.request(chat.new_history())


@pytest.mark.parametrize("raw, expected", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut", "IncompleteRead"),
    (b"NOT HTTP AT ALL\r\n\r\n", "BadStatusLine"),
    (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", "LineTooLong"),
    (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n", "got more than 100 headers"),
])
def test_broken_http_is_one_clear_chat_error(model, endpoint, raw, expected):
    """A reply cut short, a bad status line, a 70 KB header line, 120 headers: each one ChatError line."""
    from fakes.openai_server import Raw
    endpoint(Raw(raw))
    with pytest.raises(chat.ChatError) as caught:
        model.request(chat.new_history())
    assert expected in str(caught.value) and "check OPENAI_BASE_URL" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_odd_model_messages_are_stored_as_the_api_wants_them(model, endpoint, monkeypatch):
    """Arguments as an object, a reused id, a missing id (a whole reply): stored normalised;
    the next request is valid."""
    model.streaming = False
    from fakes.openai_server import answer, check_request
    tools.register_tool(tools.Tool("echo", "", {"type": "object"}, lambda args: f"echo {args.get('n')}"))
    set_tool_policy("echo", "allow")
    odd = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "same", "type": "function", "function": {"name": "echo", "arguments": {"n": 1}}},
        {"id": "same", "type": "function", "function": {"name": "echo", "arguments": '{"n": 2}'}},
        {"type": "function", "function": {"name": "echo", "arguments": None}}]}
    fake_model = endpoint(odd, answer("done"))
    history = chat.new_history()
    assert model.run_turn(history, "go") == "done"
    assert fake_model.violations == [] and check_request({"model": "m", "messages": history}) == []
    calls = history[2]["tool_calls"]
    assert len({c["id"] for c in calls}) == 3 and calls[0]["function"]["arguments"] == '{"n": 1}'
    assert [m["content"] for m in history if m["role"] == "tool"] == ["echo 1", "echo 2", "echo None"]


def test_any_failure_inside_a_turn_closes_it(model, endpoint):
    """An error raised while showing a tool result (not a ChatError): the turn is closed and the next one works."""
    from fakes.openai_server import answer, check_request, tool_calls
    tools.register_tool(tools.Tool("echo", "", {"type": "object"}, lambda args: "x"))
    set_tool_policy("echo", "allow")
    endpoint(tool_calls(("echo", {}), ("echo", {})), answer("next"))
    history = chat.new_history()

    def broken_terminal(name, result):
        raise UnicodeEncodeError("ascii", "\udc80", 0, 1, "a lone surrogate")
    with pytest.raises(UnicodeEncodeError):
        model.run_turn(history, "first", on_tool=broken_terminal)
    assert check_request({"model": "m", "messages": history}) == []
    assert model.run_turn(history, "second") == "next"


def test_redirect_is_not_followed_with_the_key(model, monkeypatch):
    """A 302 to another host is refused, naming both URLs; the other host never sees the key."""
    from fakes.openai_server import Raw
    with FakeOpenAI([answer("never")]) as elsewhere:
        target = f"{elsewhere.base_url}/chat/completions"
        redirect = Raw(f"HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode())
        with FakeOpenAI([redirect]) as endpoint:
            monkeypatch.setenv("OPENAI_BASE_URL", endpoint.base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-forward")
            with pytest.raises(chat.ChatError) as caught:
                model.request(chat.new_history())
        assert elsewhere.requests == []
    assert endpoint.base_url in str(caught.value) and target in str(caught.value)
