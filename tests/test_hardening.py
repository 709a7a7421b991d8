"""What real servers need beyond the tutorial: server requests, notifications, pagination,
versions, content, names, parallel start-up, cancellation, restart, environment, big and odd output."""
import json

import pytest

import beyond_mcp
import permissions
import tools
from mcp import McpError
from conftest import connect, fake, said_on_stderr, wait_until


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


def test_pagination_follows_next_cursor(started):
    """5 tools served 2 per page are all listed."""
    assert [t["name"] for t in started(fake("paginate")).tools] == [f"tool{i}" for i in range(5)]


def test_list_changed_updates_registry(tmp_path, capfd):
    """After tools/list_changed, the new tool is registered and the removed one is gone, and that is said; policies stay."""
    permissions.set_policy("mcp_fake_echo", "allow")
    permissions.set_policy("mcp_fake_change_tools", "allow")
    connect(tmp_path, {"fake": fake("normal")})
    assert tools.get_tool("mcp_fake_child_pid") and not tools.get_tool("mcp_fake_extra")
    assert tools.run_tool("mcp_fake_change_tools", "{}") == "changed"
    assert wait_until(lambda: tools.get_tool("mcp_fake_extra") is not None)
    assert tools.get_tool("mcp_fake_child_pid") is None
    assert "mcp_fake_extra" in beyond_mcp.mcp_statuses()[0].tools
    assert permissions.policy_for("mcp_fake_echo") == "allow"
    assert permissions.policy_for("mcp_fake_extra") == "ask"
    # The line is written just after the registry changes, on the re-list thread.
    assert said_on_stderr(capfd, "[mcp:fake] tools changed: added mcp_fake_extra; removed mcp_fake_child_pid")


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


def test_bad_protocol_version_stops_only_that_server(tmp_path):
    """A server answering an unknown revision is refused with the version named; others work."""
    statuses = connect(tmp_path, {"bad": fake("bad_version"), "good": fake("normal")})
    assert "unsupported protocol version '1999-01-01'" in statuses["bad"].error
    assert statuses["good"].error is None and statuses["good"].tools


def test_method_not_found_on_tools_list_means_no_tools(started):
    """A server that answers tools/list with -32601 is connected with 0 tools."""
    assert started(fake("no_tools")).tools == []


def test_rich_content_is_described(started):
    """Image, audio, resources and links become readable text."""
    assert started(fake("normal")).call_tool("rich", {}).splitlines() == [
        "[image: image/png, 8 bytes]", "[audio: audio/wav, 4 bytes]", "inside a.txt",
        "[resource: file:///b.bin, unknown type, 3 bytes]", "[link: file:///c.md]"]


def test_structured_content_only(started):
    """A result with only structuredContent returns its JSON."""
    assert json.loads(started(fake("normal")).call_tool("structured", {})) == {"temperature": 21.5}


def test_long_and_colliding_names(tmp_path):
    """Names stay within 64 characters and distinct; each calls the server's original name."""
    status = connect(tmp_path, {"fake": fake("long_names")})["fake"]
    names = status.tools
    assert len(names) == 5 == len(set(names))
    assert all(len(n) <= 64 for n in names)
    assert "mcp_fake_read_file" not in names  # contested: neither of the pair gets it
    permissions.set_confirm(lambda prompt: True)
    for name, text in zip(names, ["e", "a70", "a69b", "dot", "underscore"]):
        assert tools.run_tool(name, json.dumps({"text": text})) == text


def test_servers_start_in_parallel(tmp_path):
    """Three servers that come up only when all three run: started one by one, each would time out."""
    (tmp_path / "meet").mkdir()
    statuses = connect(tmp_path, {f"s{i}": fake("rendezvous", str(tmp_path / "meet"), timeout=5) for i in range(3)})
    assert list(statuses) == ["s0", "s1", "s2"]  # config order, whatever order they finished in
    assert [s.error for s in statuses.values()] == [None] * 3


def test_timeout_sends_cancellation(started):
    """A timed-out request is cancelled with notifications/cancelled naming its id."""
    client = started(fake("normal", timeout=0.3))
    with pytest.raises(McpError, match="no reply to tools/call within 0.3 s"):
        client.call_tool("hang", {})
    client.cfg.timeout = 10
    (cancelled,) = json.loads(client.call_tool("cancellations", {}))
    assert cancelled["requestId"] == 3 and "no reply within 0.3 s" in cancelled["reason"]


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


def test_environment_is_filtered_and_expanded(started, monkeypatch):
    """Secrets stay out; PATH passes; ${VAR} and ${VAR:-default} expand in env and args."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("MY_TOKEN", "tok-123")
    config = fake("normal", env={"TOKEN_FOR_SERVER": "${MY_TOKEN}", "MODE": "${UNSET_VAR_X:-fallback}"})
    env = json.loads(started(config).call_tool("env", {}))
    assert "OPENAI_API_KEY" not in env and "sk-secret-value" not in json.dumps(env)
    assert env["TOKEN_FOR_SERVER"] == "tok-123" and env["MODE"] == "fallback"
    assert env["PATH"]


def test_missing_variable_is_an_error_for_that_server(tmp_path, monkeypatch):
    """${VAR} without a value and without a default fails that server only, naming the variable."""
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    statuses = connect(tmp_path, {"needs": fake("normal", env={"K": "${NOT_SET_ANYWHERE}"}),
                                  "fine": fake("normal")})
    assert "${NOT_SET_ANYWHERE} is not set" in statuses["needs"].error and "env.K" in statuses["needs"].error
    assert statuses["fine"].error is None


def test_twenty_megabyte_result_arrives_intact(started):
    """A 20 MB line is read whole."""
    client = started(fake("normal", timeout=30))
    assert client.call_tool("big", {"size": 20_000_000}) == "x" * 20_000_000


def test_invalid_utf8_is_replaced_not_fatal(started, capfd):
    """Invalid bytes on stdout and stderr are replaced; the session goes on."""
    client = started(fake("normal"))
    assert client.call_tool("bad_utf8", {}) == "caf\ufffd ok"
    assert client.call_tool("echo", {"text": "still here"}) == "still here"
    assert wait_until(lambda: "stderr with \ufffd\ufffd bad bytes" in client.from_server.tail)  # stderr has its own thread
    assert "replaced invalid UTF-8" in capfd.readouterr().err


def test_config_compatibility(tmp_path):
    """type stdio works, disabled is skipped, cwd is used, an unreachable url is one server's error."""
    (tmp_path / "work").mkdir()
    statuses = connect(tmp_path, {
        "typed": fake("normal", type="stdio", cwd=str(tmp_path / "work")),
        "off": fake("normal", disabled=True),
        "remote": {"url": "https://127.0.0.1:9/mcp"},
    })
    assert statuses["typed"].error is None and statuses["off"].disabled and not statuses["off"].tools
    assert "initialize to https://127.0.0.1:9/mcp failed" in statuses["remote"].error
    permissions.set_confirm(lambda prompt: True)
    assert tools.run_tool("mcp_typed_cwd", "{}") == str(tmp_path / "work")
