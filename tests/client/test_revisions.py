"""MCP 2026-07-28 (no handshake) beside the earlier revisions: "protocol" legacy, "2026-07-28" and "auto"."""
import base64
import json
import time

import pytest

from beyond.client import revisions
from beyond.client.skill_entries import SKILLS
from beyond.client.tasks import TASKS
from beyond.client.schema import mirrored
from conftest import agent_env, fake, run_agent, wait_until, workdir
from fakes.http_server import FakeHttpMcp
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls
from mcp import McpError

META = "io.modelcontextprotocol/"


def seen(client) -> list[dict]:
    """The requests the fake server received, in order (it keeps them)."""
    return json.loads(client.call_tool("requests_seen", {}))


def test_modern_server_without_handshake(started):
    """"protocol": "2026-07-28": server/discover, then requests that each carry version, capabilities and identity."""
    client = started(fake("modern", protocol="2026-07-28"))
    assert client.revision == "2026-07-28" and "resources" in client.capabilities
    assert client.call_tool("echo", {"text": "stateless"}, on_progress=print) == "stateless"
    assert client.read_resource("demo://notes/today") == "Buy milk. Call Ada."
    assert client.get_prompt("review", {"code": "x"})[0]["text"] == "Review this code for anything: x"
    requests = seen(client)
    assert [r["method"] for r in requests][:2] == ["server/discover", "tools/list"]
    assert "initialize" not in [r["method"] for r in requests]
    for request in requests:
        meta = request["params"]["_meta"]
        assert meta[f"{META}protocolVersion"] == "2026-07-28"
        assert meta[f"{META}clientCapabilities"] == {**client.asks.capabilities(),
                                                     "extensions": {SKILLS: {}, TASKS: {}}}
        assert meta[f"{META}clientInfo"]["name"] == "geekagent-day15-python"
    call = next(r for r in requests if r["method"] == "tools/call")
    assert "progressToken" in call["params"]["_meta"]  # the call's own _meta stays


def test_modern_only_against_a_handshake_server_says_what_to_set(started):
    """A server of earlier revisions answers server/discover with an error: the message says which setting helps."""
    with pytest.raises(McpError, match=r'server/discover failed: .*set "protocol": "legacy" or "auto"'):
        started(fake("normal", protocol="2026-07-28"))


def test_a_pinned_modern_server_that_is_down_gets_no_hint_about_revisions():
    """Nothing listens where a "2026-07-28" entry points: the error says the connection was refused and
    suggests no other "protocol" (the revision is not what is wrong)."""
    import socket
    import beyond_mcp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = beyond_mcp.McpClient("down", {"url": f"http://127.0.0.1:{port}/mcp", "protocol": "2026-07-28"})
    with pytest.raises(McpError) as caught:
        client.start()
    client.stop()
    assert "refused" in str(caught.value) and '"protocol"' not in str(caught.value)


@pytest.mark.parametrize("mode", ["normal", "silent_probe", "exit_on_probe"])
def test_auto_falls_back_to_the_handshake(started, mode):
    """"auto" against earlier servers: an error, no answer (within startupTimeout), or an exit on the
    probe all end in the handshake."""
    client = started(fake(mode, protocol="auto", startupTimeout=1))
    assert client.revision == "2025-11-25"
    assert client.call_tool("echo", {"text": "after the probe"}) == "after the probe"
    assert any("server/discover found no 2026-07-28 server" in line for line in client.from_server.tail)
    methods = [r["method"] for r in seen(client)]
    assert methods[0] == ("initialize" if mode == "exit_on_probe" else "server/discover")  # a new process


def test_auto_waits_for_a_probe_answer_as_long_as_the_server_may_start(started):
    """A modern server that answers server/discover within DISCOVER_WAIT_S (1.5 s here) is found at
    once, and the server is started once."""
    client = started(fake("modern", protocol="auto", startupTimeout=10, env={"DISCOVER_DELAY": "1.5"}))
    assert client.revision == "2026-07-28"
    assert [r["method"] for r in seen(client)][:2] == ["server/discover", "tools/list"]


def test_auto_against_a_server_that_ignores_the_probe_is_up_long_before_its_startup_timeout(started):
    """No answer to server/discover: after DISCOVER_WAIT_S the handshake, not the 20 s startupTimeout."""
    began = time.monotonic()
    client = started(fake("silent_probe", protocol="auto", startupTimeout=20))
    assert client.revision == "2025-11-25" and time.monotonic() - began < 20
    assert [r["method"] for r in seen(client)][:2] == ["server/discover", "initialize"]


def test_a_slow_modern_server_is_not_lost_to_the_handshake(started):
    """Its discover answer comes at 4 s, after the handshake was sent: the first valid answer decides."""
    client = started(fake("modern", protocol="auto", startupTimeout=20, env={"DISCOVER_DELAY": "4"}))
    assert client.revision == "2026-07-28"
    assert client.call_tool("echo", {"text": "slow but found"}) == "slow but found"


def test_a_probe_answer_that_comes_after_the_probe_gave_up_is_used(started):
    """The probe gives up after startupTimeout (1.5 s) and the handshake is sent; the modern server
    refuses it, and its discover answer, which comes after (at 2.25 s, within the 1.5 s more it is
    given), is used: the server comes up in 2026-07-28, started once."""
    client = started(fake("modern", protocol="auto", startupTimeout=1.5, env={"DISCOVER_DELAY": "2.25"}))
    assert client.revision == "2026-07-28"
    assert client.call_tool("echo", {"text": "late but found"}) == "late but found"
    assert [r["method"] for r in seen(client)][:3] == ["server/discover", "initialize", "tools/list"]


def test_auto_finds_a_modern_server(started):
    client = started(fake("modern", protocol="auto"))
    assert client.revision == "2026-07-28"
    assert client.call_tool("echo", {"text": "found"}) == "found"


def test_unsupported_version_is_retried_in_one_both_speak(started, monkeypatch):
    """-32022: a version both sides speak is picked and the request sent again, once; none: both lists named."""
    monkeypatch.setattr(revisions, "MODERN_VERSIONS", ("2026-07-28", "2027-01-01"))
    client = started(fake("modern", protocol="2026-07-28"))
    assert client.revision == "2026-07-28"
    discovers = [r for r in seen(client) if r["method"] == "server/discover"]
    assert [r["params"]["_meta"][f"{META}protocolVersion"] for r in discovers] == ["2027-01-01", "2026-07-28"]
    with pytest.raises(McpError, match=r"the server speaks 2099-01-01; this client speaks 2026-07-28, 2027-01-01"):
        started(fake("modern", '["2099-01-01"]', protocol="2026-07-28"))


def test_a_modern_server_gets_no_answers_to_requests(started):
    """2026-07-28 has no server requests: one that comes anyway is not answered (the client never writes replies)."""
    client = started(fake("modern", protocol="2026-07-28"))
    assert json.loads(client.call_tool("ping_first", {"wait": 0.5})) == {"error": "no reply from the client"}


def test_mcp_shows_the_revision_and_the_model_uses_both(tmp_path):
    """/mcp says which revision each server speaks; the model calls a tool of each through the same registry."""
    cwd = workdir(tmp_path, {"old": fake("normal"), "new": fake("modern", protocol="2026-07-28")},
                  {"mcp_old_echo": "allow"})
    script = [tool_calls(("mcp_old_echo", {"text": "handshake"}), ("mcp_new_echo", {"text": "stateless"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/mcp", "use both", "y", "/exit"], agent_env(model.base_url))
    assert model.violations == []
    assert "  speaks MCP 2025-11-25\n" in done.stdout and "  speaks MCP 2026-07-28\n" in done.stdout
    assert "MCP server 'new' wants to run tool 'echo'" in done.stdout  # asks, as any tool does
    assert "Results: handshake | stateless" in done.stdout


def test_modern_over_http(started):
    """Over HTTP: no session, GET or DELETE; every POST names version, method and (for a call) the tool,
    a name that is not plain ASCII in Base64; a 404 with -32601 is "method not found"."""
    with FakeHttpMcp("modern") as server:
        server.tools.append({"name": "grüß", "description": "Not plain ASCII."})
        client = started({"type": "http", "url": server.url, "protocol": "2026-07-28"}, name="remote")
        assert client.revision == "2026-07-28"
        assert client.call_tool("echo", {"text": "plain"}) == "plain"
        assert client.call_tool("grüß", {"text": "wrapped"}) == "wrapped"
        assert client.list_prompts() == []  # the server answered 404 with -32601: it has none
        client.stop()
        assert server.gets == [] and server.deletes == []
    methods = [m["method"] for _, m in server.posts if m["method"] != "subscriptions/listen"]  # on its own thread
    assert methods == ["server/discover", "tools/list", "tools/call", "tools/call", "prompts/list"]
    for headers, message in server.posts:
        assert "mcp-session-id" not in headers and headers["mcp-method"] == message["method"]
        assert headers["mcp-protocol-version"] == message["params"]["_meta"][f"{META}protocolVersion"] == "2026-07-28"
    assert [h.get("mcp-name") for h, m in server.posts if m["method"] == "tools/call"] == [
        "echo", "=?base64?" + base64.b64encode("grüß".encode()).decode() + "?="]


@pytest.mark.parametrize("mode, revision", [("json", "2025-11-25"), ("modern", "2026-07-28")])
def test_auto_over_http(started, mode, revision):
    """"auto" over HTTP: a server with sessions gets the handshake after the probe fails; a modern one none."""
    with FakeHttpMcp(mode) as server:
        client = started({"type": "http", "url": server.url, "protocol": "auto"}, name="remote")
        assert client.revision == revision
        assert client.call_tool("echo", {"text": "either way"}) == "either way"
        client.stop()
    methods = [m.get("method") for _, m in server.posts]
    assert methods[0] == "server/discover" and ("initialize" in methods) == (mode == "json")


def test_handshake_refused_by_a_modern_server_gets_a_hint(started):
    """The default (the handshake) against servers of 2026-07-28 only, over stdio and HTTP: the error says what
    to set."""
    with pytest.raises(McpError, match=r'initialize failed: initialize is not supported.*set "protocol": "auto"'):
        started(fake("modern"))
    with FakeHttpMcp("modern") as server:
        # The 400's JSON-RPC error is the reply (no session to have forgotten), as a stdio server's would be.
        with pytest.raises(McpError,
                           match=r'initialize failed: params._meta .*\(code -32602\) .*set "protocol": "auto"'):
            started({"type": "http", "url": server.url}, name="remote")


def test_arguments_a_tool_wants_in_headers(started, capfd):
    """Over HTTP, x-mcp-header arguments go into Mcp-Param-* headers (nested ones and Base64 too); a tool
    whose annotation cannot be followed is left out with a warning."""
    schema = {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "where": {"type": "object", "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"},
                                                   "dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
        "text": {"type": "string"}}}
    items = {"type": "string", "x-mcp-header": "Item"}
    bad = {"type": "object", "properties": {"list": {"type": "array", "items": items}}}
    with FakeHttpMcp("modern") as server:
        server.tools += [{"name": "regional", "inputSchema": schema}, {"name": "broken", "inputSchema": bad}]
        client = started({"type": "http", "url": server.url, "protocol": "2026-07-28"}, name="remote")
        assert [t["name"] for t in client.tools] == ["echo", "regional"]
        regional = {"region": "Zürich", "where": {"zone": 3, "dry": False}, "text": "ok"}
        assert client.call_tool("regional", regional) == "ok"
        assert client.call_tool("regional", {"text": "none given"}) == "none given"
        client.stop()
    headers = [h for h, m in server.posts if m["method"] == "tools/call"]
    assert headers[0]["mcp-param-region"] == "=?base64?" + base64.b64encode("Zürich".encode()).decode() + "?="
    assert (headers[0]["mcp-param-zone"], headers[0]["mcp-param-dry"]) == ("3", "false")
    assert not any(k.startswith("mcp-param-") for k in headers[1])
    assert "skipped tool broken: x-mcp-header on something other than a property" in capfd.readouterr().err


@pytest.mark.parametrize("schema, problem", [
    ({"x-mcp-header": "Root", "type": "string"}, "other than a property"),
    ({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "not a string, integer or boolean"),
    ({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}, "is not a header name"),
    ({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "is not a header name"),
    ({"properties": {"a": {"type": "string", "x-mcp-header": "Same"},
                     "b": {"type": "integer", "x-mcp-header": "sAME"}}},
     "share one x-mcp-header"),
    ({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}, "other than a property"),
])
def test_header_annotations_that_cannot_be_followed(schema, problem):
    with pytest.raises(ValueError, match=problem):
        mirrored(schema)


def test_modern_list_changes_are_heard_through_a_subscription(started):
    """2026-07-28 servers say nothing unasked: the client subscribes (subscriptions/listen) to tool-list
    changes, over stdio and over HTTP, and follows them as it does for earlier revisions."""
    client = started(fake("modern", protocol="2026-07-28"))
    assert client.call_tool("change_tools", {}) == "changed"
    assert wait_until(lambda: "extra" in [t["name"] for t in client.tools])
    (listen,) = [r for r in seen(client) if r["method"] == "subscriptions/listen"]
    assert listen["params"]["notifications"] == {"toolsListChanged": True, "resourcesListChanged": True}
    assert "demo://notes/tomorrow" not in client.listed
    assert client.call_tool("more_context", {}) == "added"
    assert wait_until(lambda: "demo://notes/tomorrow" in client.listed)
    with FakeHttpMcp("modern") as server:
        remote = started({"type": "http", "url": server.url, "protocol": "2026-07-28"}, name="remote")
        assert server.streams_opened == 1  # start-up waited for the acknowledgement
        server.tools.append({"name": "late", "description": "Added at run time."})
        server.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                     "params": {"_meta": {f"{META}subscriptionId": listen["id"]}}})
        assert wait_until(lambda: [t["name"] for t in remote.tools] == ["echo", "late"])
        remote.stop()
        assert server.wait_for(lambda: server.streams_closed_by_client == 1)
    assert server.gets == [] and [m["method"] for _, m in server.posts].count("subscriptions/listen") == 1
