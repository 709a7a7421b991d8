"""The full agent against hostile servers and models: every wait bounded, every byte counted, no process left."""
import json
import math
import os
import random
import signal
import sys
import threading
import time

import pytest

import beyond_mcp
from beyond.servers import registry
from beyond.servers.toolsearch import MAX_TOOL_SPECS_BYTES, NAMES_SHOWN, Offered
import chat
import permissions
import tools
from beyond.client.from_server import ANSWERS_PER_S
from mcp import McpError
from conftest import (INDEX, agent_env, connect, fake, processes_in, run_agent, said_on_stderr, unhung, wait_until,
                      workdir)
from fakes.openai_server import FakeOpenAI, answer


def test_signal_at_any_moment_of_start_up_leaves_no_server(tmp_path):
    """SIGTERM at random moments of start-up, just after spawn included: servers that ignore SIGTERM
    and the end of their input are killed all the same."""
    import subprocess
    seed = random.randrange(1 << 32)  # printed on failure: TEST_SEED=<seed> replays the same moments
    seed = int(os.environ.get("TEST_SEED", seed))
    rng = random.Random(seed)
    delays = [None] + [rng.uniform(0.0, 0.4) for _ in range(7)]  # None: as soon as a server runs
    failures = []

    def one(i: int, delay: float | None) -> None:
        cwd = workdir(tmp_path / str(i), {f"s{j}": fake("ignore_term", "0.2", timeout=30) for j in range(2)})
        agent = subprocess.Popen([sys.executable, INDEX], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=agent_env(key=None))
        if delay is None:
            wait_until(lambda: set(processes_in(cwd)) - {agent.pid}, 20)
        else:
            time.sleep(delay)  # the moment of the signal is what this test varies; nothing to wait for
        agent.send_signal(signal.SIGTERM)
        try:
            agent.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
            agent.communicate()
            failures.append(f"delay {delay}: the agent did not exit")
        if not wait_until(lambda: not processes_in(cwd), 5):
            failures.append(f"delay {delay}: left {processes_in(cwd)}")

    threads = [threading.Thread(target=one, args=(i, d)) for i, d in enumerate(delays)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert failures == [], f"TEST_SEED={seed}"


# --- writes never block past a deadline -----------------------------------------------------------

def test_big_call_to_a_server_that_stopped_reading_fails_by_its_deadline(started):
    """1 MB of arguments to a server that no longer reads: the call fails by its timeout, stop() is quick."""
    client = started(fake("normal", timeout=1))
    client.call_tool("stop_reading", {})
    with pytest.raises(McpError, match="not reading its input"):  # a blocking write would hang here
        unhung(client.call_tool, "echo", {"text": "x" * 1_000_000})
    pid = client.link.transport.proc.pid
    client.stop()
    assert client.link.transport.proc.poll() is not None, f"server {pid} still runs"


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


def test_agent_leaves_promptly_whatever_the_server_does(tmp_path, start_agent):
    """SIGTERM while a call is stuck writing to a server that neither reads nor minds SIGTERM: gone, nothing left."""
    cwd = workdir(tmp_path, {"x": fake("ignore_term", timeout=60)},
                  {"mcp_x_stop_reading": "allow", "mcp_x_echo": "allow"})
    agent = start_agent(cwd, agent_env(key=None))
    agent.stdin.write("/call mcp_x_stop_reading\n")
    agent.stdin.write('/call mcp_x_echo {"text": "' + "x" * 1_000_000 + '"}\n')
    agent.stdin.flush()
    assert wait_until(lambda: len(processes_in(cwd)) == 2, 20)  # the agent and its server
    agent.send_signal(signal.SIGTERM)
    agent.communicate(timeout=10)  # the write's own deadline is 60 s
    assert agent.returncode == 128 + signal.SIGTERM
    assert wait_until(lambda: not processes_in(cwd), 5)


# --- start-up and restarts ---------------------------------------------------------------------------

def test_server_that_exits_at_once_is_reported_without_traceback(tmp_path, capfd):
    """Ten servers that exit at once: each reported as "exited (code 2): bad config", no thread traceback."""
    quitter = {"command": "sh", "args": ["-c", "echo bad config >&2; exit 2"]}
    statuses = connect(tmp_path, {f"q{i}": quitter for i in range(10)})
    assert [s.error for s in statuses.values()] == ["initialize failed: server exited (code 2): bad config"] * 10
    assert "Traceback" not in capfd.readouterr().err


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


def test_unexpected_failure_while_starting_is_that_servers_error(tmp_path):
    """A tools/list answer of {"tools": 5} fails that server with a clear error; it is stopped, the others run."""
    statuses = connect(tmp_path, {"odd": fake("tools_not_a_list"), "fine": fake("normal")})
    assert 'tools/list answered "tools" that is not a list' in statuses["odd"].error
    assert statuses["fine"].error is None


# --- every input has a ceiling ---------------------------------------------------------------------

def test_oversized_reply_fails_its_call_and_the_session_goes_on(started, monkeypatch):
    """A reply over the message limit (1 MB here) fails its call naming the limit; later calls work."""
    import beyond.wire.stdio as beyond_stdio
    monkeypatch.setattr(beyond_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    client = started(fake("normal", timeout=20))
    with pytest.raises(McpError, match="over the 1 MB limit of one message"):
        client.call_tool("big_line", {"size": 3_000_000})
    assert client.call_tool("echo", {"text": "still here"}) == "still here"


def test_endless_line_fails_its_call_at_the_limit(started, monkeypatch):
    """A reply that never ends fails as soon as it passes the limit, not at the timeout."""
    import beyond.wire.stdio as beyond_stdio
    monkeypatch.setattr(beyond_stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    client = started(fake("normal", timeout=30))
    with pytest.raises(McpError, match="over the 1 MB limit"):  # not "no reply within 30 s"
        client.call_tool("big_line", {"size": 3_000_000, "newline": False})


def test_long_stderr_line_is_cut(started):
    """A 1 MB stderr line is kept as its first 8 KB and a note."""
    client = started(fake("normal"))
    assert client.call_tool("long_stderr", {"size": 1_000_000}) == "written"
    assert wait_until(lambda: any("(cut at 8 KB)" in line for line in client.from_server.tail))
    (line,) = [line for line in client.from_server.tail if "(cut at 8 KB)" in line]
    assert len(line) < 8300 and " end" not in line


def test_deep_json_is_a_parse_error_not_a_dead_reader(started, capfd):
    """JSON nested 100,000 deep is skipped as not JSON-RPC; the reader lives and the next call works."""
    client = started(fake("normal", timeout=1))
    with pytest.raises(McpError, match="no reply to tools/call within 1 s"):
        client.call_tool("deep", {})
    assert client.call_tool("echo", {"text": "alive"}) == "alive"
    assert "skipped a line that is not a JSON-RPC message" in capfd.readouterr().err


def test_tool_result_is_cut_for_the_model():
    """A 300,000-character result reaches the model as 100,000 and a note of how much was cut."""
    tools.register_tool(tools.Tool("huge", "", {"type": "object"}, lambda args: "y" * 300_000))
    permissions.set_policy("huge", "allow")
    result = tools.run_tool("huge", "{}")
    assert result.startswith("y" * 100_000) and "200,000 more characters cut" in result
    assert len(result) < 100_200


def test_read_is_bounded_in_bytes_and_refuses_a_fifo(tmp_path):
    """A one-line 1 MB file gives a 64 KB page; a FIFO is refused instead of blocking."""
    import os
    (tmp_path / "one-line.txt").write_text("z" * 1_000_000)
    os.mkfifo(tmp_path / "pipe")
    tools.register_builtin_tools(str(tmp_path))
    page = tools.run_tool("read", '{"path": "one-line.txt"}')
    assert page.startswith("z" * 1000) and len(page) < 70_000 and "longer than 65,536 bytes" in page
    assert "not a regular file" in tools.run_tool("read", '{"path": "pipe"}')


def test_at_most_128_tools_are_offered(capfd):
    """130 tools: the request carries 128 and a warning names the two left out."""
    for i in range(130):
        tools.register_tool(tools.Tool(f"t{i:03d}", "", {"type": "object"}, lambda args: ""))
        permissions.set_policy(f"t{i:03d}", "ask")
    assert len(Offered()(tools.openai_tools())) == 128
    assert "left out: t128, t129" in capfd.readouterr().err


def test_tool_specs_are_bounded_in_bytes(capfd):
    """100 tools with 5,000-character descriptions: the request carries what fits in the byte budget,
    in registration order, and one warning says how many were left out."""
    for i in range(100):
        tools.register_tool(tools.Tool(f"t{i:03d}", "x" * 5000, {"type": "object"}, lambda args: ""))
        permissions.set_policy(f"t{i:03d}", "ask")
    offered = Offered()(tools.openai_tools())
    assert 0 < len(json.dumps(offered)) <= MAX_TOOL_SPECS_BYTES and offered[0]["function"]["name"] == "t000"
    assert f"and {100 - len(offered) - NAMES_SHOWN:,} more" in capfd.readouterr().err


def test_tools_a_model_endpoint_would_refuse_are_left_out(tmp_path):
    """inputSchema a string, a list or a non-object schema: not offered, named in a warning and in /mcp;
    a long description is sent bounded; the endpoint accepts every request."""
    cwd = workdir(tmp_path, {"b": fake("bad_schemas")})
    with FakeOpenAI([answer("ok")]) as model:
        done = run_agent(cwd, ["hi", "/mcp", "/exit"], agent_env(model.base_url))
    assert model.violations == []
    (good,) = [t["function"] for t in model.requests[0]["tools"] if t["function"]["name"].startswith("mcp_b")]
    assert good["name"] == "mcp_b_good" and len(good["description"]) < 2100
    for name in ("text", "list", "string"):
        assert f"{name}: not offered, its inputSchema is not an object schema" in done.stdout
        assert f"tool {name} is not offered" in done.stderr


# --- a changed tool list is read again once ------------------------------------------------------

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


# --- deadlines, not per-read timeouts --------------------------------------------------------------

def test_trickling_chat_reply_ends_at_the_deadline(endpoint, monkeypatch):
    """An endpoint that sends one byte every 0.1 s forever: ChatError once the 1 s deadline passes."""
    from fakes.openai_server import Trickle
    monkeypatch.setattr(chat, "HTTP_TIMEOUT_S", 1.0)
    endpoint(Trickle(threading.Event()))
    with pytest.raises(chat.ChatError, match="no reply from .* within 1 s"):  # a per-read timeout: never
        unhung(chat.complete, chat.new_history())


def test_trickling_remote_answer_ends_at_the_deadline():
    """A remote MCP server that trickles an event stream without a newline: the call fails at its timeout."""
    from fakes.http_server import FakeHttpMcp
    with FakeHttpMcp("trickle") as server:
        client = beyond_mcp.McpClient("remote", {"url": server.url, "timeout": 1})
        client.start()
        with pytest.raises(McpError, match="no reply to tools/call within 1 s"):  # a per-read timeout: never
            unhung(client.call_tool, "echo", {"text": "x"})
        client.stop()


def test_oversized_chat_reply_is_refused(endpoint, monkeypatch):
    """A reply over the limit (1 MB here) is a ChatError naming the limit, not memory."""
    from fakes.openai_server import answer
    monkeypatch.setattr(chat, "MAX_REPLY_BYTES", 1 << 20)
    endpoint(answer("w" * 2_000_000))
    with pytest.raises(chat.ChatError, match="over the 1 MB limit"):
        chat.complete(chat.new_history())


# --- every chat transport failure is a ChatError ----------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut", "IncompleteRead"),
    (b"NOT HTTP AT ALL\r\n\r\n", "BadStatusLine"),
    (b"HTTP/1.1 200 OK\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", "LineTooLong"),
    (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n", "got more than 100 headers"),
])
def test_broken_http_is_one_clear_chat_error(endpoint, raw, expected):
    """A reply cut short, a bad status line, a 70 KB header line, 120 headers: each one ChatError line."""
    from fakes.openai_server import Raw
    endpoint(Raw(raw))
    with pytest.raises(chat.ChatError) as caught:
        chat.complete(chat.new_history())
    assert expected in str(caught.value) and "check OPENAI_BASE_URL" in str(caught.value)
    assert "\n" not in str(caught.value)


# --- a turn always ends with a valid history --------------------------------------------------------

def test_odd_model_messages_are_stored_as_the_api_wants_them(endpoint, monkeypatch):
    """Arguments as an object, a reused id, a missing id (a whole reply): stored normalised; the next request is valid."""
    monkeypatch.setattr(chat, "streaming", False)
    from fakes.openai_server import answer, check_request
    tools.register_tool(tools.Tool("echo", "", {"type": "object"}, lambda args: f"echo {args.get('n')}"))
    permissions.set_policy("echo", "allow")
    odd = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "same", "type": "function", "function": {"name": "echo", "arguments": {"n": 1}}},
        {"id": "same", "type": "function", "function": {"name": "echo", "arguments": '{"n": 2}'}},
        {"type": "function", "function": {"name": "echo", "arguments": None}}]}
    fake_model = endpoint(odd, answer("done"))
    history = chat.new_history()
    assert chat.run_turn(history, "go") == "done"
    assert fake_model.violations == [] and check_request({"model": "m", "messages": history}) == []
    calls = history[2]["tool_calls"]
    assert len({c["id"] for c in calls}) == 3 and calls[0]["function"]["arguments"] == '{"n": 1}'
    assert [m["content"] for m in history if m["role"] == "tool"] == ["echo 1", "echo 2", "echo None"]


def test_any_failure_inside_a_turn_closes_it(endpoint):
    """An error raised while showing a tool result (not a ChatError): the turn is closed and the next one works."""
    from fakes.openai_server import answer, check_request, tool_calls
    tools.register_tool(tools.Tool("echo", "", {"type": "object"}, lambda args: "x"))
    permissions.set_policy("echo", "allow")
    endpoint(tool_calls(("echo", {}), ("echo", {})), answer("next"))
    history = chat.new_history()

    def broken_terminal(name, result):
        raise UnicodeEncodeError("ascii", "\udc80", 0, 1, "a lone surrogate")
    with pytest.raises(UnicodeEncodeError):
        chat.run_turn(history, "first", on_tool=broken_terminal)
    assert check_request({"model": "m", "messages": history}) == []
    assert chat.run_turn(history, "second") == "next"


# --- strict where the protocol is strict ---------------------------------------------------------

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


def test_nan_arguments_are_refused_before_sending(started):
    """NaN is not JSON: the call is refused and the server never sees it; the session goes on."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match="tools/call not sent: Out of range float"):
        client.call_tool("echo", {"text": float("nan")})
    assert client.call_tool("echo", {"text": "fine"}) == "fine"


MESSAGES = [{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
             "params": {"name": "é", "arguments": {"n": [1, 2.5, None, True], "s": "\u2028\x00\"\\ 😀"}}},
            {"jsonrpc": "2.0", "id": 8, "result": {}}, {"a": {"b": {"c": []}}, "": 0}]


@pytest.mark.parametrize("message", MESSAGES)
def test_messages_are_written_as_json_writes_them(message, monkeypatch):
    """The encoder built once writes what json.dumps writes (and so does the one used without a C
    encoder); what JSON or UTF-8 cannot carry is refused by both."""
    import beyond.wire.base as beyond_base
    expected = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
    assert beyond_base.encode(message) == expected and beyond_base.encode(message, "\n") == expected + b"\n"
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    plain = beyond_base._one_encoder()
    assert plain(message).encode() == expected
    for bad in ({"x": math.inf}, {"x": "\ud800"}):
        with pytest.raises(ValueError):
            beyond_base.encode(bad)
        with pytest.raises(ValueError):
            plain(bad).encode()


@pytest.mark.parametrize("line", [b'{"id": 1}\n', b' \t{"id": 1}\r\n', b'{"id": 1} \n', b'{"id": 1}{"id": 2}\n',
                                  b'[{"id": 1}]\n', b'{"id": 1} x\n', b'{"id": \n', b"\xff{}\n", b'"{}"\n'])
def test_a_line_is_read_as_json_reads_it(line):
    """The decoder's short way takes the lines json.loads takes, and skips the others."""
    from beyond.client.content import parse_message
    try:
        expected = json.loads(line.decode("utf-8", "replace"))
    except ValueError:
        expected = None
    message, complaint = parse_message(line)
    assert message == (expected if isinstance(expected, dict) else None)
    assert (complaint is None) == (message is not None and b"\xff" not in line)


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


def test_tool_names_with_lone_surrogates(tmp_path):
    """A tool name with a lone surrogate (and one over 64 characters) registers under a clean name."""
    assert registry.registry_name("s", "bad\udc80" + "n" * 80).startswith("mcp_s_bad_nnn")
    assert len(registry.registry_name("s", "bad\udc80" + "n" * 80)) == 64


def test_a_descendant_that_left_the_servers_group_is_stopped_at_exit(tmp_path):
    """A server's child in a session of its own (as daemons do) is re-parented to the agent, not to init,
    and stopped when the agent leaves."""
    from conftest import pid_alive
    pid_file = tmp_path / "escaped.pid"
    cwd = workdir(tmp_path / "agent", {"d": fake("escaped_child", str(pid_file))})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None))  # it also checks nothing runs in cwd
    assert "d (" in done.stdout and not pid_alive(int(pid_file.read_text()))


def test_listing_is_bounded_in_bytes_over_all_pages(tmp_path):
    """A server whose tools/list pages go on with 2 MB each is refused once they pass the total, not at page 100."""
    import beyond.client.content as beyond_client
    status = connect(tmp_path, {"big": fake("endless_pages")})["big"]
    assert status.error and f"tools/list answered over {beyond_client.MAX_LISTED_BYTES >> 20} MB in its pages" in status.error


def test_a_missing_cwd_is_reported_as_such(tmp_path):
    """An entry whose "cwd" does not exist is reported as that, not as a missing program."""
    from conftest import demo
    status = connect(tmp_path, {"x": {**demo(), "cwd": str(tmp_path / "missing")}})["x"]
    assert '"cwd"' in status.error and "is not a folder" in status.error and "No such file" not in status.error


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
