"""The entries of mcp.json (beyond/client/config.py): what real configs say, and values that would break a
wait or a request."""
import pytest

from conftest import answer_every_question, connect, fake, run_call


def test_config_compatibility(tmp_path, monkeypatch):
    """type stdio works, disabled is skipped, cwd is used, an unreachable url is one server's error."""
    (tmp_path / "work").mkdir()
    statuses = connect(tmp_path, {
        "typed": fake("normal", type="stdio", cwd=str(tmp_path / "work")),
        "off": fake("normal", disabled=True),
        "remote": {"url": "https://127.0.0.1:9/mcp"},
    })
    assert statuses["typed"].error is None and statuses["off"].disabled and not statuses["off"].tools
    assert "initialize to https://127.0.0.1:9/mcp failed" in statuses["remote"].error
    answer_every_question(monkeypatch, lambda prompt: True)
    assert run_call("mcp_typed_cwd", "{}") == str(tmp_path / "work")


@pytest.mark.parametrize("entry, problem", [
    ({"command": "x", "timeout": 1e10}, '"timeout" must be a number of seconds above 0 and at most 3600'),
])
def test_config_values_that_would_break_a_wait(tmp_path, entry, problem):
    """A timeout too large for a wait is refused with the key named: that server does not start."""
    status = connect(tmp_path, {"a": entry})["a"]
    assert problem in status.error and status.client is None


@pytest.mark.parametrize("entry, problem", [
    ({"url": "http://127.0.0.1:99999/mcp"}, "cannot be used: Port out of range"),
    ({"url": "http://127.0.0.1:9/mcp", "headers": {"X-A": "1\r\nX-Injected: 2"}}, "headers.X-A holds a line break"),
])
def test_remote_entries_that_would_break_a_request(tmp_path, entry, problem):
    """A port out of range or a CR/LF in a header is that server's error; nothing escapes, nothing is sent."""
    status = connect(tmp_path, {"r": entry})["r"]
    assert problem in status.error


def test_an_mcp_json_of_null_says_so(tmp_path):
    """A file holding JSON's null is not a missing file: the error names the file and what to write."""
    from beyond.client.config import load_mcp_config
    from mcp import McpError
    path = tmp_path / "mcp.json"
    path.write_text("null\n")
    for raw in (None, b"null"):
        with pytest.raises(McpError, match=r"mcp.json: holds null, not an object"):
            load_mcp_config(str(path), raw)
    assert load_mcp_config(str(tmp_path / "missing.json")) == {}
