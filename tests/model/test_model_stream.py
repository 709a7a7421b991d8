"""Streamed replies: text shown as it arrives, tool calls assembled from deltas, real endpoints' quirks."""
import pytest

import chat
import tools
from fakes.openai_server import QUIRKS, answer, answer_from_tools, check_request, tool_calls
from conftest import set_tool_policy


@pytest.fixture
def echo():
    tools.register_tool(tools.Tool("echo", "Echo.", {"type": "object"}, lambda args: f"echo {args.get('text')}"))
    set_tool_policy("echo", "allow")


def test_text_arrives_in_pieces_and_usage_is_reported(model, endpoint):
    """The answer comes as several pieces (cut at odd places on the wire) that join to the whole."""
    fake = endpoint(answer("Model Context Protocol, streamed."))
    pieces, usage = [], []
    result = model.run_turn(chat.new_history(), "hi", on_text=pieces.append, on_usage=usage.append)
    assert result == "".join(pieces) == "Model Context Protocol, streamed." and len(pieces) > 3
    assert usage == [{"prompt_tokens": 1234, "completion_tokens": 56}]
    assert fake.requests[0]["stream"] is True and fake.requests[0]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("quirk", sorted(QUIRKS - {"refuse_stream"}) + ["none"])
def test_tool_calls_assembled_whatever_the_endpoint_does(model, endpoint, echo, quirk):
    """Two tool calls with arguments in fragments are run with the right arguments, under every quirk."""
    script = [tool_calls(("echo", {"text": "first call"}), ("echo", {"text": "second"})), answer_from_tools]
    fake = endpoint(*script, quirks={quirk} - {"none"})
    history = chat.new_history()
    assert model.run_turn(history, "go") == "Results: echo first call | echo second"
    assert check_request({"model": "m", "messages": history}) == []
    assert [c["function"]["arguments"] for c in history[2]["tool_calls"]] == [
        '{"text": "first call"}', '{"text": "second"}']


def test_new_id_at_an_index_in_use_is_a_new_call():
    """An endpoint that sends every call at index 0 but with its own id: two calls, not one."""
    from beyond.model.reply import StreamedReply
    reply = StreamedReply()
    for delta in ({"index": 0, "id": "a", "function": {"name": "echo", "arguments": '{"text"'}},
                  {"index": 0, "function": {"arguments": ': "x"}'}},
                  {"index": 0, "id": "b", "function": {"name": "echo", "arguments": "{}"}}):
        reply.add({"choices": [{"delta": {"tool_calls": [delta]}}]})
    calls = reply.message()["tool_calls"]
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [("a", '{"text": "x"}'), ("b", "{}")]


def test_endpoint_that_refuses_streaming_gets_whole_requests(model, endpoint, capfd):
    """A 400 naming "stream": the request is sent again whole, and so is every later one."""
    fake = endpoint(answer("first"), answer("second"), quirks={"refuse_stream"})
    pieces = []
    history = chat.new_history()
    assert model.run_turn(history, "one", on_text=pieces.append) == "first" and pieces == ["first"]
    assert model.run_turn(history, "two") == "second"
    assert [r.get("stream", False) for r in fake.requests] == [True, False, False]
    assert "does not stream" in capfd.readouterr().err


def test_ctrl_c_during_the_stream_keeps_what_arrived(model, endpoint):
    """Ctrl-C while the text streams in: the text so far stays as the assistant's message; the history is valid."""
    endpoint(answer("a long answer that is interrupted"), answer("next"))
    history = chat.new_history()

    def interrupt(text):
        if len("".join(seen)) > 6:
            raise KeyboardInterrupt
        seen.append(text)
    seen = []
    with pytest.raises(KeyboardInterrupt):
        model.run_turn(history, "first", on_text=interrupt)
    kept = history[-1]["content"]  # what arrived, the piece being shown when Ctrl-C came included
    assert history[-1]["role"] == "assistant" and kept.startswith("".join(seen)) and len(kept) > len("".join(seen))
    assert "a long answer that is interrupted".startswith(kept)
    assert check_request({"model": "m", "messages": history}) == []
    assert model.run_turn(history, "second") == "next"


class Pieces:
    """A response that gives its bytes a few at a time, as a slow network does."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size = data, size

    def read1(self, limit: int) -> bytes:
        piece, self.data = self.data[:self.size], self.data[self.size:]
        return piece


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
def test_events_end_lines_with_cr_lf_or_crlf_and_drop_a_bom(size):
    """The SSE format's three line ends, mixed and cut anywhere, and a leading BOM: the same events."""
    from beyond import sse
    stream = b"\xef\xbb\xbfid: 1\rdata: one\r\rdata: two\r\ndata: lines\r\n\r\n: comment\ndata: three\n\nid: 4\r\n\r\n"
    ids = []
    assert list(sse.events(Pieces(stream, size), 1 << 20, ids.append)) == ["one", "two\nlines", "three"]
    assert ids == ["1", "4"]
