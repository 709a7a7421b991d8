"""The Streamable HTTP transport against a scripted server on 127.0.0.1, and end to end."""
import json
import re

import pytest

import beyond_mcp
from beyond_mcp import McpClient
from conftest import agent_env, connect, demo, echo_from_threads, run_agent, unhung, workdir
from fakes.http_server import FakeHttpMcp
from fakes.openai_server import answer_from_tools, FakeOpenAI, tool_calls
from mcp import McpError


def test_json_answers_and_session_headers(remote):
    """Handshake, list and call over JSON bodies; later requests carry the session and protocol version."""
    server, client = remote("json")
    assert [t["name"] for t in client.tools] == ["echo"]
    assert client.call_tool("echo", {"text": "over http"}) == "over http"
    (init_headers, init), *later = server.posts
    assert init["method"] == "initialize" and "mcp-session-id" not in init_headers
    assert "application/json" in init_headers["accept"] and "text/event-stream" in init_headers["accept"]
    session = later[0][0]["mcp-session-id"]
    assert all(h["mcp-session-id"] == session and h["mcp-protocol-version"] == "2025-11-25" for h, _ in later)
    assert [m.get("method") for _, m in later] == ["notifications/initialized", "tools/list", "tools/call"]


def test_sse_stream_with_progress_and_ping(remote):
    """An event stream's ping is answered by POST before the result arrives on the same stream."""
    server, client = remote("sse")
    assert client.call_tool("echo", {"text": "streamed"}) == "streamed (ping answered: True)"
    assert server.client_replies["ping-3"]["result"] == {}


def test_expired_session_is_renewed_once(remote, capfd):
    """A 404 for a known session means it expired: initialize again, then the call goes through."""
    server, client = remote("expire")
    assert client.call_tool("echo", {"text": "again"}) == "again"
    assert [m.get("method") for _, m in server.posts].count("initialize") == 2
    assert "the session expired; initializing again" in capfd.readouterr().err


def test_a_session_forgotten_under_many_callers_is_renewed_by_one(remote):
    """The server forgets every session (a restart); 8 calls at once find it so: one new initialize serves them all."""
    server, client = remote("json")
    server.sessions.clear()
    assert echo_from_threads(client) == {i: str(i) for i in range(8)}
    assert [m.get("method") for _, m in server.posts].count("initialize") == 2


def test_unauthorized_is_clear_and_headers_expand(monkeypatch):
    """401 carries the server's message; ${VAR} in headers supplies the token."""
    with FakeHttpMcp("unauthorized") as server:
        with pytest.raises(McpError,
                           match=r"initialize to .* failed: HTTP 401: invalid token \(check the entry's headers\)"):
            McpClient("remote", {"url": server.url, "headers": {"Authorization": "Bearer wrong"}}).start()
        monkeypatch.setenv("REMOTE_TOKEN", "good-token")
        client = McpClient("remote", {"url": server.url, "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}})
        client.start()
        assert client.call_tool("echo", {"text": "authorized"}) == "authorized"
        client.stop()


def test_silent_server_times_out_and_is_cancelled(remote):
    """A call the server never answers fails at the timeout and is cancelled by notification."""
    server, client = remote("hang", timeout=0.5)
    with pytest.raises(McpError, match="no reply to tools/call within 0.5 s"):
        unhung(client.call_tool, "echo", {"text": "x"})
    assert server.wait_for(lambda: server.cancelled)
    (call,) = [m for _, m in server.posts if m.get("method") == "tools/call"]
    assert server.cancelled[0]["requestId"] == call["id"]


def test_server_error_names_url_and_status(remote):
    """A 5xx becomes McpError with the URL, the status and the body; the next call still works."""
    server, client = remote("error500")
    with pytest.raises(McpError, match=f"tools/call to {re.escape(server.url)} failed: HTTP 500: upstream exploded"):
        client.call_tool("echo", {"text": "x"})
    server.mode = "json"
    assert client.call_tool("echo", {"text": "recovered"}) == "recovered"


def test_failing_remote_does_not_affect_others(tmp_path, servers):
    """A remote server refusing us is one status line; the stdio server beside it works."""
    with FakeHttpMcp("unauthorized") as server:
        path = tmp_path / "mcp.json"
        path.write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}, "demo": demo()}}))
        statuses = {s.server: s for s in servers.connect_mcp_servers(str(path))}
    assert "HTTP 401: invalid token" in statuses["remote"].error
    assert "needs login: /mcp login remote" in statuses["remote"].error  # never opened unasked
    assert statuses["demo"].error is None and len(statuses["demo"].tools) == 2
    for command in (servers.login, servers.logout):  # a stdio server has no login; neither has a stranger
        for name in ("demo", "stranger"):
            with pytest.raises(McpError, match=f"no remote server named {name} in the folder's .geekagent/mcp.json "
                                               "or your own mcp.json"):
                command(name)


def test_connection_refused_names_url():
    """A URL where nothing listens fails start() with the URL."""
    with FakeHttpMcp() as server:
        url = server.url
    with pytest.raises(McpError, match=f"initialize to {re.escape(url)} failed: .*refused"):
        McpClient("remote", {"url": url}).start()


def test_stop_deletes_the_session(remote):
    """stop() ends the session with DELETE."""
    server, client = remote("json")
    session = server.posts[-1][0]["mcp-session-id"]
    client.stop()
    assert server.deletes == [session]


def test_concurrent_calls(remote):
    """Calls from 8 threads at once each get their own answer."""
    server, client = remote("json")
    assert echo_from_threads(client) == {i: str(i) for i in range(8)}


@pytest.mark.parametrize("entry, problem", [
    ({"url": "http://example.com/mcp"}, "plain http to example.com would send everything unencrypted"),
    ({"url": "ftp://127.0.0.1/mcp"}, "must start with http:// or https://"),
    ({"url": "http://127.0.0.1:9/sse", "type": "sse"}, "old HTTP\\+SSE transport"),
])
def test_refused_urls(entry, problem):
    """Only http(s); plain http only to this machine; the old SSE transport is named."""
    with pytest.raises(McpError, match=problem):
        McpClient("remote", entry).start()


def test_end_to_end_beside_stdio(tmp_path):
    """The full agent with a remote and a stdio server: the model calls a tool of each."""
    with FakeHttpMcp("sse") as remote_server:
        cwd = workdir(tmp_path, {"demo": demo(), "remote": {"type": "http", "url": remote_server.url}},
                      {"mcp_demo_word_count": "allow", "mcp_remote_echo": "allow"})
        script = [tool_calls(("mcp_remote_echo", {"text": "from afar"}),
                             ("mcp_demo_word_count", {"text": "a b c"})), answer_from_tools]
        with FakeOpenAI(script) as model:
            done = run_agent(cwd, ["use both", "/mcp", "/exit"], agent_env(model.base_url))
    assert model.violations == []
    assert "Results: from afar (ping answered: True) | 5 characters, 3 words" in done.stdout
    assert "remote (1 tool)\n  mcp_remote_echo\n" in done.stdout


def test_session_forgotten_with_a_400_is_renewed(remote):
    """A 400 saying "No valid session ID provided" (server-everything after a restart) renews the session once."""
    server, client = remote("expire400")
    assert client.call_tool("echo", {"text": "again"}) == "again"
    assert [m.get("method") for _, m in server.posts].count("initialize") == 2


def test_html_error_is_one_line_with_a_hosts_hint():
    """An HTML 403 page becomes its title on one line, with a hint about allowed hosts, not headers."""
    with FakeHttpMcp("html403") as server:
        with pytest.raises(McpError) as caught:
            McpClient("remote", {"url": server.url}).start()
    message = str(caught.value)
    assert "HTTP 403: Forbidden (403 Forbidden: Access is only allowed at localhost)" in message
    assert "<" not in message and "\n" not in message and "localhost" in message and "headers)" in message


def test_old_sse_url_gets_a_hint():
    """A url ending in /sse that fails points at the old HTTP+SSE transport."""
    with pytest.raises(McpError, match="looks like the old HTTP\\+SSE transport"):
        McpClient("remote", {"url": "http://127.0.0.1:9/sse"}).start()


def test_calls_reuse_a_kept_alive_connection(remote):
    """100 sequential calls take one connection, not one each; one the server closed while it was idle
    costs the next call nothing (it is dropped, or given up before the request went out whole)."""
    server, client = remote("json")
    before = server.connections
    assert [client.call_tool("echo", {"text": str(i)}) for i in range(100)] == [str(i) for i in range(100)]
    assert server.connections - before <= 1
    server.close_after_answer = True
    ended = server.connections_ended
    assert client.call_tool("echo", {"text": "then closed"}) == "then closed"
    assert server.wait_for(lambda: server.connections_ended > ended)  # closed by the server, unannounced
    server.close_after_answer = False
    assert client.call_tool("echo", {"text": "on a new one"}) == "on a new one"


def test_an_idle_connection_the_server_closed_is_not_taken():
    """The pool gives back an idle connection only while the server keeps it open; one the server has
    closed (its end readable: EOF) is dropped, so no request is sent on it."""
    import socket
    from beyond.net import ConnectionPool

    class Connection:  # what the pool uses of an http.client connection
        def __init__(self, sock):
            self.sock, self.closed = sock, False

        def close(self):
            self.closed = True
            self.sock.close()

    class Answer:  # an answer read to its end, on a connection the server keeps open
        will_close, length = False, 0

        def isclosed(self):
            return True
    pool = ConnectionPool(2)
    (open_end, server_a), (closed_end, server_b) = socket.socketpair(), socket.socketpair()
    server_b.close()  # the server ends this one while it is idle
    kept_open, kept_closed = Connection(open_end), Connection(closed_end)
    assert pool.keep(kept_open, Answer()) and pool.keep(kept_closed, Answer())
    assert pool.take(1.0) is kept_open and kept_closed.closed  # the closed one was dropped on the way
    assert pool.take(1.0) is None
    pool.close()
    server_a.close()
    kept_open.close()


def test_trickling_remote_answer_ends_at_the_deadline():
    """A remote MCP server that trickles an event stream without a newline: the call fails at its timeout."""
    from fakes.http_server import FakeHttpMcp
    with FakeHttpMcp("trickle") as server:
        client = beyond_mcp.McpClient("remote", {"url": server.url, "timeout": 1})
        client.start()
        with pytest.raises(McpError, match="no reply to tools/call within 1 s"):  # a per-read timeout: never
            unhung(client.call_tool, "echo", {"text": "x"})
        client.stop()


def test_url_credentials_are_sent_as_basic_and_never_shown(tmp_path):
    """user:password@ in a remote URL becomes an Authorization header and is masked in every message."""
    from fakes.http_server import FakeHttpMcp
    with FakeHttpMcp("unauthorized") as server:
        good = server.url.replace("http://", "http://agent:good-pw@")
        status = connect(tmp_path, {"r": {"url": good}})["r"]
        assert status.error is None and status.tools == ["mcp_r_echo"]
        beyond_mcp.stop_mcp_servers()
        bad = connect(tmp_path, {"r": {"url": server.url.replace("http://", "http://agent:wrong-pw@")}})["r"]
    assert "HTTP 401" in bad.error and "wrong-pw" not in bad.error and "[REDACTED]" in bad.error
