"""The stdio transport (beyond/wire/stdio.py, process.py): a safe environment, writes by their deadline,
lines within the limit, messages as JSON writes them."""
import json
import math

import pytest

from conftest import connect, fake, unhung, wait_until
from mcp import McpError


def test_environment_is_filtered_and_expanded(started, monkeypatch):
    """Secrets stay out; PATH passes; ${VAR} and ${VAR:-default} expand in env and args."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("MY_TOKEN", "tok-123")
    config = fake("normal", env={"TOKEN_FOR_SERVER": "${MY_TOKEN}", "MODE": "${UNSET_VAR_X:-fallback}"})
    env = json.loads(started(config).call_tool("env", {}))
    assert "OPENAI_API_KEY" not in env and "sk-secret-value" not in json.dumps(env)
    assert env["TOKEN_FOR_SERVER"] == "tok-123" and env["MODE"] == "fallback"
    assert env["PATH"]


def test_the_networks_settings_reach_the_server(started, monkeypatch):
    """A custom CA and a proxy (upper and lower case) reach the server, as uvx and npx need them; no secret does."""
    settings = {"SSL_CERT_FILE": "/etc/corp/ca.pem", "SSL_CERT_DIR": "/etc/corp/certs",
                "REQUESTS_CA_BUNDLE": "/ca.pem", "NODE_EXTRA_CA_CERTS": "/ca.pem",
                "HTTPS_PROXY": "http://proxy.corp:3128", "http_proxy": "http://p:8080", "no_proxy": "localhost,.corp"}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    env = json.loads(started(fake("normal")).call_tool("env", {}))
    assert {name: env.get(name) for name in settings} == settings and "OPENAI_API_KEY" not in env


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
    # stderr has its own thread
    assert wait_until(lambda: "stderr with \ufffd\ufffd bad bytes" in client.from_server.tail)
    assert "replaced invalid UTF-8" in capfd.readouterr().err


MESSAGES = [{"jsonrpc": "2.0", "id": 7, "method": "tools/call",
             "params": {"name": "é", "arguments": {"n": [1, 2.5, None, True], "s": "\u2028\x00\"\\ 😀"}}},
            {"jsonrpc": "2.0", "id": 8, "result": {}}, {"a": {"b": {"c": []}}, "": 0}]


def test_big_call_to_a_server_that_stopped_reading_fails_by_its_deadline(started):
    """1 MB of arguments to a server that no longer reads: the call fails by its timeout, stop() is quick."""
    client = started(fake("normal", timeout=1))
    client.call_tool("stop_reading", {})
    with pytest.raises(McpError, match="not reading its input"):  # a blocking write would hang here
        unhung(client.call_tool, "echo", {"text": "x" * 1_000_000})
    pid = client.link.transport.proc.pid
    client.stop()
    assert client.link.transport.proc.poll() is not None, f"server {pid} still runs"


class Inbox:
    """What a transport reports, kept (beyond/wire/base.py: Inbox)."""

    def __init__(self) -> None:
        self.rejected_ids, self.ends = [], []

    def deliver(self, message) -> bool:
        return True

    def ended(self, reason: str) -> None:
        self.ends.append(reason)

    def rejected(self, request_id: int, reason: str) -> None:
        self.rejected_ids.append((request_id, reason))

    def log(self, text: str) -> None:
        pass

    def said(self, line: str) -> None:
        pass


def test_a_request_queued_behind_a_write_that_fails_is_failed_at_once():
    """The pipe to a server that never reads is full: eight threads send at once, one writes for all and
    gives up at their deadline; each of the others' requests is failed through the inbox (none is left
    to its caller's longer wait), the writer's own raises, and no message was cut, so the session lives."""
    import sys
    import threading
    import time
    from beyond.client.config import ServerConfig
    from beyond.wire.base import About, TransportError
    from beyond.wire.stdio import StdioTransport
    inbox = Inbox()
    transport = StdioTransport("deaf", ServerConfig(sys.executable, ["-c", "import time; time.sleep(60)"]), inbox)
    transport.start()
    try:
        for pad in (3900, 0):  # each under PIPE_BUF: it goes whole or not at all, so the pipe fills at an end
            with pytest.raises(TransportError, match="not reading its input"):
                for _ in range(100_000):  # then not even the smallest message fits, nor a ping
                    transport.send({"jsonrpc": "2.0", "method": "n", "params": {"p": "p" * pad}}, 0, About())
        raised, barrier = [], threading.Barrier(8)

        def send(request_id: int) -> None:
            barrier.wait()
            try:
                transport.send({"jsonrpc": "2.0", "id": request_id, "method": "ping"}, time.monotonic() + 0.5, About())
            except TransportError as e:
                raised.append(str(e))
        senders = [threading.Thread(target=send, args=(i,), daemon=True) for i in range(8)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join(10)
        assert not any(sender.is_alive() for sender in senders)
        assert raised and all(error == "ping failed: the server is not reading its input" for error in raised)
        assert len(raised) + len(inbox.rejected_ids) == 8, (raised, inbox.rejected_ids)
        assert all(reason == "the server is not reading its input" for _, reason in inbox.rejected_ids)
        assert inbox.ends == []
    finally:
        transport.stop()


def test_oversized_reply_fails_its_call_and_the_session_goes_on(started, monkeypatch):
    """A reply over the message limit (1 MB here) fails its call naming the limit; later calls work."""
    from beyond.wire import stdio
    monkeypatch.setattr(stdio, "MAX_MESSAGE_BYTES", 1 << 20)
    client = started(fake("normal", timeout=20))
    with pytest.raises(McpError, match="over the 1 MB limit of one message"):
        client.call_tool("big_line", {"size": 3_000_000})
    assert client.call_tool("echo", {"text": "still here"}) == "still here"


def test_endless_line_fails_its_call_at_the_limit(started, monkeypatch):
    """A reply that never ends fails as soon as it passes the limit, not at the timeout."""
    from beyond.wire import stdio
    monkeypatch.setattr(stdio, "MAX_MESSAGE_BYTES", 1 << 20)
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


def test_nan_arguments_are_refused_before_sending(started):
    """NaN is not JSON: the call is refused and the server never sees it; the session goes on."""
    client = started(fake("normal"))
    with pytest.raises(McpError, match="tools/call not sent: Out of range float"):
        client.call_tool("echo", {"text": float("nan")})
    assert client.call_tool("echo", {"text": "fine"}) == "fine"


@pytest.mark.parametrize("message", MESSAGES)
def test_messages_are_written_as_json_writes_them(message, monkeypatch):
    """The encoder built once writes what json.dumps writes (and so does the one used without a C
    encoder); what JSON or UTF-8 cannot carry is refused by both."""
    from beyond.wire import base
    expected = json.dumps(message, ensure_ascii=False, allow_nan=False).encode()
    assert base.encode(message) == expected and base.encode(message, "\n") == expected + b"\n"
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    plain = base._one_encoder()
    assert plain(message).encode() == expected
    for bad in ({"x": math.inf}, {"x": "\ud800"}):
        with pytest.raises(ValueError):
            base.encode(bad)
        with pytest.raises(ValueError):
            plain(bad).encode()


def test_a_missing_cwd_is_reported_as_such(tmp_path):
    """An entry whose "cwd" does not exist is reported as that, not as a missing program."""
    from conftest import demo
    status = connect(tmp_path, {"x": {**demo(), "cwd": str(tmp_path / "missing")}})["x"]
    assert '"cwd"' in status.error and "is not a folder" in status.error and "No such file" not in status.error
