"""The demo server driven by hand through a pipe, as README shows."""
import json
import subprocess
import sys

from conftest import DAY15

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "me", "version": "1"}}}


def exchange(*lines: str) -> list[dict]:
    """Pipe lines into the demo server and parse every line it prints before exiting."""
    done = subprocess.run([sys.executable, str(DAY15 / "demo_server.py")], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def request(request_id, method, params=None) -> str:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def test_handshake_and_tools_list():
    """initialize echoes a known protocol version; tools/list (without params) lists both tools."""
    init, listed = exchange(json.dumps(INIT), request(2, "tools/list"))
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert "tools" in init["result"]["capabilities"]
    assert [t["name"] for t in listed["result"]["tools"]] == ["word_count", "dice"]


def test_unknown_protocol_version_gets_servers_own():
    """A version the server does not know is answered with its own."""
    init = dict(INIT, params=dict(INIT["params"], protocolVersion="1999-01-01"))
    (reply,) = exchange(json.dumps(init))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_both_tools():
    """word_count gives 22 characters and 3 words; dice gives 1..6."""
    count, roll = exchange(
        request(1, "tools/call", {"name": "word_count", "arguments": {"text": "Model Context Protocol"}}),
        request(2, "tools/call", {"name": "dice", "arguments": {}}))
    assert count["result"]["content"][0]["text"] == "22 characters, 3 words"
    assert 1 <= int(roll["result"]["content"][0]["text"]) <= 6


def test_unknown_method_and_tool():
    """An unknown method is -32601; an unknown tool is an isError result."""
    method, tool = exchange(request(1, "resources/list"),
                            request(2, "tools/call", {"name": "nope", "arguments": {}}))
    assert method["error"]["code"] == -32601 and method["id"] == 1
    assert tool["result"]["isError"] is True


def test_garbage_then_valid_request_still_answered():
    """A non-JSON line gets -32700 with id null; the next request is still answered."""
    parse_error, pong = exchange("this is not json", request(7, "ping"))
    assert parse_error == {"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32700, "message": parse_error["error"]["message"]}}
    assert pong == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_notifications_are_not_answered():
    """A notification (no id) gets no reply."""
    (reply,) = exchange(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                        request(3, "ping"))
    assert reply["id"] == 3
