"""The streams of Streamable HTTP (beyond/wire/stream.py): an answer's stream resumed or failed, the GET
stream of what a server sends unasked, reopened from its last event, ever more slowly, one per session."""
import threading

import pytest

from beyond.wire import stream
from conftest import unhung, wait_until
from mcp import McpError


def test_an_answer_stream_that_ends_early_is_resumed_from_its_last_event(remote):
    """The server ends its SSE answer after a priming event (id ev-1, retry 50 ms): the client comes back
    with GET and Last-Event-ID and gets the reply there."""
    server, client = remote("resume")
    assert client.call_tool("echo", {"text": "later"}) == "later (resumed)"
    assert [h.get("last-event-id") for _, h in server.gets if h.get("last-event-id")] == ["ev-1"]


def test_an_answer_stream_whose_connection_breaks_is_resumed_from_its_last_event(remote):
    """The connection breaks in the middle of the answer (fewer bytes than announced): GET with
    Last-Event-ID ev-1 after the server's retry, as for a stream the server ended."""
    server, client = remote("cut")
    assert client.call_tool("echo", {"text": "broken"}) == "broken (resumed)"
    assert [h.get("last-event-id") for _, h in server.gets if h.get("last-event-id")] == ["ev-1"]


def test_in_2026_07_28_a_broken_answer_is_sent_again_as_a_new_request(remote):
    """That revision removed resumption: no GET, the same call once more with a new id."""
    server, client = remote("modern_cut", protocol="2026-07-28")
    assert client.call_tool("echo", {"text": "anew"}) == "anew"
    calls = [m for _, m in server.posts if m.get("method") == "tools/call"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"] and server.gets == []


def test_a_stream_that_trickles_after_its_reply_is_left_at_once_by_the_clock(remote):
    """After the reply the server writes a comment every 50 ms for up to a minute: each call returns with
    its answer while the server still trickles, its connection closed by the client, never waited on."""
    server, client = remote("tail_trickle", timeout=120)
    assert [unhung(client.call_tool, "echo", {"text": "x"}) for _ in range(3)] == ["answered"] * 3
    assert wait_until(lambda: server.hung_up == 3)
    assert not server.release.is_set()


def test_an_answer_stream_without_event_ids_that_ends_early_fails_the_call(remote):
    server, client = remote("resume_without_ids")
    with pytest.raises(McpError, match="the server ended its answer without a reply"):
        client.call_tool("echo", {"text": "lost"})
    assert not [h for _, h in server.gets if h.get("last-event-id")]


def test_priming_events_are_skipped_silently(remote, capfd):
    """Every event comes after an id-only priming event; nothing is reported for them."""
    server, client = remote("sse")
    assert client.call_tool("echo", {"text": "streamed"}).startswith("streamed")
    assert "not JSON" not in capfd.readouterr().err


def listening() -> bool:
    """Whether a GET stream's thread is running (in this test process)."""
    return any(t.name.endswith("-listen") for t in threading.enumerate())


def test_get_stream_brings_what_the_server_sends_unasked(remote):
    """After the handshake a GET stream opens (start-up waits for it, so nothing said right after is
    lost); its log line, ping and tool-list change are handled as on stdio; stop() closes it before DELETE."""
    server, client = remote("push")
    assert server.streams_opened == 1
    headers = server.gets[0][1]
    assert headers["accept"] == "text/event-stream" and headers["mcp-session-id"] in server.sessions
    assert headers["mcp-protocol-version"] == "2025-11-25" and "last-event-id" not in headers
    server.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "from afar"}})
    server.push({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
    server.tools.append({"name": "late", "description": "Added at run time."})
    server.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    assert server.wait_for(lambda: server.client_replies.get("srv-1", {}).get("result") == {})
    assert wait_until(lambda: [t["name"] for t in client.tools] == ["echo", "late"])
    assert client.call_tool("late", {"text": "callable"}) == "callable"
    assert "info: from afar" in client.from_server.tail
    client.stop()
    assert server.wait_for(lambda: server.streams_closed_by_client == 1) and len(server.deletes) == 1
    assert wait_until(lambda: not listening())


def test_dropped_stream_is_reopened_once_from_the_last_event(remote, monkeypatch, capfd):
    """A stream the server ends is opened again with Last-Event-ID (never an id that would forge a header);
    when that reopening fails, no more tries."""
    monkeypatch.setattr(stream, "REOPEN_INTERVAL_S", 0.05)
    server, client = remote("push")
    assert server.wait_for(lambda: server.streams_opened == 1)
    server.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "first"}}, event_id="ev-7")
    server.push({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "second"}},
                event_id="evil\x00X-Injected: 1")  # a CR or LF ends the line; a NUL would cut the header: not kept
    server.drop()
    assert server.wait_for(lambda: server.streams_opened == 2)
    assert server.gets[1][1]["last-event-id"] == "ev-7" and "x-injected" not in server.gets[1][1]
    server.get_status = 500
    server.drop()
    assert wait_until(lambda: not listening())
    assert len(server.gets) == 3
    assert "no stream of server messages until the next session: GET to" in capfd.readouterr().err
    assert client.call_tool("echo", {"text": "still fine"}) == "still fine"


def test_a_stream_that_ends_at_once_is_reopened_ever_more_slowly(remote, monkeypatch):
    """A server that ends every stream at once, bringing nothing, sees the pause before each reopening double."""
    monkeypatch.setattr(stream, "REOPEN_INTERVAL_S", 0.05)
    server, client = remote("push")
    assert server.wait_for(lambda: server.streams_opened == 1)
    server.close_streams_at_once = True
    server.drop()
    assert server.wait_for(lambda: len(server.gets) >= 4)
    times = [t for t, _ in server.gets]
    gaps = [later - earlier for earlier, later in zip(times[1:], times[2:])]
    assert all(gap >= 0.05 * 2 ** (i + 2) for i, gap in enumerate(gaps[:2])), gaps  # 0.2 s, then 0.4 s


def test_a_new_session_gets_a_new_stream(remote):
    """After the server forgot the session, the renewed one opens its own stream and the old one is closed."""
    server, client = remote("push")
    assert server.wait_for(lambda: server.streams_opened == 1)
    old = server.gets[0][1]["mcp-session-id"]
    server.sessions.clear()
    assert client.call_tool("echo", {"text": "again"}) == "again"
    assert server.wait_for(lambda: server.streams_opened == 2 and server.streams_closed_by_client == 1)
    assert server.gets[-1][1]["mcp-session-id"] not in (old, None)


def test_no_stream_is_fine(remote, capfd):
    """A server answering the GET with 405 has no stream: nothing is reported, nothing keeps running."""
    server, client = remote("json")
    assert server.wait_for(lambda: len(server.gets) == 1)
    assert wait_until(lambda: not listening())
    assert client.call_tool("echo", {"text": "x"}) == "x"
    assert "stream" not in capfd.readouterr().err
