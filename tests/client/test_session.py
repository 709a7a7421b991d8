"""The full client's requests (beyond/client/session.py, requests.py): pages, timeouts and cancellation,
replies matched by id and shape."""
import json

import pytest

from conftest import connect, fake
from mcp import McpError


def test_pagination_follows_next_cursor(started):
    """5 tools served 2 per page are all listed."""
    assert [t["name"] for t in started(fake("paginate")).tools] == [f"tool{i}" for i in range(5)]


def test_bad_protocol_version_stops_only_that_server(tmp_path):
    """A server answering an unknown revision is refused with the version named; others work."""
    statuses = connect(tmp_path, {"bad": fake("bad_version"), "good": fake("normal")})
    assert "unsupported protocol version '1999-01-01'" in statuses["bad"].error
    assert statuses["good"].error is None and statuses["good"].tools


def test_method_not_found_on_tools_list_means_no_tools(started):
    """A server that answers tools/list with -32601 is connected with 0 tools."""
    assert started(fake("no_tools")).tools == []


def test_timeout_sends_cancellation(started):
    """A timed-out request is cancelled with notifications/cancelled naming its id."""
    client = started(fake("normal", timeout=0.3))
    with pytest.raises(McpError, match="no reply to tools/call within 0.3 s"):
        client.call_tool("hang", {})
    client.cfg.timeout = 10
    (cancelled,) = json.loads(client.call_tool("cancellations", {}))
    (hang,) = [r for r in json.loads(client.call_tool("requests_seen", {}))
               if (r["params"] or {}).get("name") == "hang"]
    assert cancelled["requestId"] == hang["id"] and "no reply within 0.3 s" in cancelled["reason"]


def test_ids_match_by_type(started, capfd):
    """A reply with "id": true is no reply to request 1 (nor any other): dropped and reported."""
    assert started(fake("normal")).call_tool("bool_id", {}) == "for my id"
    assert "unknown or expired request id True" in capfd.readouterr().err


def test_results_that_are_not_objects_are_errors(started):
    """A non-object result and a non-list content fail naming the method; "isError": "false" is no error."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match=r"^tools/call failed: the reply's result is not an object: 5$"):
        client.call_tool("bad_result", {})
    with pytest.raises(McpError, match='tools/call answered "content" that is not a list'):
        client.call_tool("bad_content", {})
    assert client.call_tool("string_is_error", {}) == "fine"


def test_the_full_client_owns_its_request_path():
    """The full client is no subclass of the twin: ids, waiters, deadlines and settling a reply are its own,
    and the twin's request path takes only what the lesson passes it."""
    import inspect
    import mcp
    from beyond.client.session import Session
    assert not issubclass(Session, mcp.McpClient)
    assert list(inspect.signature(mcp.McpClient._send).parameters) == ["self", "message"]
    assert list(inspect.signature(mcp.McpClient._request).parameters) == ["self", "method", "params"]
