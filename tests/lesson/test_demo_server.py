"""The demo server (the twin of demo-server.mjs) driven by hand through a pipe, as README shows."""
import json
import re
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
    """initialize echoes the client's version and declares tools (the marked extension that official
    clients need); tools/list lists both tools; ping gets an empty result."""
    init, listed, pong = exchange(json.dumps(INIT), request(2, "tools/list"), request(3, "ping"))
    assert pong["result"] == {}
    assert init["result"] == {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                              "serverInfo": {"name": "geekagent-demo", "version": "1.0.0"}}
    assert [t["name"] for t in listed["result"]["tools"]] == ["word_count", "dice"]
    assert all("run" not in t for t in listed["result"]["tools"])  # the functions stay in the server


def test_any_protocol_version_is_echoed():
    """As in the tutorial, the server continues with whatever version the client offered."""
    init = dict(INIT, params=dict(INIT["params"], protocolVersion="2025-11-25"))
    (reply,) = exchange(json.dumps(init))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_both_tools():
    """word_count gives 22 characters and 3 words; dice rolls 1..6."""
    count, roll = exchange(
        request(1, "tools/call", {"name": "word_count", "arguments": {"text": "Model Context Protocol"}}),
        request(2, "tools/call", {"name": "dice", "arguments": {}}))
    assert count["result"]["content"] == [{"type": "text", "text": "22 characters, 3 words"}]
    assert re.fullmatch(r"rolled [1-6]", roll["result"]["content"][0]["text"])


def test_unknown_method_and_tool():
    """An unknown method is -32601 (a marked extension); an unknown tool is an isError result."""
    method, tool = exchange(request(1, "resources/list"),
                            request(2, "tools/call", {"name": "nope", "arguments": {}}))
    assert method["error"]["code"] == -32601 and method["id"] == 1
    assert tool["result"] == {"content": [{"type": "text", "text": "unknown tool: nope"}], "isError": True}


def test_garbage_then_valid_request_still_answered():
    """A non-JSON line gets -32700 with id null (a marked extension); a blank line nothing;
    the next request is answered."""
    parse_error, listed = exchange("this is not json", "", request(7, "tools/list"))
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
    assert listed["id"] == 7 and len(listed["result"]["tools"]) == 2


def test_notifications_are_not_answered():
    """A notification (no id) gets no reply."""
    (reply,) = exchange(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                        request(3, "tools/list"))
    assert reply["id"] == 3


def test_ctrl_c_ends_it_quietly():
    """SIGINT (under index.py the terminal's Ctrl-C reaches the servers too) ends it without a traceback."""
    import select
    import signal
    proc = subprocess.Popen([sys.executable, str(DAY15 / "demo_server.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        proc.stdin.write((json.dumps(INIT) + "\n").encode())
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], 10)[0] and proc.stdout.readline()  # it is serving
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130 and err == b""
