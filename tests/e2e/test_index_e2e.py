"""End to end: day15/beyond_agent.py (and for section 5, day15/index.py too) as a subprocess with piped stdin and
a scripted model."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from beyond import net
from conftest import (AGENT, FAKES, LESSON, ROOT, agent_env, assert_no_process_left, demo, fake, processes_in,
                      run_agent, wait_for_output, workdir)
from fakes.openai_server import answer, answer_from_tools, FakeOpenAI, Hang, HttpError, tool_calls

SCENARIO = "roll a die, then count the characters and words of 'Model Context Protocol'"
# Tutorial section 5's checks run in both programs: the full agent, and the tutorial's (index.py).
MODES = {"full": AGENT, "tutorial": LESSON}
BANNER = {"full": "client: full (day15/beyond/)", "tutorial": "GeekAgent Day 15: MCP tools  (model"}


@pytest.mark.parametrize("mode", MODES)
def test_mcp_lists_the_discovered_tools(tmp_path, mode):
    """Section 5, check 1: /mcp shows `demo (2 tools)` and the two tool names the server reported."""
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None), program=MODES[mode])
    assert BANNER[mode] in done.stdout
    assert "demo (2 tools)\n  mcp_demo_word_count\n  mcp_demo_dice\n" in done.stdout


@pytest.mark.parametrize("mode", MODES)
def test_tutorial_scenario(tmp_path, mode):
    """Section 5, check 2: dice and word_count in one reply, two prompts answered y, both results in the answer."""
    cwd = workdir(tmp_path, {"demo": demo()})
    script = [tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": "Model Context Protocol"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, [SCENARIO, "y", "y", "/exit"], agent_env(model.base_url), program=MODES[mode])
    assert model.violations == []
    roll = re.search(r"\[tool mcp_demo_dice -> rolled ([1-6])\]", done.stdout)
    assert roll, done.stdout
    assert "[tool mcp_demo_word_count -> 22 characters, 3 words]" in done.stdout
    assert f"Results: rolled {roll.group(1)} | 22 characters, 3 words" in done.stdout
    assert done.stdout.count("Allow? [y/N/a=always]" if mode == "full" else "Allow? [y/N]") == 2


def test_full_prompt_shows_the_arguments(tmp_path):
    """Beyond the tutorial: the full agent's prompt names server and tool and shows the arguments."""
    cwd = workdir(tmp_path, {"demo": demo()})
    with FakeOpenAI([tool_calls(("mcp_demo_word_count", {"text": "a b"})), answer_from_tools]) as model:
        done = run_agent(cwd, ["count", "y", "/exit"], agent_env(model.base_url))
    assert "MCP server 'demo' wants to run tool 'word_count' (mcp_demo_word_count) with {\"text\": \"a b\"}" \
        in done.stdout


@pytest.mark.parametrize("mode", MODES)
def test_allow_then_deny_after_restart(tmp_path, mode):
    """Section 5, check 3: "allow" in GeekAgent.json runs dice unasked; after "deny" and a restart it never runs."""
    script = [tool_calls(("mcp_demo_dice", {})), answer_from_tools]
    cwd = workdir(tmp_path, {"demo": demo()}, {"mcp_demo_dice": "allow"})
    with FakeOpenAI(list(script)) as model:
        done = run_agent(cwd, ["roll", "/exit"], agent_env(model.base_url), program=MODES[mode])
    assert "Allow?" not in done.stdout and re.search(r"Results: rolled [1-6]", done.stdout)
    (cwd / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": {"mcp_demo_dice": "deny"}}))
    with FakeOpenAI(list(script)) as model:
        done = run_agent(cwd, ["roll", "/exit"], agent_env(model.base_url), program=MODES[mode])
    assert "Allow?" not in done.stdout and "rolled" not in done.stdout
    assert "Results: Denied: the tool mcp_demo_dice is not allowed" in done.stdout


def test_startup_shows_server_status(tmp_path):
    """Start-up prints one line per server: its tool count, or its error."""
    cwd = workdir(tmp_path, {"demo": demo(), "ghost": {"command": "/no/such/server"}})
    done = run_agent(cwd, ["/exit"], agent_env(key=None))
    assert "  demo (2 tools)\n" in done.stdout
    assert "x ghost: cannot start server" in done.stdout
    assert "No OPENAI_API_KEY set" in done.stdout
    assert "\033[" not in done.stdout  # piped: no escape codes


def test_allow_runs_without_prompt_and_deny_never_runs(tmp_path):
    """allow: no prompt; deny: the model receives the denial text and nothing is asked."""
    cwd = workdir(tmp_path, {"demo": demo()}, {"mcp_demo_dice": "allow", "mcp_demo_word_count": "deny"})
    script = [tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": "x"})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["go", "/exit"], agent_env(model.base_url))
    assert "Allow?" not in done.stdout
    tool_messages = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert re.fullmatch(r"rolled [1-6]", tool_messages[0])
    assert tool_messages[1].startswith("Denied: the tool mcp_demo_word_count is not allowed")


def test_api_error_then_good_turn(tmp_path):
    """A 500 that lasts (the first try and every retry) prints one error line; the next turn works and its
    history is valid."""
    cwd = workdir(tmp_path, {})
    failing = [HttpError(500, '{"error": {"message": "overloaded"}}', retry_after="0")] * (net.RETRIES + 1)
    with FakeOpenAI(failing + [answer("second answer")]) as model:
        done = run_agent(cwd, ["first", "second", "/exit"], agent_env(model.base_url))
    assert "error: HTTP 500" in done.stdout and "overloaded" in done.stdout
    assert "second answer" in done.stdout
    assert model.violations == []
    assert [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"] == ["first", "second"]


def test_call_without_api_key(tmp_path):
    """/call runs a tool through the permission gate with no model configured."""
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ['/call mcp_demo_word_count {"text": "a b"}', "y", "/call mcp_demo_dice", "n",
                           "hello", "/exit"], agent_env(key=None))
    assert "3 characters, 2 words" in done.stdout
    assert "call cancelled: the user declined mcp_demo_dice." in done.stdout
    assert done.stdout.count("No OPENAI_API_KEY set") == 2  # banner, and the chat line


def test_mcp_and_tools_commands(tmp_path):
    """/mcp lists the demo tools and the failing server's error; /tools shows policies."""
    crash = {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('bad config\\n'); sys.exit(2)"]}
    cwd = workdir(tmp_path, {"demo": demo(), "crash": crash})
    done = run_agent(cwd, ["/mcp", "/tools", "/nope", "/exit"], agent_env(key=None))
    assert "demo (2 tools)\n  mcp_demo_word_count\n  mcp_demo_dice\n" in done.stdout
    assert "x crash: initialize failed: server exited (code 2): bad config" in done.stdout
    assert "ask    mcp_demo_dice" in done.stdout and "allow  read" in done.stdout
    assert "Unknown command; /help lists the commands." in done.stdout


def test_broken_config(tmp_path):
    """A broken GeekAgent.json stops start-up naming the file (a policy never silently widens); a broken
    mcp.json entry fails that server only; an mcp.json that is not JSON is reported and the full agent
    starts without servers, where the tutorial's program, as index.ts, exits."""
    (tmp_path / ".geekagent").mkdir()
    (tmp_path / ".geekagent" / "GeekAgent.json").write_text('{"tools": {"x": "maybe"}}')
    done = run_agent(tmp_path, ["/exit"], agent_env(key=None))
    assert done.returncode == 1 and ".geekagent/GeekAgent.json: tools.x must be" in done.stderr
    (tmp_path / ".geekagent" / "GeekAgent.json").unlink()
    (tmp_path / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {"a": {}, "demo": demo()}}))
    done = run_agent(tmp_path, ["/exit"], agent_env(key=None))
    assert done.returncode == 0 and 'x a: .geekagent/mcp.json: mcpServers.a: "command"' in done.stdout
    assert "MCP  a(failed to start), demo(2)" in done.stdout
    (tmp_path / ".geekagent" / "mcp.json").write_text('{"mcpServers": {"a": {},}}')
    done = run_agent(tmp_path, ["/mcp", "/exit"], agent_env(key=None))
    assert done.returncode == 0 and "cannot read mcp.json" in done.stderr and "(no MCP servers" in done.stdout
    done = run_agent(tmp_path, ["/exit"], agent_env(key=None), program=LESSON)
    assert done.returncode == 1 and "MCP config cannot be read: Expecting property name" in done.stderr


def test_end_of_input_stops_servers(tmp_path):
    """Ctrl-D (end of input) leaves cleanly and no server process remains."""
    cwd = workdir(tmp_path, {"demo": demo(), "child": fake("start_child")})
    done = run_agent(cwd, [], agent_env(key=None))  # run_agent checks that nothing is left
    assert done.returncode == 0 and "2 tools" in done.stdout


def test_ctrl_c_while_waiting_cancels_turn(tmp_path, start_agent):
    """SIGINT while the model is thinking cancels the turn; the REPL goes on with a valid history."""
    cwd = workdir(tmp_path, {})
    with FakeOpenAI([Hang(threading.Event()), answer("after the interrupt")]) as model:
        agent = start_agent(cwd, agent_env(model.base_url))
        agent.stdin.write("slow question\n")
        agent.stdin.flush()
        assert model.wait_for_requests(1)
        agent.send_signal(signal.SIGINT)
        out, err = agent.communicate("next question\n/exit\n", timeout=30)
    assert "(cancelled)" in out and "after the interrupt" in out, (out, err)
    assert model.violations == []
    assert [m["content"] for m in model.requests[1]["messages"] if m["role"] == "user"] == \
        ["slow question", "next question"]


def test_sigterm_stops_servers(tmp_path, start_agent):
    """SIGTERM to the agent stops its servers too."""
    cwd = workdir(tmp_path, {"child": fake("start_child")})
    agent = start_agent(cwd, agent_env(key=None))
    agent.stdin.write("/mcp\n")
    agent.stdin.flush()
    wait_for_output(agent, "  mcp_child_echo")  # /mcp has answered: the server is up
    assert len(set(processes_in(cwd)) - {agent.pid}) == 2  # the fake server and its child
    agent.send_signal(signal.SIGTERM)
    agent.communicate(timeout=30)
    assert agent.returncode == 128 + signal.SIGTERM
    assert_no_process_left(cwd)


def test_sigterm_during_startup_leaves_no_server(tmp_path, start_agent):
    """SIGTERM while a server is still starting: the agent exits and the server goes with it."""
    cwd = workdir(tmp_path, {"slow": fake("slow_start", "30", timeout=60)})
    agent = start_agent(cwd, agent_env(key=None))
    deadline = time.monotonic() + 10
    while not set(processes_in(cwd)) - {agent.pid}:  # the server has been spawned
        assert time.monotonic() < deadline, "the server never started"
        time.sleep(0.01)
    agent.send_signal(signal.SIGTERM)
    agent.communicate(timeout=30)
    assert agent.returncode == 128 + signal.SIGTERM
    assert_no_process_left(cwd)


@pytest.mark.parametrize("mode", MODES)
def test_make_demo_runs_the_conversation(tmp_path, mode):
    """make demo: the scripted model calls both demo tools, the user answers y twice, the answer sums up
    (in a folder of the test's with the repository's demo entry, so the checkout's audit log stays untouched)."""
    cwd = workdir(tmp_path, {"demo": demo()})
    args = ["--agent", "--trust"] if mode == "full" else []
    done = subprocess.run([sys.executable, str(FAKES / "demo_model.py"), *args], cwd=ROOT,
                          input=f"{SCENARIO}\ny\ny\n/exit\n", capture_output=True, text=True, timeout=30,
                          env={**os.environ, "DEMO_FOLDER": str(cwd)})
    assert done.returncode == 0, done.stderr
    asked = "Allow? [y/N/a=always]" if mode == "full" else "Allow? [y/N]"
    assert BANNER[mode] in done.stdout and done.stdout.count(asked) == 2, done.stdout
    assert re.search(r'The die says: rolled [1-6]\. "Model Context Protocol": 22 characters, 3 words\.', done.stdout)


@pytest.mark.parametrize("mode", MODES)
def test_start_up_says_what_is_true_and_the_tutorial_offers_its_own_commands(tmp_path, mode):
    """The panel line (index.ts: mcpLine) says what runs: demo(2) when trusted, none when not. The full agent
    lists its commands and logins; index.py is the tutorial's program: its /mcp and /exit only, and a VS Code
    file's "servers" it does not read; it trusts its folder, as the tutorial's does."""
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ["/help", "/audit", "/mcp", "/exit"], agent_env(key=None), program=MODES[mode])
    assert "MCP  demo(2)" in done.stdout and "connected" not in done.stdout
    tutorial = mode == "tutorial"
    assert ("/resources" in done.stdout) is not tutorial and ("/mcp login" in done.stdout) is not tutorial
    assert done.stdout.count("Commands: /mcp, /exit") == (2 if tutorial else 0)  # index.py's answer to /help, /audit
    # index.ts says nothing while its servers start: the panel line is the first word of them
    assert ("demo (2 tools)" in done.stdout.split("MCP  demo(2)")[0]) is not tutorial
    vscode = workdir(tmp_path / "vscode", {})
    (vscode / ".geekagent" / "mcp.json").write_text(json.dumps({"servers": {"demo": demo()}}))
    read = run_agent(vscode, ["/mcp", "/exit"], agent_env(key=None), program=MODES[mode])
    assert ("MCP  none" in read.stdout) is tutorial and ("MCP  demo(2)" in read.stdout) is not tutorial
    untrusted = run_agent(cwd, ["/exit"], agent_env(key=None, trust=False), program=MODES[mode])
    assert ("MCP  demo(2)" if tutorial else "MCP  none") in untrusted.stdout
    assert ("not trusted" in untrusted.stderr) is not tutorial


def test_an_unknown_flag_prints_the_usage_and_runs_nothing(tmp_path):
    """`--sandbx` (a typo) must not run the agent less confined than asked: usage, exit 2."""
    done = subprocess.run([sys.executable, str(AGENT), "--sandbx"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "unknown option --sandbx" in done.stderr and "usage:" in done.stderr
    assert "GeekAgent Day 15 (Python): MCP tools" not in done.stdout


def test_the_permission_question_starts_on_its_own_line(tmp_path):
    """A model that writes before its tool calls (any real one does): the question is below its text."""
    call = tool_calls(("mcp_demo_dice", {}))
    call["content"] = "Let me check two things."
    cwd = workdir(tmp_path, {"demo": demo()})
    with FakeOpenAI([call, answer_from_tools]) as model:
        done = run_agent(cwd, ["roll for me", "y", "/exit"], agent_env(model.base_url))
    assert "Let me check two things.\nMCP server 'demo' wants to run tool 'dice'" in done.stdout


def test_start_up_and_mcp_count_the_same_tools(tmp_path):
    """A server with resources: start-up's count includes its resource reader, as /mcp lists it."""
    cwd = workdir(tmp_path, {"ctx": fake("context"), "demo": demo()})
    done = run_agent(cwd, ["/mcp", "/exit"], agent_env(key=None))
    counts = re.findall(r"^(?:> )? *ctx \((\d+) tools?\)$", done.stdout, re.M)
    assert len(counts) == 2 and counts[0] == counts[1], done.stdout


def test_call_suggests_the_tool_that_was_meant(tmp_path):
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ["/call mcp_demo_wordcount {}", "/exit"], agent_env(key=None))
    assert "no tool mcp_demo_wordcount; did you mean mcp_demo_word_count?" in done.stdout


def test_denied_tools_are_not_offered_but_listed(tmp_path):
    """A denied tool is left out of the model's tools (even from an entry whose tools are all always
    loaded, past the count where the others wait for tool_search); /tools still lists it as deny."""
    cwd = workdir(tmp_path, {"fake": fake("normal", alwaysLoad=True)}, {"mcp_fake_echo": "deny"})
    with FakeOpenAI([answer("ok")]) as model:
        done = run_agent(cwd, ["hi", "/tools", "/exit"], agent_env(model.base_url))
    offered = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert "mcp_fake_echo" not in offered and "mcp_fake_hang" in offered
    assert "deny   mcp_fake_echo" in done.stdout


def test_config_errors_are_shown_cleaned(tmp_path):
    """A policy key carrying escape sequences (the folder's GeekAgent.json) is shown, not obeyed, in the error."""
    (tmp_path / ".geekagent").mkdir()
    (tmp_path / ".geekagent" / "GeekAgent.json").write_text(json.dumps({"tools": {"x\x1b[2J": "maybe"}}))
    done = run_agent(tmp_path, ["/exit"], agent_env(key=None))
    assert done.returncode == 1 and "\x1b" not in done.stderr and "\\x1b[2J" in done.stderr


def test_mcp_with_a_name_shows_that_server_only(tmp_path):
    """/mcp lists a few tools of each server and says how many more; /mcp <server>: that server and all its
    tools, another's not listed; an unknown name says so."""
    many = json.dumps([f"tool{i:02d}" for i in range(30)])
    cwd = workdir(tmp_path, {"demo": demo(), "many": fake("named", many)})
    done = run_agent(cwd, ["/mcp", "/mcp many", "/mcp nosuch", "/exit"], agent_env(key=None))
    listed, one, rest = done.stdout.split("Type a message")[1].split("\n> ")[1:4]
    assert "demo (2 tools)\n  mcp_demo_word_count\n  mcp_demo_dice\n" in listed
    assert listed.count("  mcp_many_tool") == 8 and "  ... and 22 more (/mcp many)" in listed
    assert one.count("  mcp_many_tool") == 30 and "mcp_demo" not in one
    assert "no server named nosuch; /mcp lists them" in rest
