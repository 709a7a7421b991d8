"""Shared test set-up: day15/ on the import path, a clean registry per test, config and process helpers."""
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DAY15 = ROOT / "day15"
FAKES = ROOT / "tests" / "fakes"
sys.path.insert(0, str(DAY15))
sys.path.insert(0, str(ROOT / "tests"))

import beyond_mcp  # after the path insert above: the published entry
import mcp
import permissions
import tools
from beyond.servers import toolset


@pytest.fixture
def started():
    """Start a full client for a config and always stop it, so no test leaves a process behind."""
    clients = []

    def start(config: dict, name: str = "fake", echo: bool = False, **parts) -> beyond_mcp.McpClient:
        client = beyond_mcp.McpClient(name, config, echo=echo, **parts)
        clients.append(client)
        client.start()
        return client

    yield start
    for client in clients:
        client.stop()


@pytest.fixture
def remote():
    """A fake remote server in a mode, and a started client for it; both stopped afterwards."""
    opened = []

    from fakes.http_server import FakeHttpMcp

    def start(mode: str, **entry):
        server = FakeHttpMcp(mode).__enter__()
        client = beyond_mcp.McpClient("remote", {"url": server.url, "type": "http", **entry})
        opened.append((server, client))
        client.start()
        return server, client

    yield start
    for server, client in opened:
        client.stop()
        server.__exit__(None, None, None)


@pytest.fixture
def servers():
    """A set of servers of the full agent's (beyond/servers/connect.py), stopped after the test."""
    from beyond.asks.handlers import Handlers
    from beyond.console import Console
    from beyond.servers.connect import Servers
    made = Servers(asks=Handlers(Console()))
    yield made
    made.stop_mcp_servers()


@pytest.fixture(autouse=True)
def own_user_dirs(tmp_path_factory, monkeypatch):
    """Every test (and every agent it starts) keeps answers, pins and history in folders of its own."""
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    return home


@pytest.fixture(autouse=True)
def clean_state():
    """Every test starts with an empty registry, default policies (the lesson's and the full agent's) and no
    servers."""
    from beyond.folder import approvals
    empty_registry()
    permissions.load_policies(str(ROOT / "tests" / "no-such-policy-file.json"))  # the defaults alone
    approvals.load_policies({})
    yield
    mcp.stop_mcp_servers()
    beyond_mcp.stop_mcp_servers()
    empty_registry()


def set_tool_policy(name: str, policy: str) -> None:
    """A tool's policy for this test, as GeekAgent.json would give it to the lesson and to the full agent
    (clean_state restores the defaults)."""
    from beyond.folder import approvals
    permissions._policies[name] = approvals.POLICIES[name] = policy


def policy_of(name: str) -> str:
    """A tool's policy in the full agent now (folder/approvals.py's table)."""
    from beyond.folder.approvals import Approvals
    return Approvals().policy_for(name)


def answer_every_question(monkeypatch, answer) -> None:
    """Each y/N question this test asks on stdin (permissions.ask_on_stdin) answered by answer(prompt)."""
    monkeypatch.setattr("builtins.input", lambda prompt="": "y" if answer(prompt.removesuffix(" [y/N] ")) else "n")


def run_call(name: str, arguments_json: str) -> str:
    """One tool call as the full agent runs it (beyond/servers/calls.py), over the full agent's tools."""
    from beyond.servers.calls import Calls
    return Calls().run(name, arguments_json)


def empty_registry() -> None:
    """The lesson's registry and the full agent's set, both empty (the built-ins gone too)."""
    tools._registry.clear()
    toolset._own.clear()


@pytest.fixture
def model():
    """The full agent's model client (beyond/model/client.py), new for each test; its tool calls run as the
    full agent runs them (beyond/servers/calls.py)."""
    from beyond.model.client import ModelChat
    from beyond.servers.calls import Calls
    return ModelChat(calls=Calls())


@pytest.fixture
def endpoint(monkeypatch):
    """Point chat.py at a scripted model (with streaming quirks, if given); no request may break the API's rules."""
    from fakes.openai_server import FakeOpenAI
    fakes = []

    def start(*script, quirks=frozenset()):
        fake_model = FakeOpenAI(list(script), quirks).__enter__()
        fakes.append(fake_model)
        monkeypatch.setenv("OPENAI_BASE_URL", fake_model.base_url + "/")  # a trailing slash is tolerated
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key")
        monkeypatch.setenv("OPENAI_MODEL", "test-model")
        return fake_model

    yield start
    for fake_model in fakes:
        fake_model.__exit__(None, None, None)
        assert fake_model.violations == []


def echo_from_threads(client, count: int = 8) -> dict[int, str]:
    """call_tool("echo") from `count` threads at once; what each thread got, by its number."""
    import threading
    results: dict[int, str] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, client.call_tool("echo", {"text": str(i)})))
               for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return results


def write_config(folder: Path, servers: dict) -> str:
    """An mcp.json in `folder` with these mcpServers; returns its path."""
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def connect(folder: Path, servers: dict, using=None) -> dict:
    """The full client's connect_mcp_servers for these servers (of `using`, a Servers, or the published
    entry's); statuses by server name."""
    return {s.server: s for s in (using or beyond_mcp).connect_mcp_servers(write_config(folder, servers))}


# A guard against a hang, far above what any behaviour under test needs even on a loaded machine:
# a test that would hang forever fails instead. It measures nothing; what a test checks is the outcome.
HANG_GUARD_S = 60.0


def unhung(function, *args):
    """function(*args) on a thread of its own: its result, or its exception raised here; a failure
    if it is still running after HANG_GUARD_S."""
    import threading
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, function(*args)))
        except BaseException as e:  # handed to the test's thread
            outcome.append((False, e))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert outcome, f"{getattr(function, '__name__', function)} still running after {HANG_GUARD_S:g} s"
    done, value = outcome[0]
    if not done:
        raise value
    return value


class Asked(list):
    """The trust question's stand-in: keeps every question it is asked, and answers yes."""

    def __call__(self, question: str) -> bool:
        self.append(question)
        return True


def wait_until(condition, timeout: float = 10.0) -> bool:
    """Poll a condition with a deadline (for effects that happen on another thread)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def written_by_another(path: Path, timeout: float = 10.0) -> str:
    """The text of a file another process writes (whole: it renames it into place), once it is there."""
    assert wait_until(path.exists, timeout), f"{path} was not written within {timeout:g} s"
    return path.read_text()


def said_on_stderr(capfd, text: str) -> bool:
    """Whether `text` reaches our stderr (written by another thread) before wait_until gives up."""
    said: list[str] = []
    return wait_until(lambda: said.append(capfd.readouterr().err) or text in "".join(said))


def fake(mode: str, arg: str = "", **extra) -> dict:
    """An mcpServers entry that runs the scripted fake server in `mode`."""
    args = [str(FAKES / "fake_server.py"), mode] + ([arg] if arg else [])
    return {"command": sys.executable, "args": args, **extra}


def demo() -> dict:
    return {"command": sys.executable, "args": [str(DAY15 / "demo_server.py")]}


def group_alive(pgid: int) -> bool:
    """True while any process of the group runs; zombies (which nobody here reaps) do not count."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(stat[2]) == pgid and stat[0] != b"Z":
            return True
    return False


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


# --- running the agent end to end ---------------------------------------------------------

AGENT = str(DAY15 / "beyond_agent.py")  # the full agent's door
LESSON = str(DAY15 / "index.py")        # the tutorial's program


def workdir(tmp_path: Path, servers: dict, policies: dict | None = None) -> Path:
    """A working directory with its own .geekagent/ config, as a user's project would have."""
    (tmp_path / ".geekagent").mkdir(parents=True)
    (tmp_path / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    if policies is not None:
        (tmp_path / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": policies}))
    return tmp_path


def agent_env(base_url: str | None = None, key: str | None = "sk-test", trust: bool = True) -> dict:
    """The agent's environment: no OPENAI_* of ours, and the test's folder trusted explicitly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GEEKAGENT_"))}
    if trust:
        env["GEEKAGENT_TRUST"] = "1"
    if base_url:
        env["OPENAI_BASE_URL"] = base_url
    if key:
        env["OPENAI_API_KEY"] = key
    return env


def run_agent(cwd: Path, lines: list[str], env: dict, timeout: float = 30,
              args: tuple[str, ...] = (), program: str = AGENT) -> subprocess.CompletedProcess:
    """Run the full agent's REPL (or `program`: LESSON, the tutorial's) to completion on these input lines,
    with `args`; every run is bounded."""
    done = subprocess.run([sys.executable, program, *args], cwd=cwd, input="".join(f"{l}\n" for l in lines),
                          capture_output=True, text=True, env=env, timeout=timeout)
    if program == LESSON:  # as index.ts, the twin's stop() sends SIGTERM and leaves: allow the servers a moment
        assert wait_until(lambda: processes_in(cwd) == [], 5)
    assert_no_process_left(cwd)
    return done


# The agents the tests started, by pid, with their folder: an agent is not dumpable, so a test that does not
# run as root cannot read its /proc/<pid>/cwd.
AGENTS: dict[int, str] = {}


def processes_in(cwd: Path) -> list[int]:
    """Live (non-zombie) processes whose working directory is cwd: the servers the agent started."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.readlink(f"/proc/{entry.name}/cwd") == str(cwd) and pid_alive(int(entry.name)):
                    found.append(int(entry.name))
            except PermissionError:  # not dumpable: an agent (sandbox.keep_to_itself), whose cwd we know
                if AGENTS.get(int(entry.name)) == str(cwd) and pid_alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def assert_no_process_left(cwd: Path) -> None:
    assert processes_in(cwd) == []


@pytest.fixture
def start_agent():
    """Start the full agent with pipes; whatever a test leaves running gets SIGTERM, then SIGKILL."""
    agents = []

    def start(cwd: Path, env: dict, args: tuple[str, ...] = ()) -> subprocess.Popen:
        agent = subprocess.Popen([sys.executable, AGENT, *args], cwd=cwd, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                 preexec_fn=_default_sigint)
        agents.append(agent)
        AGENTS[agent.pid] = str(cwd)
        return agent

    yield start
    for agent in agents:
        if agent.poll() is None:
            agent.send_signal(signal.SIGTERM)  # the agent stops its servers on the way out
            try:
                agent.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.communicate(timeout=10)


def wait_for_output(agent: subprocess.Popen, text: str, timeout: float = 10.0, stream: str = "stdout") -> str:
    """Read the agent's stdout (or stderr) until `text` appears, at most `timeout` seconds."""
    seen, deadline, fd = b"", time.monotonic() + timeout, getattr(agent, stream).fileno()
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], f"no {text!r} within {timeout} s: {seen!r}"
        chunk = os.read(fd, 65536)
        assert chunk, f"the agent ended before printing {text!r}: {seen!r}"
        seen += chunk
    return seen.decode()


def _take_terminal() -> None:
    """In the child: make the pseudo-terminal its controlling terminal, so Ctrl-C there sends SIGINT."""
    import fcntl
    import termios
    _default_sigint()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _default_sigint() -> None:
    """In the child: SIGINT as a terminal gives it. A suite started in the background (`make test &`)
    inherits SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_in_pty(args: list[str], cwd: Path, env: dict, steps: list[tuple], timeout: float = 30) -> str:
    """Run a command on a pseudo-terminal; for each (text, keys[, again]) wait until `text` appears (after
    the keys typed last), then type keys (or what keys(shown) returns, when it is a function that acts
    at that moment, given what the terminal showed so far). Returns everything the terminal showed.

    `again` is typed once more each second the text has not appeared (five times at most): CPython's
    readline waits in select() for a key, and a Ctrl-C that lands just before it enters select() is
    seen only at the next key (a real user presses Ctrl-C again). Every wait is bounded; the process
    is killed if it lingers.
    """
    import pty
    main_fd, child_fd = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=child_fd, stdout=child_fd, stderr=child_fd,
                            start_new_session=True, preexec_fn=_take_terminal)
    AGENTS[proc.pid] = str(cwd)  # processes_in finds it as a user who cannot read an agent's /proc/<pid>/cwd
    os.close(child_fd)
    seen, mark, deadline = b"", 0, time.monotonic() + timeout
    try:
        for text, keys, *again in [(None, "", None)] + steps:
            retries = 0
            while text is not None and text.encode() not in seen[mark:]:  # new output only
                left = deadline - time.monotonic()
                assert left > 0, f"no {text!r} on the terminal within {timeout} s: {seen.decode(errors='replace')}"
                if select.select([main_fd], [], [], min(left, 1.0))[0]:
                    try:
                        seen += os.read(main_fd, 65536)
                    except OSError:  # the program ended and the terminal closed
                        raise AssertionError(f"ended before {text!r}: {seen.decode(errors='replace')}") from None
                elif again and again[0] and retries < 5:
                    retries += 1
                    os.write(main_fd, again[0].encode())
            mark = len(seen)
            os.write(main_fd, (keys(seen.decode(errors="replace")) if callable(keys) else keys).encode())
        retries, again = 0, (steps[-1][2:] or [None])[0]  # the last step's `again`, while the program runs
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([main_fd], [], [], 1.0)[0]:
                try:
                    seen += os.read(main_fd, 65536)
                except OSError:
                    break
            elif again and retries < 5:
                retries += 1
                os.write(main_fd, again.encode())
        proc.wait(max(0.1, deadline - time.monotonic()))
        while select.select([main_fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(main_fd)
    return seen.decode("utf-8", "replace")
