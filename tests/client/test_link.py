"""A server that stops (beyond/client/link.py): restarted once per crash, a few times a session, never after stop()."""
import json
import threading

import pytest

from conftest import fake, unhung
from mcp import McpError


def test_crashed_server_restarts_once_at_next_call(started, capfd):
    """After a crash, the next call starts the server again and succeeds; the user is told."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match="server exited"):
        client.call_tool("crash", {})
    assert client.call_tool("echo", {"text": "back"}) == "back"
    assert "restarted the server (it had stopped: server exited (code 3)" in capfd.readouterr().err


def test_failed_restart_reports_both_errors(started, tmp_path):
    """If the restart fails too, the error names the death and the restart failure."""
    client = started(fake("normal"))
    with pytest.raises(McpError):
        client.call_tool("crash", {})
    client.cfg.command = str(tmp_path / "gone")
    with pytest.raises(McpError, match=r"server exited \(code 3\).*restarting it failed: .*cannot start server"):
        client.call_tool("echo", {"text": "x"})


def test_stopped_server_is_not_restarted(started):
    """stop() is final: a later call fails without starting anything."""
    client = started(fake("normal"))
    client.stop()
    with pytest.raises(McpError, match="server stopped"):
        client.call_tool("echo", {"text": "x"})
    assert client.link.transport.proc.returncode is not None


def test_restart_is_once_per_death_and_bounded(started, tmp_path):
    """A failed restart is not tried again at every call; a server that keeps dying is restarted at most 3 times."""
    client = started(fake("normal"))
    for _ in range(3):
        with pytest.raises(McpError, match="server exited"):
            client.call_tool("crash", {})
        assert client.call_tool("echo", {"text": "back"}) == "back"  # restarted
    with pytest.raises(McpError, match="server exited"):
        client.call_tool("crash", {})
    with pytest.raises(McpError, match="not restarted: it stopped 4 times"):
        client.call_tool("echo", {"text": "again"})
    runs = tmp_path / "runs"
    flaky = started(fake("normal"), "flaky")
    with pytest.raises(McpError):
        flaky.call_tool("crash", {})
    flaky.cfg.command, flaky.cfg.args = "sh", ["-c", f"echo run >> {runs}; exit 5"]
    for _ in range(3):
        with pytest.raises(McpError, match=r"restarting it failed: .*code 5"):
            flaky.call_tool("echo", {"text": "x"})
    assert runs.read_text() == "run\n"  # one restart, not one per call


def test_calls_arriving_during_a_restart_wait_for_its_handshake(started):
    """After a crash, 8 threads call at once while the new server takes 0.3 s to answer initialize: every
    call reaches it after notifications/initialized (none in the middle of the handshake), and each answers."""
    client = started(fake("normal", env={"INIT_DELAY": "0.3"}))
    with pytest.raises(McpError, match="server exited"):
        client.call_tool("crash", {})
    answers: dict[int, str] = {}
    threads = [threading.Thread(target=lambda i=i: answers.__setitem__(i, client.call_tool("echo", {"text": str(i)})))
               for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        unhung(thread.join)
    assert answers == {i: str(i) for i in range(8)}
    methods = json.loads(client.call_tool("methods_seen", {}))
    handshake = methods[:methods.index("notifications/initialized")]
    assert handshake[0] == "initialize" and "tools/call" not in handshake, methods


def test_no_request_of_any_kind_reaches_a_restarting_server_before_its_handshake(started, tmp_path):
    """Around a crash, 8 threads send resources/read, prompts/get and ping while a call restarts the server
    (0.3 s to answer initialize): in the new process's log, nothing but initialize comes before
    notifications/initialized; what was sent while the server was down failed at once, unsent."""
    log = tmp_path / "methods.log"
    client = started(fake("normal", env={"INIT_DELAY": "0.3", "METHODS_LOG": str(log)}))
    with pytest.raises(McpError, match="server exited"):
        client.call_tool("crash", {})
    asks = [lambda: client.read_resource("demo://notes/today"), lambda: client.get_prompt("review", {"code": "x"}),
            lambda: client.request("ping", {})]
    done = threading.Event()

    def keep_asking(ask) -> None:
        while not done.is_set():
            try:
                ask()
            except McpError:
                pass  # the server is down, or restarting failed: nothing was sent
    threads = [threading.Thread(target=keep_asking, args=(asks[i % 3],)) for i in range(8)]
    for thread in threads:
        thread.start()
    try:
        assert client.call_tool("echo", {"text": "back"}) == "back"  # restarts it
    finally:
        done.set()
        for thread in threads:
            unhung(thread.join)
    lines = [line.split(" ", 1) for line in log.read_text().splitlines()]
    first_pid = lines[0][0]
    restarted = [method for pid, method in lines if pid != first_pid]
    handshake = restarted[:restarted.index("notifications/initialized")]
    assert handshake == ["initialize"], restarted[:10]
    assert {"resources/read", "prompts/get", "ping"} <= set(restarted)
