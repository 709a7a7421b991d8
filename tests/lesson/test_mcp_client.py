"""The full McpClient against the demo server and scripted fake servers, as real subprocesses."""
import json
import re
import threading
import time

import pytest

from beyond_mcp import McpClient, McpError
from conftest import demo, fake, group_alive, pid_alive, wait_until


def test_demo_handshake_lists_both_tools(started):
    """start() runs the handshake and returns the demo server's two tools."""
    client = started(demo(), "demo")
    assert [t["name"] for t in client.tools] == ["word_count", "dice"]


def test_demo_tools_answer(started):
    """word_count counts 'Model Context Protocol' as 22 characters and 3 words; dice is 1..6."""
    client = started(demo(), "demo")
    assert client.call_tool("word_count", {"text": "Model Context Protocol"}) == "22 characters, 3 words"
    assert re.fullmatch(r"rolled [1-6]", client.call_tool("dice", {}))


def test_unknown_demo_tool_raises_with_its_text(started):
    """An isError result raises McpError carrying the server's text."""
    client = started(demo(), "demo")
    with pytest.raises(McpError, match="unknown tool: nope"):
        client.call_tool("nope", {})


def test_exit_during_call_fails_fast_with_reason(started):
    """A crash fails the pending call at once (not at the timeout), with exit code and stderr."""
    client = started(fake("normal", timeout=30))
    with pytest.raises(McpError) as caught:
        client.call_tool("crash", {})
    assert "server exited (code 3)" in str(caught.value)  # not "no reply within 30 s"
    assert "crashed on purpose" in str(caught.value)


def test_silent_server_times_out(started):
    """A server that never answers fails the call after the configured timeout."""
    client = started(fake("normal", timeout=0.5))
    begun = time.monotonic()
    with pytest.raises(McpError, match="no reply to tools/call within 0.5 s"):
        client.call_tool("hang", {})
    assert time.monotonic() - begun >= 0.5  # it waited the timeout out


def test_garbage_and_unknown_ids_are_skipped(started, capfd):
    """Non-JSON lines and replies to unknown ids are reported; the first such line on stderr, the rest
    in /logs (so a server that prints garbage does not flood the terminal); the session goes on."""
    client = started(fake("normal"))
    assert client.call_tool("garbage", {"text": "one"}) == "one"
    assert client.call_tool("garbage", {"text": "two"}) == "two"
    err = capfd.readouterr().err
    assert err.count("skipped a line that is not a JSON-RPC message") == 1
    assert ("[mcp:fake] skipped a line that is not a JSON-RPC message: this is not JSON "
            "(more such lines go to /logs)") in err
    assert "skipped a line that is not a JSON-RPC message: this is not JSON" in client.from_server.tail
    assert "unknown or expired request id 999999" in err


def test_stderr_flood_during_initialize_does_not_deadlock(started, capfd):
    """1.4 MB of stderr before the initialize reply is drained, so start() completes;
    the last 200 lines are kept, none shouted."""
    client = started(fake("stderr_flood", timeout=10))
    assert client.call_tool("echo", {"text": "after the flood"}) == "after the flood"
    client.stop()
    # the drain thread reads the rest of the flood after stop()
    assert wait_until(lambda: list(client.from_server.tail)[-1] == "log line 019999 of the flood")
    assert len(client.from_server.tail) == 200
    assert "of the flood" not in capfd.readouterr().err


def test_jsonrpc_error_raises_with_message_and_code(started):
    """A JSON-RPC error reply raises McpError with its message and code."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match=r"invalid params: text is required \(code -32602\)") as caught:
        client.call_tool("rpc_error", {})
    assert caught.value.code == -32602 and caught.value.server == "fake"


def test_is_error_result_raises(started):
    """isError: true raises with the tool's text."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match="^the tool refused: bad input$"):
        client.call_tool("refuse", {"text": "x"})


def test_empty_result_gets_placeholder(started):
    """A result without content comes back as '(no content)'."""
    assert started(fake("normal")).call_tool("empty", {}) == "(no content)"


def test_missing_command_is_a_clear_error():
    """A command that does not exist fails start() with 'cannot start server'."""
    client = McpClient("ghost", {"command": "/no/such/mcp-server-binary"})
    with pytest.raises(McpError, match="^cannot start server: .*no/such/mcp-server-binary"):
        client.start()
    client.stop()
    with pytest.raises(McpError, match="cannot start server"):
        client.call_tool("x", {})


def test_stop_kills_server_that_ignores_sigterm(started):
    """stop() escalates to SIGKILL; afterwards nothing of the group runs."""
    client = started(fake("ignore_term"))
    pgid = client.link.transport.proc.pid
    client.stop()
    assert not group_alive(pgid)


def test_stop_kills_children_of_the_server(started):
    """A child the server started (as npx does) is stopped with it."""
    client = started(fake("normal"))
    child = int(client.call_tool("child_pid", {}))
    assert pid_alive(child)
    client.stop()
    assert not pid_alive(child)
    assert not group_alive(client.link.transport.proc.pid)


def test_a_stopped_server_leaves_no_pipe_open(started):
    """Its stdout and stderr are closed once read to their end: a server restarted again and again leaks
    no descriptors."""
    client = started(fake("normal"))
    proc = client.link.transport.proc
    client.stop()
    assert wait_until(lambda: proc.stdout.closed and proc.stderr.closed and proc.stdin.closed)


def test_stop_is_idempotent_and_fails_pending_calls(started):
    """stop() twice is fine; a call waiting on a hung server fails at once, not at the timeout."""
    client = started(fake("normal", timeout=30))
    errors = []
    def call():
        try:
            client.call_tool("hang", {})
        except McpError as e:
            errors.append(str(e))
    caller = threading.Thread(target=call)
    caller.start()
    def hang_arrived():
        return any((r["params"] or {}).get("name") == "hang" for r in json.loads(client.call_tool("requests_seen", {})))
    assert wait_until(hang_arrived)
    client.stop()
    client.stop()
    caller.join(5)
    assert errors and "server stopped" in errors[0]
