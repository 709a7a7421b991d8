"""The set of servers (beyond/servers/connect.py): started side by side; one failing is that server's error only."""
from conftest import connect, fake


def test_servers_start_in_parallel(tmp_path):
    """Three servers that come up only when all three run: started one by one, each would time out."""
    (tmp_path / "meet").mkdir()
    statuses = connect(tmp_path, {f"s{i}": fake("rendezvous", str(tmp_path / "meet"), timeout=5) for i in range(3)})
    assert list(statuses) == ["s0", "s1", "s2"]  # config order, whatever order they finished in
    assert [s.error for s in statuses.values()] == [None] * 3


def test_server_that_exits_at_once_is_reported_without_traceback(tmp_path, capfd):
    """Ten servers that exit at once: each reported as "exited (code 2): bad config", no thread traceback."""
    quitter = {"command": "sh", "args": ["-c", "echo bad config >&2; exit 2"]}
    statuses = connect(tmp_path, {f"q{i}": quitter for i in range(10)})
    assert [s.error for s in statuses.values()] == ["initialize failed: server exited (code 2): bad config"] * 10
    assert "Traceback" not in capfd.readouterr().err


def test_unexpected_failure_while_starting_is_that_servers_error(tmp_path):
    """A tools/list answer of {"tools": 5} fails that server with a clear error; it is stopped, the others run."""
    statuses = connect(tmp_path, {"odd": fake("tools_not_a_list"), "fine": fake("normal")})
    assert 'tools/list answered "tools" that is not a list' in statuses["odd"].error
    assert statuses["fine"].error is None
