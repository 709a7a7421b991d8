"""The same situation against the twin of the tutorial's client (mcp.py) and the full client (beyond_mcp.py).

One test per item of tutorial section 6 ("what we did not do") and per extension; each asserts
what the twin does and what the full client does. README's section 6 table lists them.
"""
import json
import os
import re
import signal
import sys

import pytest

import mcp
import permissions
import tools
from beyond.servers import toolset
from conftest import (
    answer_every_question, connect, demo, echo_from_threads, empty_registry, fake, pid_alive, policy_of, run_call,
    set_tool_policy, wait_until, write_config)
from fakes.http_server import FakeHttpMcp


@pytest.fixture
def twin():
    """Start a twin client for an mcpServers entry and always stop it."""
    clients = []

    def start(entry: dict, name: str = "fake") -> tuple[mcp.McpClient, list]:
        client = mcp.McpClient(name, mcp.McpServerConfig(entry["command"], entry.get("args", []), entry.get("env", {})))
        clients.append(client)
        return client, client.start()

    yield start
    for client in clients:
        client.stop()


def connect_twin(folder, servers: dict) -> dict[str, mcp.McpStatus]:
    mcp.connect_mcp_servers(write_config(folder, servers))
    return {s.server: s for s in mcp.mcp_statuses()}


def allow_everything(monkeypatch):
    answer_every_question(monkeypatch, lambda prompt: True)


# --- the items of tutorial section 6 --------------------------------------------------------------

def test_remote_servers(tmp_path, monkeypatch):
    """Only stdio: the twin cannot use a "url" entry; the full client speaks Streamable HTTP to it."""
    with FakeHttpMcp("json") as server:
        twin_status = connect_twin(tmp_path, {"remote": {"url": server.url}})["remote"]
        mcp.stop_mcp_servers()
        full_status = connect(tmp_path, {"remote": {"url": server.url}})["remote"]
        allow_everything(monkeypatch)
        assert run_call("mcp_remote_echo", '{"text": "over http"}') == "over http"
    assert twin_status.error and twin_status.tools == []
    assert full_status.error is None and full_status.tools == ["mcp_remote_echo"]


def test_requests_from_the_server(twin, started):
    """No client capabilities: the twin leaves a server's ping unanswered; the full client answers it."""
    client, _ = twin(fake("normal"))
    assert json.loads(client.call_tool("ping_first", {"wait": 1})) == {"error": "no reply from the client"}
    reply = json.loads(started(fake("normal")).call_tool("ping_first", {"wait": 10}))
    assert reply == {"jsonrpc": "2.0", "id": "srv-ping", "result": {}}


def test_tool_list_changes(tmp_path):
    """Dynamic changes: the twin keeps the tool list of start-up; the full client's registry follows the server."""
    set_tool_policy("mcp_fake_change_tools", "allow")
    connect_twin(tmp_path, {"fake": fake("normal")})
    assert tools.run_tool("mcp_fake_change_tools", "{}") == "changed"
    # The notification came before the reply on the same pipe, so the twin has read it by now.
    assert tools.get_tool("mcp_fake_extra") is None and tools.get_tool("mcp_fake_child_pid")
    mcp.stop_mcp_servers()
    empty_registry()
    connect(tmp_path, {"fake": fake("normal")})
    assert run_call("mcp_fake_change_tools", "{}") == "changed"
    assert wait_until(lambda: toolset.get("mcp_fake_extra") is not None)
    assert toolset.get("mcp_fake_child_pid") is None


def test_paginated_tool_list(twin, started):
    """Pagination: the twin sees the first page of tools; the full client follows nextCursor to all five."""
    _, first_page = twin(fake("paginate"))
    assert [t["name"] for t in first_page] == ["tool0", "tool1"]
    assert [t["name"] for t in started(fake("paginate")).tools] == [f"tool{i}" for i in range(5)]


def test_crashed_server(twin, started):
    """Reconnect: after a crash the twin fails every later call at once; the full client restarts it once."""
    client, _ = twin(fake("normal"))
    with pytest.raises(mcp.McpError, match=r"^server process exited \(code 3\)$"):
        client.call_tool("crash", {})
    with pytest.raises(mcp.McpError, match=r"^server process exited \(code 3\)$"):
        client.call_tool("echo", {"text": "again"})
    full = started(fake("normal"))
    with pytest.raises(mcp.McpError, match=r"server exited \(code 3\): fatal: the fake server crashed on purpose"):
        full.call_tool("crash", {})
    assert full.call_tool("echo", {"text": "back"}) == "back"


def test_content_other_than_text(twin, started):
    """Only text content: the twin returns a placeholder; the full client describes images, audio, resources, links."""
    client, _ = twin(fake("normal"))
    assert client.call_tool("rich", {}) == "(no content)"
    assert started(fake("normal")).call_tool("rich", {}).splitlines() == [
        "[image: image/png, 8 bytes]", "[audio: audio/wav, 4 bytes]", "inside a.txt",
        "[resource: file:///b.bin, unknown type, 3 bytes]", "[link: file:///c.md]"]


def test_long_and_colliding_names(tmp_path):
    """Names: the twin registers a 79-character name and fails the server at a collision;
    the full client keeps all five."""
    status = connect_twin(tmp_path, {"fake": fake("long_names")})["fake"]
    assert "already registered" in status.error
    assert len(tools.get_tool("mcp_fake_" + "a" * 70).name) == 79  # the API refuses names over 64
    mcp.stop_mcp_servers()
    empty_registry()
    names = connect(tmp_path, {"fake": fake("long_names")})["fake"].tools
    assert len(set(names)) == 5 and all(len(n) <= 64 for n in names)


# --- the extensions ----------------------------------------------------------------------------

def test_server_declaring_no_capabilities_lists_its_tools(twin, started):
    """A server that declares "capabilities": {} (as the tutorial's demo does): both clients still list its tools."""
    _, listed = twin(fake("no_capabilities"))
    assert [t["name"] for t in listed][:2] == ["echo", "child_pid"]
    assert [t["name"] for t in started(fake("no_capabilities")).tools][:2] == ["echo", "child_pid"]


def test_log_notifications(twin, started, capfd):
    """The twin ignores notifications/message; the full client keeps it with the server's stderr (/logs)
    and prints a warning and above as it comes."""
    client, _ = twin(fake("normal"))
    assert client.call_tool("log", {}) == "logged"
    assert "disk almost full" not in capfd.readouterr().err  # read before the reply, on the same pipe
    full = started(fake("normal"))
    assert full.call_tool("log", {}) == "logged"
    assert "warning: disk almost full" in full.from_server.tail and "info: cache warmed" in full.from_server.tail
    shown = capfd.readouterr().err
    assert "warning: disk almost full" in shown and "cache warmed" not in shown


def test_protocol_version(twin, started):
    """The twin goes on with any version the server answers; the full client refuses one it does not know."""
    _, listed = twin(fake("bad_version"))
    assert listed
    with pytest.raises(mcp.McpError, match="unsupported protocol version '1999-01-01'"):
        started(fake("bad_version"))


def test_timeout_and_cancellation(twin, started, monkeypatch):
    """The twin waits its fixed timeout and sends nothing; the full client uses the entry's and cancels."""
    client, _ = twin(fake("normal"))  # started with the tutorial's 10 s: a loaded machine takes more than 0.3
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.3)
    with pytest.raises(mcp.McpError, match=r"request tools/call timed out \(no reply in 0.3 s\)"):
        client.call_tool("hang", {})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 10.0)
    assert json.loads(client.call_tool("cancellations", {})) == []
    full = started(fake("normal", timeout=0.3))
    with pytest.raises(mcp.McpError, match="no reply to tools/call within 0.3 s"):
        full.call_tool("hang", {})
    full.cfg.timeout = 10
    (cancelled,) = json.loads(full.call_tool("cancellations", {}))
    assert cancelled["requestId"] == 3


def test_environment(twin, started, monkeypatch):
    """The twin hands over the whole environment, key included, and ${VAR} as written;
    the full client a safe part, expanded."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("MY_TOKEN", "tok-123")
    entry = fake("normal", env={"TOKEN_FOR_SERVER": "${MY_TOKEN}"})
    client, _ = twin(entry)
    seen = json.loads(client.call_tool("env", {}))
    assert seen["OPENAI_API_KEY"] == "sk-secret-value" and seen["TOKEN_FOR_SERVER"] == "${MY_TOKEN}"
    seen = json.loads(started(entry).call_tool("env", {}))
    assert "OPENAI_API_KEY" not in seen and seen["TOKEN_FOR_SERVER"] == "tok-123"


def test_children_of_the_server(twin, started):
    """The twin's stop() ends the server only; the full client ends its process group, children included."""
    client, _ = twin(fake("normal"))
    child = int(client.call_tool("child_pid", {}))
    client.stop()
    try:
        assert pid_alive(child)  # left behind, as npx's children would be
    finally:
        os.kill(child, signal.SIGKILL)
    full = started(fake("normal"))
    child = int(full.call_tool("child_pid", {}))
    full.stop()
    assert not pid_alive(child)


def test_lines_that_are_not_json(twin, started, capfd):
    """The twin skips a line that is not JSON in silence; the full client reports it."""
    client, _ = twin(fake("normal"))
    assert client.call_tool("garbage", {"text": "ok"}) == "ok"
    assert "not a JSON-RPC message" not in capfd.readouterr().err
    assert started(fake("normal")).call_tool("garbage", {"text": "ok"}) == "ok"
    assert "[mcp:fake] skipped a line that is not a JSON-RPC message: this is not JSON" in capfd.readouterr().err


def test_config_is_checked(tmp_path):
    """"args" as a string: the twin refuses it (never letter by letter) and fails that server only (one entry
    that is not even an object too); the full client names the file and the key, and the others start."""
    entry = {"command": sys.executable, "args": str(tmp_path / "made.py")}
    (tmp_path / "m").write_text("")  # were the string taken letter by letter, python would run this file
    statuses = connect_twin(tmp_path, {"a": entry, "oops": "not an entry", "demo": demo()})
    assert statuses["a"].error == '"args" must be a list of strings' and statuses["a"].tools == []
    assert statuses["oops"].error and statuses["demo"].tools == ["mcp_demo_word_count", "mcp_demo_dice"]
    statuses = connect(tmp_path, {"a": entry, "oops": "not an entry", "d": demo()})  # d: the twin holds demo's names
    assert 'mcp.json: mcpServers.a: "args" must be a list of strings' in statuses["a"].error
    assert "mcpServers.oops: must be an object" in statuses["oops"].error and len(statuses["d"].tools) == 2


def test_disabled_entry(tmp_path):
    """The twin starts an entry marked "disabled": true; the full client skips it."""
    assert connect_twin(tmp_path, {"off": fake("normal", disabled=True)})["off"].tools
    mcp.stop_mcp_servers()
    empty_registry()
    status = connect(tmp_path, {"off": fake("normal", disabled=True)})["off"]
    assert status.disabled and status.tools == []


def test_calls_from_many_threads(twin, started):
    """Both clients match replies to requests by id: 8 threads, answered last-first, each gets its own."""
    for client in (twin(fake("out_of_order", "8"))[0], started(fake("out_of_order", "8"))):
        assert echo_from_threads(client) == {i: str(i) for i in range(8)}


def test_pending_call_fails_when_the_server_dies(twin):
    """The twin's _mark_dead fails a waiting call at once, not at the timeout, and later requests too."""
    client, _ = twin(fake("normal"))
    with pytest.raises(mcp.McpError, match="exited"):
        client.call_tool("crash", {})
    with pytest.raises(mcp.McpError, match="exited"):
        client.call_tool("echo", {"text": "later"})


def test_missing_command(twin):
    """A command that does not exist: the twin says it failed to start."""
    with pytest.raises(mcp.McpError, match=r"^server failed to start: .*no/such/server"):
        twin({"command": "/no/such/server"})


def test_tutorial_prompt_and_decline(tmp_path, monkeypatch):
    """The twin asks "About to call MCP tool ... (from server demo)"; declining returns "call cancelled"."""
    connect_twin(tmp_path, {"demo": demo()})
    prompts = []
    answer_every_question(monkeypatch, lambda prompt: prompts.append(prompt) or False)
    assert tools.run_tool("mcp_demo_dice", "{}") == "call cancelled"
    assert re.search(r"About to call MCP tool mcp_demo_dice \(from server demo\)\nAllow\?$", prompts[0])
    assert permissions.policy_for("mcp_demo_dice") == "ask"
    assert tools.get_tool("mcp_demo_dice").description.startswith("[MCP:demo] Roll a six-sided die")


def test_tools_that_need_tasks(tmp_path):
    """A tool with taskSupport "required" is not offered by the full client (it would always fail) and
    /mcp says why; "optional" is called plainly. The twin registers all of them."""
    assert {"mcp_t_research", "mcp_t_maybe_task"} <= set(connect_twin(tmp_path, {"t": fake("tasks")})["t"].tools)
    mcp.stop_mcp_servers()
    empty_registry()
    status = connect(tmp_path, {"t": fake("tasks")})["t"]
    assert "mcp_t_research" not in status.tools and status.needs_tasks == ["research"]
    assert "mcp_t_maybe_task" in status.tools


def test_resources_and_prompts(tmp_path):
    """Section 6, resources and prompts: the twin sees a server's tools only; the full client also offers
    its resources to the model (through a tool that asks) and its prompts to the user."""
    assert "mcp_ctx_read_resource" not in connect_twin(tmp_path, {"ctx": fake("context")})["ctx"].tools
    mcp.stop_mcp_servers()
    empty_registry()
    status = connect(tmp_path, {"ctx": fake("context")})["ctx"]
    assert "mcp_ctx_read_resource" in status.tools and policy_of("mcp_ctx_read_resource") == "ask"
    assert [p["name"] for p in status.client.list_prompts()] == ["review"]
    assert status.client.read_resource("demo://notes/today") == "Buy milk. Call Ada."


def test_a_write_to_a_server_that_stopped_reading(twin, started, monkeypatch):
    """A 300 KB call to a server that no longer reads: the twin fails by its timeout (Node's write never
    blocks, so mcp.ts's timer fires: the twin writes from a thread of its own), the full client by its
    deadline, saying the server is not reading."""
    import threading
    clients = [twin(fake("normal"))[0], started(fake("normal"))]
    for client in clients:
        client.call_tool("stop_reading", {})
    monkeypatch.setattr(mcp, "REQUEST_TIMEOUT_S", 0.5)  # only now: a loaded machine may start slower
    clients[1].cfg.timeout = 0.5
    errors = []
    big = {"text": "x" * 300_000}
    callers = [threading.Thread(target=lambda c=c: errors.append(_error_of(lambda: c.call_tool("echo", big))),
                                daemon=True) for c in clients]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(20)
    assert not any(caller.is_alive() for caller in callers) and len(errors) == 2
    assert sorted(errors) == ["request tools/call timed out (no reply in 0.5 s)",
                              "tools/call failed: the server is not reading its input"]


def _error_of(call) -> str:
    try:
        call()
    except mcp.McpError as e:
        return str(e)
    return "no error"


def test_ids_that_are_not_numbers(twin, started):
    """Replies with ids true, [n] and {"id": n} before the real one: both readers go on and match the
    real reply (mcp.ts's Map finds nothing for them; a list used to kill the twin's reader thread)."""
    assert twin(fake("normal"))[0].call_tool("bool_id", {}) == "for my id"
    assert started(fake("normal")).call_tool("bool_id", {}) == "for my id"


def test_the_exit_is_noticed_while_a_child_holds_stdout(twin, started, tmp_path):
    """A server that exits while its child keeps stdout open: both fail the call with the exit at once,
    not at the timeout (the twin watches the process, as Node's 'exit' event does)."""
    pid_file = tmp_path / "child.pid"
    try:
        for client in (twin(fake("start_child", str(pid_file)))[0], started(fake("start_child"))):
            with pytest.raises(mcp.McpError, match="exited"):
                client.call_tool("crash", {})
    finally:  # the twin leaves its server's child behind, as the tutorial's client does: the test ends it
        if pid_file.exists() and pid_alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_stop_returns_at_once_and_reaps(twin, started):
    """A server that ignores SIGTERM: the twin's stop() returns at once, as Node's kill() does, and the
    server outlives it (the tutorial sends nothing stronger); its exit is reaped when it comes. The full
    client ends it."""
    client, _ = twin(fake("ignore_term"))
    client.stop()
    assert client.proc.poll() is None  # stop() did not wait for it, and it is still running
    client.proc.kill()
    assert wait_until(lambda: client.proc.returncode is not None)  # reaped by the twin's exit thread
    full = started(fake("ignore_term"))
    pid = full.link.transport.proc.pid
    full.stop()
    assert not pid_alive(pid)


def test_an_empty_description_is_kept():
    """mcp.ts keeps "" (it uses ??); the twin does too, where `or` would put the name in its place."""
    assert mcp.as_registry_tool("s", None, {"name": "t", "description": ""}).description == "[MCP:s] "
    assert mcp.as_registry_tool("s", None, {"name": "t"}).description == "[MCP:s] t"
