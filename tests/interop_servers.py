"""Interop: the agent end to end against official MCP servers from the package registries.

Run by `make interop`, which installs the servers into .interop/ first; not part of `make test`
(pytest collects only test_*.py files, and this one is named on the command line).
"""
import contextlib
import datetime
import json
import re
import socket
import subprocess
import sys
import time

import pytest

from conftest import AGENT, ROOT, agent_env, run_agent, wait_for_output, workdir
from fakes.openai_server import FakeOpenAI, answer, answer_from_tools, tool_calls

INTEROP = ROOT / ".interop"
TIME_SERVER = INTEROP / "venv" / "bin" / "mcp-server-time"
NODE_SERVERS = INTEROP / "node" / "node_modules" / "@modelcontextprotocol"
FILESYSTEM_SERVER = NODE_SERVERS / "server-filesystem" / "dist" / "index.js"
FASTMCP = INTEROP / "fastmcp" / "bin" / "python"  # with fastmcp and fastmcp-tasks
GIT_SERVER = INTEROP / "git" / "bin" / "mcp-server-git"
EVERYTHING_SERVER = NODE_SERVERS / "server-everything" / "dist" / "index.js"
OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Real servers start slower than our fakes (the time server imports pydantic; node loads its modules).
SLOW_START = {"timeout": 30}


@pytest.fixture(autouse=True)
def installed():
    if not all(server.exists() for server in (TIME_SERVER, FILESYSTEM_SERVER, EVERYTHING_SERVER, FASTMCP, GIT_SERVER,
                                               INTEROP / "venv" / "bin" / "uvx")):
        pytest.fail("the interop servers are not installed: run `make interop`")


def servers(files_root) -> dict:
    return {"time": {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"], **SLOW_START},
            "files": {"command": "node", "args": [str(FILESYSTEM_SERVER), str(files_root)], **SLOW_START}}


def listed_tools(stdout: str, server: str) -> list[str]:
    """The tool names /mcp <server> prints under `<server> (N tools)`, one a line; N must match."""
    found = re.search(rf"^(?:> )?{server} \((\d+) tools?\)\n((?:  mcp_\S+\n)*)", stdout, re.M)
    assert found, stdout
    names = found.group(2).split()
    assert len(names) == int(found.group(1))
    return names


def test_mcp_lists_real_tools_with_valid_names(tmp_path):
    """/mcp <server> shows every tool of each server, each name valid for the OpenAI API."""
    (tmp_path / "files").mkdir()
    cwd = workdir(tmp_path / "agent", servers(tmp_path / "files"))
    done = run_agent(cwd, ["/mcp time", "/mcp files", "/exit"], agent_env(key=None), timeout=90)
    time_tools, file_tools = listed_tools(done.stdout, "time"), listed_tools(done.stdout, "files")
    assert "mcp_time_get_current_time" in time_tools
    assert "mcp_files_read_text_file" in file_tools and len(file_tools) >= 10
    assert all(OPENAI_NAME.match(name) for name in time_tools + file_tools)


def test_model_calls_real_tools(tmp_path):
    """The scripted model calls the time server and the filesystem server; the answer has the real results.
    The file is outside the project folder, in the one its arguments name: the filesystem server takes
    the client's roots (roots/list) in place of its arguments, and those roots are that folder."""
    secret = f"interop file written at {datetime.datetime.now().isoformat()}"
    files = tmp_path / "files"
    files.mkdir()
    cwd = workdir(tmp_path / "agent", servers(files))
    (files / "note.txt").write_text(secret)
    script = [tool_calls(("mcp_time_get_current_time", {"timezone": "UTC"}),
                         ("mcp_files_read_text_file", {"path": str(files / "note.txt")})),
              answer_from_tools]
    before = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["what time is it, and what does note.txt say?", "y", "y", "/exit"],
                         agent_env(model.base_url), timeout=90)
    after = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    assert model.violations == []
    final = done.stdout.split("Results: ", 1)[1]  # the model's answer, quoting both tool results
    assert secret in final
    assert re.search(rf'"datetime": "({before}|{after})T\d\d:\d\d:\d\d\+00:00"', final), done.stdout


@contextlib.contextmanager
def listening(command: list[str]):
    """A server started as `command` plus a free local port, once it listens: its URL's /mcp; stopped after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([*command, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, f"{command[1]} exited"
            assert time.monotonic() < deadline, f"{command[1]} did not listen within 30 s"
            time.sleep(0.05)  # polling a port with a deadline: the server gives no other sign it is up
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def sdk_http_server():
    """The official SDK's server over Streamable HTTP on a free local port; stopped afterwards."""
    with listening([str(TIME_SERVER.parent / "python"), str(ROOT / "tests" / "fakes" / "sdk_http_server.py")]) as url:
        yield url


def test_model_calls_sdk_server_over_http(tmp_path, sdk_http_server):
    """A server built with the official SDK, reached over Streamable HTTP through the REPL."""
    cwd = workdir(tmp_path, {"sdk": {"type": "http", "url": sdk_http_server, **SLOW_START}})
    with FakeOpenAI([tool_calls(("mcp_sdk_add", {"a": 20, "b": 22})), answer_from_tools]) as model:
        done = run_agent(cwd, ["add 20 and 22", "y", "/mcp", "/exit"], agent_env(model.base_url), timeout=60)
    assert model.violations == []
    assert "[tool mcp_sdk_add -> 42]" in done.stdout and "Results: 42" in done.stdout
    # The SDK declares the resources capability but this server lists none: no resource reader.
    assert listed_tools(done.stdout, "sdk") == ["mcp_sdk_add", "mcp_sdk_ask_twice", "mcp_sdk_unlock"]


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_sdk_server_announces_a_new_tool(tmp_path, sdk_http_server, start_agent, protocol):
    """`unlock` makes the SDK server add a tool and announce it, which only the GET stream carries
    (or, in 2026-07-28, the subscriptions/listen stream): the agent says so, /mcp lists it, and the
    model calls it."""
    cwd = workdir(tmp_path, {"sdk": {"type": "http", "url": sdk_http_server, "protocol": protocol, **SLOW_START}})
    with FakeOpenAI([tool_calls(("mcp_sdk_secret", {"word": "stream"})), answer_from_tools]) as model:
        agent = start_agent(cwd, agent_env(model.base_url))
        wait_for_output(agent, "Type a message", timeout=60)
        agent.stdin.write("/call mcp_sdk_unlock {}\ny\n")
        agent.stdin.flush()
        wait_for_output(agent, "[mcp:sdk] tools changed: added mcp_sdk_secret", timeout=30, stream="stderr")
        agent.stdin.write("/mcp\nsay stream backwards\ny\n/exit\n")
        done, _ = agent.communicate(timeout=60)
    assert model.violations == []
    assert "mcp_sdk_secret" in listed_tools(done, "sdk")
    assert "Results: maerts" in done


def test_everything_server_resources_and_prompts(tmp_path):
    """server-everything over stdio: its resources and templates listed, one read, a prompt sent as the next turn."""
    cwd = workdir(tmp_path, {"everything": {"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"],
                                            **SLOW_START}})
    with FakeOpenAI([answer("noted")]) as model:
        done = run_agent(cwd, ["/resources", "/read everything demo://resource/dynamic/text/7", "/prompts",
                               "/prompt everything args-prompt city=Ouagadougou", "/exit"],
                         agent_env(model.base_url), timeout=90)
    listing = re.search(r"^(?:> )?everything \((\d+)\)\n((?:  \S+.*\n)*)", done.stdout, re.M)
    assert listing and int(listing.group(1)) == len(listing.group(2).splitlines()) >= 3, done.stdout
    assert "(template)" in listing.group(2)
    assert re.search(r"^(?:> )?Resource 7\b", done.stdout, re.M), done.stdout
    assert re.search(r"^  args-prompt city=\.\.\.", done.stdout, re.M), done.stdout
    (user,) = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert "Ouagadougou" in user and "noted" in done.stdout


def test_a_resource_server_everything_adds_at_run_time_is_listed(started):
    """server-everything's gzip-file-as-resource adds a session resource and says its resources changed:
    the client lists them again, so the new URI is known (for @ completion and the reader)."""
    from conftest import wait_until
    client = started({"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"], **SLOW_START})
    uri = "demo://resource/session/hello.txt.gz"
    assert client.listed and uri not in client.listed
    assert client.call_tool("gzip-file-as-resource", {"name": "hello.txt.gz", "outputType": "resourceLink",
                                                      "data": "data:text/plain;base64,aGVsbG8="}) == f"[link: {uri}]"
    assert wait_until(lambda: uri in client.listed, timeout=30)


def test_time_and_sdk_servers_in_the_2026_07_28_revision(tmp_path, sdk_http_server):
    """"protocol": "2026-07-28" with mcp-server-time over stdio and the SDK server over HTTP and over
    stdio: no handshake, /mcp names the revision, and the model calls a tool of each."""
    modern = {"protocol": "2026-07-28", **SLOW_START}
    cwd = workdir(tmp_path, {"time": {**servers(tmp_path)["time"], **modern},
                             "sdk": {"type": "http", "url": sdk_http_server, **modern},
                             "local": {"command": str(TIME_SERVER.parent / "python"), **modern,
                                       "args": [str(ROOT / "tests" / "fakes" / "sdk_http_server.py"), "stdio"]}})
    script = [tool_calls(("mcp_time_get_current_time", {"timezone": "UTC"}), ("mcp_sdk_add", {"a": 40, "b": 2}),
                         ("mcp_local_add", {"a": 1, "b": 1})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/mcp", "what time is it, and what are 40 + 2 and 1 + 1?", "y", "y", "y", "/exit"],
                         agent_env(model.base_url), timeout=90)
    assert model.violations == []
    for server in ("time", "sdk", "local"):
        listed_tools(done.stdout, server)
        speaks = rf"^(?:> )?{server} \(\d+ tools?\)\n(?:  mcp_\S+\n)*  speaks MCP 2026-07-28\n"
        assert re.search(speaks, done.stdout, re.M)
    results = r'Results: \{\s*"timezone": "UTC",\s*"datetime": "\d{4}-.*\| 42 \| 2$'
    assert re.search(results, done.stdout, re.M | re.S), done.stdout


def test_server_everything_asks_through_the_repl(tmp_path):
    """server-everything's tools that ask, called from the REPL on a pseudo-terminal: sampling (the
    scripted model answers, asked twice), the form (filled, reviewed, accepted), roots (the project
    folder) and a URL (shown with its host, declined, never opened)."""
    import sys
    from conftest import AGENT, run_in_pty
    cwd = workdir(tmp_path / "agent", {"everything": {"command": "node", "args": [str(EVERYTHING_SERVER)],
                                                      **SLOW_START}})
    sampling = '/call mcp_everything_trigger-sampling-request {"prompt": "Say hello", "maxTokens": 40}\n'
    url = '/call mcp_everything_trigger-url-elicitation {"url": "https://example.com/verify?step=1"}\n'
    with FakeOpenAI([answer("sampled hello from the model")]) as model:
        shown = run_in_pty([sys.executable, str(AGENT)], cwd, agent_env(model.base_url), [
            ("Type a message", sampling), ("Allow?", "y\n"), ("Ask the model? [y/N]", "y\n"),
            ("Send this answer to the server? [y/N]", "y\n"),
            ("sampled hello from the model", "/call mcp_everything_trigger-elicitation-request {}\n"),
            ("Allow?", "y\n"), ("legal name", "Ada Lovelace\n" + "\n" * 12), ("[a]ccept, [e]dit", "a\n"),
            ('"action": "accept"', "/call mcp_everything_get-roots-list {}\n"), ("Allow?", "y\n"),
            (f"URI: file://{cwd}", url), ("Allow?", "y\n"), ("[o]pen", "d\n"),
            ('"action": "decline"', "/exit\n")], timeout=90)
    assert "the model:\r\n  | sampled hello from the model" in shown  # shown before it was sent, as the server's
    assert "Ada Lovelace" in shown and model.violations == []
    assert "host: example.com" in shown
    assert [r.get("tools") for r in model.requests] == [None]  # the sampling request offers no tools


def test_eighteen_real_servers_on_auto_all_come_up(tmp_path):
    """18 time servers on "auto" starting together on a small machine: each answers the probe late
    or not at all, and each comes up (the probe waits as long as the server may start)."""
    import beyond_mcp
    path = tmp_path / "mcp.json"
    entry = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"], "protocol": "auto", "startupTimeout": 60}
    path.write_text(json.dumps({"mcpServers": {f"time{i}": entry for i in range(18)}}))
    try:
        statuses = beyond_mcp.connect_mcp_servers(str(path))
        assert [s.error for s in statuses] == [None] * 18
        assert all(f"mcp_time{i}_get_current_time" in s.tools for i, s in enumerate(statuses))
    finally:
        beyond_mcp.stop_mcp_servers()


@pytest.mark.parametrize("protocol", ["legacy", "2026-07-28"])
def test_an_sdk_server_that_asks_twice(sdk_http_server, protocol):
    """The SDK server's tool asks two questions: in 2026-07-28 two input_required rounds, each with the
    requestState the last one gave; earlier, two elicitation requests mid-call. Without a terminal the
    entry's "elicitation": "defaults" accepts each form's defaults."""
    import beyond_mcp
    client = beyond_mcp.McpClient("sdk", {"type": "http", "url": sdk_http_server, "protocol": protocol,
                                          "elicitation": "defaults", **SLOW_START})
    try:
        client.start()
        assert client.revision == ("2026-07-28" if protocol != "legacy" else "2025-11-25")
        assert client.call_tool("ask_twice", {}) == "accept:Ada accept:3"
    finally:
        client.stop()


def test_an_auto_server_that_answers_the_probe_after_six_seconds_comes_up(started):
    """The stdlib fake of 2026-07-28 answers server/discover after 6 s, past the 5 s the probe once
    had; "auto" waits as long as startupTimeout (30 s by default), so it comes up modern."""
    from conftest import fake
    client = started(fake("modern", protocol="auto", env={"DISCOVER_DELAY": "6"}))
    assert client.revision == "2026-07-28"
    assert client.call_tool("echo", {"text": "patient"}) == "patient"


def test_an_unattended_run_with_many_real_tools_searches_for_the_one_it_needs(tmp_path):
    """-p --json against four official servers (past 40 tools): the first request offers the built-ins,
    the allowed tools and tool_search; a search loads convert_time, offered from then on after the
    same prefix; it would ask, so in -p it is refused with a note, and the JSON says so."""
    (tmp_path / "files").mkdir()
    entries = {**servers(tmp_path / "files"), "more": {**servers(tmp_path / "files")["files"]},
               "everything": {"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"], **SLOW_START}}
    cwd = workdir(tmp_path / "agent", entries, {"mcp_everything_echo": "allow", "mcp_time_get_current_time": "allow"})
    script = [tool_calls(("tool_search", {"query": "convert time between timezones"})),
              tool_calls(("mcp_time_convert_time", {"source_timezone": "UTC", "time": "12:00",
                                                    "target_timezone": "Asia/Tokyo"})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = subprocess.run([sys.executable, AGENT, "-p", "noon UTC in Tokyo?", "--json"], cwd=cwd,
                              env=agent_env(model.base_url), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = ([t["function"]["name"] for t in r["tools"]] for r in model.requests[:2])
    assert first == ["get_current_time", "ls", "read", "mcp_time_get_current_time", "mcp_everything_echo",
                     "tool_search"]
    assert second[:len(first)] == first and "mcp_time_convert_time" in second
    result = json.loads(done.stdout)
    assert [c["name"] for c in result["tool_calls"]] == ["tool_search", "mcp_time_convert_time"]
    assert result["tool_calls"][1]["outcome"] == "refused"  # convert_time asks: nobody to ask in -p
    assert "21:00" not in result["answer"] and "needs the user's approval" in result["answer"]


def test_a_fastmcp_tasks_server_answers_through_its_tasks(tmp_path):
    """FastMCP with fastmcp-tasks over stdio, 2026-07-28: the tool that runs only as a task is offered and
    answers, polled to its end; the one where a task is optional answers too."""
    entry = {"command": str(FASTMCP), "args": [str(ROOT / "tests" / "fakes" / "fastmcp_tasks_server.py")],
             "protocol": "2026-07-28", **SLOW_START}
    cwd = workdir(tmp_path, {"tasks": entry}, {"mcp_tasks_report": "allow", "mcp_tasks_double": "allow"})
    script = [tool_calls(("mcp_tasks_report", {"topic": "tides"}), ("mcp_tasks_double", {"n": 21})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/mcp tasks", "a report on tides, and twice 21", "/exit"], agent_env(model.base_url),
                         timeout=90)
    assert sorted(listed_tools(done.stdout, "tasks")) == ["mcp_tasks_confirm", "mcp_tasks_double", "mcp_tasks_report"]
    assert re.search(r"^(?:> )?Results: report on tides: done \| 42$", done.stdout, re.M), done.stdout


def test_a_question_refused_inside_a_fastmcp_task_reaches_the_server(tmp_path):
    """-p, nobody to ask: the form FastMCP asks inside its task goes back declined (tasks/update), and the
    task ends well before its taskTimeout, its answer saying so; its status lines are on stderr."""
    entry = {"command": str(FASTMCP), "args": [str(ROOT / "tests" / "fakes" / "fastmcp_tasks_server.py")],
             "protocol": "2026-07-28", "taskTimeout": 60, **SLOW_START}
    cwd = workdir(tmp_path, {"tasks": entry}, {"mcp_tasks_confirm": "allow"})
    with FakeOpenAI([tool_calls(("mcp_tasks_confirm", {})), answer_from_tools]) as model:
        began = time.monotonic()
        done = subprocess.run([sys.executable, AGENT, "-p", "go ahead"], cwd=cwd,
                              capture_output=True, text=True, env=agent_env(model.base_url), timeout=90)
    assert done.returncode == 0 and "Results: answered: decline" in done.stdout, done
    assert time.monotonic() - began < 30 and "[mcp_tasks_confirm] task " in done.stderr


@pytest.mark.parametrize("asking", [False, True])
def test_the_python_sdks_parallel_calls_story_meets_within_one_reply(tmp_path, asking):
    """The Python SDK's parallel_calls example (mcp 2.3.0's examples/stories, over stdio): one reply calls
    `meet` twice, each waiting for the other; both run at once and both answer, in the model's order. When
    they ask, both questions come first (answered y twice), then both run."""
    examples = INTEROP / "sdist" / "mcp-2.3.0" / "examples"
    entry = {"command": str(INTEROP / "venv" / "bin" / "python"), "args": ["-m", "stories.parallel_calls.server"],
             "cwd": str(examples), "timeout": 20, **SLOW_START}
    cwd = workdir(tmp_path, {"story": entry}, {} if asking else {"mcp_story_meet": "allow"})
    script = [tool_calls(("mcp_story_meet", {"tag": "a", "party": ["b"]}),
                         ("mcp_story_meet", {"tag": "b", "party": ["a"]})), answer_from_tools]
    with FakeOpenAI(script) as model:
        began = time.monotonic()
        done = run_agent(cwd, ["meet", *(["y", "y"] if asking else []), "/exit"], agent_env(model.base_url),
                         timeout=90)
    assert re.search(r"^(?:> )?Results: a \| b$", done.stdout, re.M), done.stdout
    assert time.monotonic() - began < 20


def test_real_servers_work_sandboxed(tmp_path):
    """mcp-server-time from its virtual environment and server-filesystem under node, both sandboxed
    (--sandbox): they list their tools and answer; the filesystem server writes in the folder it was given."""
    (tmp_path / "files").mkdir()
    cwd = workdir(tmp_path / "p", servers(tmp_path / "files"),
                  {"mcp_time_get_current_time": "allow", "mcp_files_write_file": "allow"})
    script = [tool_calls(("mcp_time_get_current_time", {"timezone": "UTC"}),
                         ("mcp_files_write_file", {"path": str(tmp_path / "files" / "note.txt"), "content": "boxed"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/mcp time", "/mcp files", "what time is it? and note it", "/exit"],
                         agent_env(model.base_url), timeout=90, args=("--sandbox",))
    assert listed_tools(done.stdout, "time") and listed_tools(done.stdout, "files")
    assert done.stdout.count("  sandboxed: reads ") == 2 and done.stdout.count("; network: none") == 2, done.stdout
    assert f"; writes {tmp_path / 'files'}, a temporary folder;" in done.stdout, done.stdout
    assert '"timezone": "UTC"' in done.stdout and (tmp_path / "files" / "note.txt").read_text() == "boxed"


def test_the_git_server_works_sandboxed_once_the_hints_are_followed(tmp_path):
    """mcp-server-git sandboxed in a temporary repository: git_status fails on ~/.gitconfig and the error names
    the grant; with it, status works and add fails on .git (read only: git's config, hooks and where it goes
    run later), naming that grant; with both, status, add and commit work."""
    home, repo = tmp_path / "home", tmp_path / "p" / "repo"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Boxed\n\temail = boxed@example.com\n")
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    (repo / "a.txt").write_text("boxed")
    env = {**agent_env(), "HOME": str(home)}
    entry = {"command": str(GIT_SERVER), "args": ["--repository", str(repo)], **SLOW_START}
    policies = {f"mcp_git_git_{tool}": "allow" for tool in ("status", "add", "commit")}
    cwd = workdir(tmp_path / "p", {"git": {**entry, "sandbox": True}}, policies)
    status = ("mcp_git_git_status", {"repo_path": str(repo)})
    add = ("mcp_git_git_add", {"repo_path": str(repo), "files": ["a.txt"]})
    commit = ("mcp_git_git_commit", {"repo_path": str(repo), "message": "boxed commit"})

    def run(sandbox: dict | bool, *calls) -> str:
        (cwd / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"git": {**entry, "sandbox": sandbox}}}))
        with FakeOpenAI([*(tool_calls(call) for call in calls), answer_from_tools]) as model:
            return run_agent(cwd, ["/mcp git", "go on", "/exit"], {**env, "OPENAI_BASE_URL": model.base_url}, 90).stdout
    said = run(True, status)
    assert 'the sandbox refused ~/.gitconfig: "sandbox": {"read": ["~/.gitconfig"]} grants it' in said, said
    said = run({"read": ["~/.gitconfig"]}, status, add)
    assert "Untracked files" in said and ".git read only" in said, said
    assert f'the sandbox refused {repo}/.git: "sandbox": {{"write": ["{repo}/.git"]}} grants it' in said, said
    said = run({"read": ["~/.gitconfig"], "write": [f"{repo}/.git"]}, add, commit)
    log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s"], capture_output=True, text=True, timeout=30)
    assert "Changes committed successfully" in said and log.stdout == "boxed commit\n", said
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()


def test_servers_fetched_by_uvx_and_npx_work_sandboxed(tmp_path):
    """The launchers people write in mcp.json, sandboxed: uvx mcp-server-time and npx server-filesystem
    (their downloads need "network": true); each lists its tools and answers."""
    uvx = INTEROP / "venv" / "bin" / "uvx"
    (tmp_path / "files").mkdir()
    boxed = {"sandbox": {"network": True}, "startupTimeout": 120}
    cwd = workdir(tmp_path / "p", {
        "time": {"command": str(uvx), "args": ["mcp-server-time==2026.10.19", "--local-timezone", "UTC"], **boxed},
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2026.8.31",
                                             str(tmp_path / "files")], **boxed}},
        {"mcp_time_get_current_time": "allow", "mcp_files_list_directory": "allow"})
    script = [tool_calls(("mcp_time_get_current_time", {"timezone": "UTC"}),
                         ("mcp_files_list_directory", {"path": str(tmp_path / "files")})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/mcp time", "/mcp files", "what time is it, and what is in files?", "/exit"],
                         agent_env(model.base_url), timeout=240)
    assert listed_tools(done.stdout, "time") and listed_tools(done.stdout, "files")
    assert "writes its own uv cache, a temporary folder; network: all" in done.stdout, done.stdout
    assert f"writes {tmp_path / 'files'}, its own npm cache, a temporary folder; network: all" in done.stdout
    assert '"timezone": "UTC"' in done.stdout, done.stdout
