"""Interop: `/mcp login` against the official SDKs' example servers with their own authorization servers.

Run by `make interop` (which installs them into .interop/ at pinned versions): the Python SDK's
simple-auth pair (its authorization server shows a login form, which the stand-in browser
tests/conformance_browser.py submits), and the TypeScript SDK's example server with --oauth. Each
logs in with dynamic registration, and a tool call works; after a restart (the Python authorization
server forgets every registration; the TypeScript one answers 500 to its old tokens) the next
`/mcp login` registers anew and never sends the old token.
"""
import socket
import subprocess
import time
from contextlib import contextmanager

import pytest

from conftest import ROOT, agent_env, run_agent, workdir, written_by_another

INTEROP = ROOT / ".interop"
SIMPLE_AUTH = INTEROP / "venv" / "bin"
TS_EXAMPLE = INTEROP / "node" / "node_modules" / "@modelcontextprotocol" / "sdk" / "dist" / "esm" / "examples" / \
    "server" / "simpleStreamableHttp.js"
START_S = 30.0


@pytest.fixture(autouse=True)
def installed():
    if not ((SIMPLE_AUTH / "mcp-simple-auth-as").exists() and TS_EXAMPLE.exists()):
        pytest.fail("the example servers are not installed: run `make interop`")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(command: list[str], port: int, env: dict | None = None):
    """A server process, once it listens on `port` (within START_S); stopped afterwards."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + START_S
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None, f"{command[0]} exited"
            assert time.monotonic() < deadline, f"{command[0]} did not listen within {START_S:g} s"
            time.sleep(0.05)  # polling a port with a deadline: the server gives no other sign it is up
        yield process
    finally:
        process.terminate()
        process.wait(10)


def login_env(tmp_path) -> dict:
    env = agent_env(key=None)
    env.update(BROWSER=str(ROOT / "tests" / "conformance_browser.py"), BROWSER_PAGE_FILE=str(tmp_path / "page.html"))
    return env


def log_in_and_call(tmp_path, url: str, tool: str, arguments: str) -> str:
    """The agent's REPL (in the folder tmp_path/agent, made the first time): /mcp login, then the tool; what it
    printed."""
    cwd = tmp_path / "agent"
    if not cwd.exists():
        workdir(cwd, {"remote": {"type": "http", "url": url, "timeout": 30}})
    done = run_agent(cwd, ["/mcp login remote", f"/call {tool} {arguments}", "y", "/exit"], login_env(tmp_path),
                     timeout=90)
    assert "Logged in" in written_by_another(tmp_path / "page.html")  # the browser's page says what the terminal does
    return done.stdout


def test_python_sdk_simple_auth_logs_in_and_again_after_its_restart(tmp_path):
    auth_port, mcp_port = free_port(), free_port()
    authorization = [str(SIMPLE_AUTH / "mcp-simple-auth-as"), f"--port={auth_port}"]
    url = f"http://localhost:{mcp_port}/mcp"
    with serving([str(SIMPLE_AUTH / "mcp-simple-auth-rs"), f"--port={mcp_port}", "--transport=streamable-http",
                  f"--auth-server=http://localhost:{auth_port}"], mcp_port):
        with serving(authorization, auth_port):
            said = log_in_and_call(tmp_path, url, "mcp_remote_get_time", "{}")
            assert "remote: 1 tool; logged in (scopes: user; until " in said and '"current_time"' in said
        (tmp_path / "page.html").unlink()
        with serving(authorization, auth_port):  # restarted: our registration is unknown there now
            began = time.monotonic()
            said = log_in_and_call(tmp_path, url, "mcp_remote_get_time", "{}")
            assert time.monotonic() - began < 60 and '"current_time"' in said


def test_typescript_sdk_example_with_oauth_logs_in_and_again_after_its_restart(tmp_path):
    """After a restart the example answers 500 to the token it gave before: /mcp login never sends it."""
    auth_port, mcp_port = free_port(), free_port()
    env = {**agent_env(key=None), "MCP_PORT": str(mcp_port), "MCP_AUTH_PORT": str(auth_port)}
    url = f"http://localhost:{mcp_port}/mcp"
    with serving(["node", str(TS_EXAMPLE), "--oauth"], mcp_port, env):
        said = log_in_and_call(tmp_path, url, "mcp_remote_greet", '{"name": "interop"}')
    assert "logged in (scopes: mcp:tools; until " in said and "Hello, interop!" in said
    with serving(["node", str(TS_EXAMPLE), "--oauth"], mcp_port, env):
        said = log_in_and_call(tmp_path, url, "mcp_remote_greet", '{"name": "again"}')
    assert "Hello, again!" in said
