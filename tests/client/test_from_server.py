"""What a server sends unasked (beyond/client/from_server.py): its requests answered, bounded in rate; its
log lines; list changes followed, spaced out."""
import json
import math
import threading
import time

from beyond.client.from_server import ANSWERS_PER_S
from conftest import fake, said_on_stderr, wait_until


def test_ping_from_server_is_answered(started):
    """The server pings before answering; it receives {} and the call completes."""
    reply = json.loads(started(fake("normal")).call_tool("ping_first", {}))
    assert reply == {"jsonrpc": "2.0", "id": "srv-ping", "result": {}}


def test_other_server_requests_get_method_not_found(started):
    """A request we do not support gets -32601 instead of silence."""
    reply = json.loads(started(fake("normal")).call_tool("ask_sampling", {}))
    assert reply["error"]["code"] == -32601 and "sampling/createMessage" in reply["error"]["message"]


def test_log_notification_is_kept_and_shown_when_verbose(started, capfd):
    """notifications/message is kept with the server's stderr; with --verbose (echo) it is printed with the prefix."""
    client = started(fake("normal"), echo=True)
    assert client.call_tool("log", {}) == "logged"
    assert "warning: disk almost full" in client.from_server.tail
    assert "[mcp:fake] warning: disk almost full" in capfd.readouterr().err


def test_a_server_that_logs_in_a_loop_cannot_flood_the_terminal(started, capfd):
    """2,000 warnings at once: a burst of them is printed, then one line saying the rest are held back
    and where they are; /logs keeps the newest."""
    client = started(fake("normal"))
    assert client.call_tool("log_flood", {"count": 2000}) == "flooded"
    assert wait_until(lambda: "warning: noise 1999" in client.from_server.tail)
    err = capfd.readouterr().err
    printed = err.count("[mcp:fake] warning: noise")
    assert 20 <= printed < 500 and err.count("the rest are held back (/logs fake keeps the last 200)") >= 1


def test_a_failure_to_follow_a_change_leaves_later_changes_followed(started, capfd):
    """When following a changed list fails, that is said, and the next change is followed all the same."""
    client = started(fake("normal"))
    seen = []

    def follow(changed) -> None:
        seen.append([t["name"] for t in changed.tools])
        if len(seen) == 1:
            raise OSError("stderr is gone")
    client.on_tools_changed = follow
    assert client.call_tool("change_tools", {}) == "changed"
    assert said_on_stderr(capfd, "could not follow the changed lists (OSError: stderr is gone)")
    assert client.call_tool("redescribe", {}) == "redescribed"
    assert wait_until(lambda: len(seen) == 2)


def test_reader_never_blocks_on_answers(started, capfd):
    """A server that floods pings and never reads: the answers are dropped and logged, its reply still arrives."""
    client = started(fake("normal", timeout=20))
    assert client.call_tool("ping_flood", {"count": 20000}) == "flooded"
    assert "answers dropped so far" in capfd.readouterr().err


def test_requests_are_answered_at_a_bounded_rate(started, capfd):
    """1000 pings at once from a server that reads: a burst is answered, the rest dropped and counted."""
    client = started(fake("normal"))
    begun = time.monotonic()
    answered = int(client.call_tool("ping_storm", {"count": 1000}))
    allowed = ANSWERS_PER_S * (1 + time.monotonic() - begun)  # the burst, and what the elapsed time refilled
    assert 1 <= answered <= allowed and answered < 1000
    assert "answers dropped so far): over 20 requests a second" in capfd.readouterr().err
    assert client.call_tool("echo", {"text": "still fine"}) == "still fine"


def test_list_changed_flood_costs_one_relist(started, monkeypatch):
    """20,000 list_changed notifications: one re-list thread at a time and a handful of re-lists, not 20,000."""
    import beyond.client.from_server as beyond_from_server
    monkeypatch.setattr(beyond_from_server, "RELIST_INTERVAL_S", 0.2)
    client = started(fake("normal"))
    relists = lambda: [t for t in threading.enumerate() if t.name == "mcp-fake-relist"]
    begun = time.monotonic()
    assert client.call_tool("flood_list_changed", {"count": 20000}) == "flooded"
    flood_s = time.monotonic() - begun
    assert len(relists()) <= 1
    assert wait_until(lambda: not relists())
    # Re-lists start 0, 0.2, 0.6, 1.4 ... s after the first notification (each unchanged list doubles
    # the pause), so during the flood at most 1 + log2(flood_s / 0.2 + 1) of them, then the one queued.
    most = 1 + (1 + int(math.log2(flood_s / 0.2 + 1))) + 1
    assert 3 <= int(client.call_tool("list_count", {})) <= most


def test_server_announcing_changes_forever_is_relisted_ever_more_slowly(started, monkeypatch):
    """A server that announces a change after every list is re-listed with a growing pause, not in a loop."""
    import beyond.client.from_server as beyond_from_server
    monkeypatch.setattr(beyond_from_server, "RELIST_INTERVAL_S", 0.1)
    client = started(fake("relist_loop"))
    assert wait_until(lambda: int(client.call_tool("list_count", {})) >= 4)  # 0, 0.1, 0.3, 0.7 s
    begun = time.monotonic()
    count = int(client.call_tool("list_count", {}))
    assert not wait_until(lambda: int(client.call_tool("list_count", {})) > count + 1, 1.0)
    assert time.monotonic() - begun >= 1.0


def test_a_request_with_a_huge_id_is_not_answered(started, capfd):
    """A ping whose id is 2,000 characters is dropped, and said; one with a short id is answered."""
    client = started(fake("normal"))
    assert json.loads(client.call_tool("long_ids", {})) == {"long": False, "short": True}
    assert said_on_stderr(capfd, "its id is over 1024 characters")


def test_a_server_busy_elsewhere_keeps_its_session_while_answers_wait(started):
    """Pings come while the server does not read its input (a pipe of one page): their answers wait
    for it, by the server's timeout, instead of being cut short, which would end the session."""
    client = started(fake("normal", timeout=20))
    assert client.call_tool("busy_pinged", {"count": 10}) == "10 of 10 answered"
    assert client.call_tool("echo", {"text": "still"}) == "still"


def test_a_servers_line_on_a_terminal_starts_on_a_cleared_row(started, monkeypatch):
    """On a terminal each [mcp:name] line first clears its row, so the activity line drawn there is not
    glued to it in the scrollback; piped, the line is plain."""
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    client = started(fake("normal"))
    for stream, start in ((Terminal(), "\r\x1b[K[mcp:fake] "), (io.StringIO(), "[mcp:fake] ")):
        monkeypatch.setattr(sys, "stderr", stream)
        client.log("warning: disk almost full")
        assert stream.getvalue() == f"{start}warning: disk almost full\n"
