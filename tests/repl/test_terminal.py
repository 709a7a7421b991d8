"""The agent as a person meets it in a terminal: keys, paste, history, progress, logs, found config."""
import json
import re
import sys

from conftest import agent_env, demo, fake, AGENT, run_agent, run_in_pty, workdir
from fakes.openai_server import answer, FakeOpenAI, HttpError, tool_calls

def pty_env(tmp_path, base_url=None) -> dict:
    return {**agent_env(base_url, key=None if base_url is None else "sk-test"), "NO_COLOR": "1", "TERM": "xterm",
            "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config")}

def test_keys_paste_continuation_and_history(tmp_path):
    """Ctrl-C clears the line; a pasted block (indentation kept) and a line ending in \\ are one message each;
    exit leaves; the history is kept for the next session."""
    cwd = workdir(tmp_path / "p", {})
    paste = "\x1b[200~def f(x):\n    return x * 2\x1b[201~\r"
    with FakeOpenAI([answer("first answer"), answer("second answer")]) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", "half typed"), ("half typed", "\x03"), ("> ", paste, "\x03"), ("first answer", "one \\\r"),
            ("... ", "two\r"),
            ("second answer", "exit\r")])
    users = [[m["content"] for m in r["messages"] if m["role"] == "user"] for r in model.requests]
    assert users[0] == ["def f(x):\n    return x * 2"] and users[1][-1] == "one \ntwo"
    assert "half typed" not in json.dumps(users)
    assert "tokens: 1,234 in, 56 out" in screen
    history = (tmp_path / "state" / "geekagent" / "history").read_text()
    assert "one" in history and "exit" in history

def test_a_killed_agent_loses_no_typed_line(tmp_path):
    """Each line goes into the history file as it is entered: kill -9 after three, and the next session has them
    (Up brings the last back)."""
    import os
    import signal
    from conftest import processes_in
    cwd = workdir(tmp_path / "p", {})

    def kill(shown: str) -> str:
        for pid in processes_in(cwd):
            os.kill(pid, signal.SIGKILL)
        return ""
    with FakeOpenAI([answer("one done"), answer("two done"), answer("three done")]) as model:
        run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", "first line\r"), ("one done", "second line\r"), ("two done", "third line\r"), ("three done", kill)])
    history = (tmp_path / "state" / "geekagent" / "history").read_text().splitlines()
    assert history[-3:] == ["first line", "second line", "third line"]
    screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path), [("> ", "\x1b[A"), ("third line", "\x03"),
                                                                           ("> ", "/exit\r", "\x03")])
    assert "third line" in screen


def test_tab_completes_commands_and_tool_names(tmp_path):
    """Tab after /mc gives /mcp; after "/call mcp_demo_d" it gives the tool's whole name and a space,
    so the arguments typed right after it are arguments."""
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path), [
        ("> ", "/mc\t\r"), ("mcp_demo_dice", "/call mcp_demo_d\t{}\r"), ("Allow?", "y\r"), ("rolled", "/exit\r")])
    assert "demo (2 tools)" in screen and "rolled" in screen

def test_tab_completes_a_resource_mention(tmp_path):
    """After @ Tab offers the servers that listed resources, then their URIs; a unique one ends in a space."""
    cwd = workdir(tmp_path / "p", {"ctx": fake("context"), "demo": demo()})
    with FakeOpenAI([answer("noted")]) as model:
        run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", "what is on @\t"), ("ctx:", "demo://n\t"), ("today ", "?\r"), ("noted", "/exit\r")])
    (user,) = [m["content"] for m in model.requests[0]["messages"] if m["role"] == "user"]
    assert user.startswith("what is on @ctx:demo://notes/today ?\n\n[resource ctx:demo://notes/today]\nBuy milk.")


def test_tab_after_a_whole_server_mention_completes_its_uri():
    """With "@ctx:" typed, Tab goes on to the server's one URI (not "@ctx:" itself again)."""
    from beyond.repl import commands
    complete = commands.completer([], list, lambda: ["@ctx:", "@ctx:demo://a", "@other:"])
    assert complete("@ctx:", "what is @ctx:") == ["@ctx:demo://a"]
    assert complete("@", "what is @") == ["@ctx:", "@ctx:demo://a", "@other:"]


def test_a_uri_with_control_characters_is_never_offered_by_tab():
    """A server's URIs go to readline as completions: one with an escape sequence, a newline, a bidi
    override or a space is left out (readline would print it raw), as are templates."""
    from types import SimpleNamespace
    from beyond.repl import resources
    uris = ["demo://ok", "demo://\x1b]52;c;aGk=\x07x", "demo://a\nb", "demo://\u202eevil", "demo://a b", "demo://{day}"]
    status = SimpleNamespace(server="ctx", client=SimpleNamespace(listed=uris))
    session = SimpleNamespace(servers=SimpleNamespace(mcp_statuses=lambda: [status]))
    assert resources.mentions(session) == ["@ctx:", "@ctx:demo://ok"]


def test_a_server_cannot_reach_the_agents_terminal(tmp_path):
    """The agent runs on a terminal; its server cannot open it (no prompt of ssh or sudo lands in the
    REPL), and is in a process group of its own (the terminal's Ctrl-C is not its). On Linux it
    stays in the agent's session, which the kernel schedules as one group."""
    cwd = workdir(tmp_path / "p", {"fake": fake("normal")})
    screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path), [
        ("> ", "/call mcp_fake_terminal\r"), ("Allow?", "y\r"), ('"pid"', "/exit\r")])
    seen = json.loads(re.search(r'\{"tty".*?\}', screen).group(0))
    assert seen["tty"].startswith("refused") and seen["pgid"] == seen["pid"]
    if sys.platform.startswith("linux") and sys.version_info >= (3, 11):
        assert seen["sid"] != seen["pid"]  # the agent's session (the agent leads it here), not one of its own


def test_a_model_endpoint_that_hiccups_is_tried_again_on_the_activity_line(tmp_path):
    """A 503 asking for a second: the activity line says it is tried again, then the answer comes."""
    cwd = workdir(tmp_path / "p", {})
    with FakeOpenAI([HttpError(503, '{"error": {"message": "busy"}}', retry_after="1"), answer("there")]) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", "hi\r"), ("there", "/exit\r")])
    assert re.search(r"waiting for the model \(trying again in 1 s \(1 of 3\): HTTP 503 from ", screen)
    assert all(len(line) < 80 for line in re.findall(r"\r\x1b\[K([^\r\n]*)", screen))  # cut to the terminal's width
    assert len(model.requests) == 2 and "error:" not in screen


def test_config_is_found_from_a_subfolder(tmp_path):
    """Started two folders down, the agent uses the project's .geekagent/ and says which."""
    cwd = workdir(tmp_path / "project", {"demo": demo()})
    (cwd / "src" / "deep").mkdir(parents=True)
    done = run_agent(cwd / "src" / "deep", ["/mcp", "/exit"], agent_env(key=None))
    assert f"project: {cwd}" in done.stdout and "demo (2 tools)" in done.stdout
    alone = tmp_path / "alone"
    alone.mkdir()
    assert "no .geekagent/ in" in run_agent(alone, ["/exit"], agent_env(key=None)).stdout

def test_progress_keeps_a_slow_tool_alive(started):
    """A tool that reports progress outlives its 0.5 s timeout; progress reaches the caller; a silent one does not."""
    client = started(fake("normal", timeout=0.5))
    seen = []
    result = client.call_tool("progress", {"steps": 4, "every": 0.3}, on_progress=seen.append)
    assert result == "done after 4 steps, token 1" and seen[-1] == "4/4 step 4"

def test_progress_cannot_keep_a_call_forever(started):
    """Progress pushes the deadline out at most to 10 timeouts (0.3 s each here)."""
    import pytest
    from mcp import McpError
    client = started(fake("normal", timeout=0.3))
    seen = []
    with pytest.raises(McpError, match="no reply to tools/call within 0.3 s"):
        client.call_tool("progress", {"steps": 60, "every": 0.1}, on_progress=seen.append)
    assert seen and not seen[-1].startswith("60/")  # progress came, and the cap ended the call before the tool did


def test_progress_is_asked_for_only_by_a_caller_who_takes_it(started):
    """A call without on_progress carries no progress token, so the server sends no progress."""
    client = started(fake("normal", timeout=5))
    assert client.call_tool("progress", {"steps": 1, "every": 0}) == "done after 1 steps, token None"

def test_ctrl_d_at_the_prompt_is_no_on_its_own_line(tmp_path):
    """End of input at a permission prompt answers no, and the next output starts on a new line."""
    cwd = workdir(tmp_path, {"demo": demo()})
    done = run_agent(cwd, ["/call mcp_demo_dice"], agent_env(key=None))
    assert "Allow? [y/N/a=always] \ncall cancelled" in done.stdout

def test_logs_help_version_history_last_and_suggestions(tmp_path):
    """/logs shows what a server wrote; /call dice suggests the real name; --help and --version answer."""
    cwd = workdir(tmp_path, {"fake": fake("normal")}, {"mcp_fake_log": "allow"})
    done = run_agent(cwd, ["/call mcp_fake_log", "/logs", "/call log", "/last", "/history", "/exit"],
                     agent_env(key=None))
    assert "fake:\n  info: cache warmed\n  warning: disk almost full" in done.stdout
    assert "[mcp:fake] warning: disk almost full" in done.stderr and "cache warmed" not in done.stderr
    assert "did you mean mcp_fake_log" in done.stdout and done.stdout.count("logged") >= 2
    for flag, expected in (("--help", "usage: python3 day15/beyond_agent.py"), ("--version", "GeekAgent Day 15")):
        assert expected in run_agent(cwd, [], agent_env(key=None), args=(flag,)).stdout

def test_old_python_gets_one_line():
    """On Python older than 3.10 the agent says what it needs instead of a traceback."""
    import subprocess
    code = ("import sys, runpy; sys.version_info = (3, 9, 18); sys.argv = ['beyond_agent.py']; "
            f"runpy.run_path({AGENT!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "needs Python 3.10 or newer" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_with_the_tutorials_program_leaves(tmp_path):
    """index.py, the lesson: its own loop, where Ctrl-C leaves as index.ts does, and no server is left."""
    from conftest import LESSON, processes_in, wait_until
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    screen = run_in_pty([sys.executable, LESSON], cwd, pty_env(tmp_path), [("You > ", "\x03", "\x03")])
    # (run_in_pty waits for the program to end: in the lesson, Ctrl-C is the end)
    assert "GeekAgent Day 15: MCP tools" in screen and "MCP  demo(2)" in screen
    assert wait_until(lambda: not processes_in(cwd), 5)


def test_a_line_from_a_server_goes_above_the_prompt(tmp_path):
    """A server's line that comes while the prompt waits (here stderr, with --verbose) is written above
    the prompt, which is drawn again with what was typed so far."""
    cwd = workdir(tmp_path / "p", {"fake": fake("normal")}, {"mcp_fake_say_later": "allow"})
    screen = run_in_pty([sys.executable, AGENT, "--verbose"], cwd, pty_env(tmp_path), [
        ("> ", "/call mcp_fake_say_later {}\r"), ("scheduled", "half"),
        ("said later\r\n> half", "\x15/exit\r")])  # keys typed before the redraw would race it
    assert re.search(r"\r\x1b\[K\[mcp:fake\] said later\r\n> half", screen), repr(screen[-300:])


def test_plain_http_to_another_host_is_warned(tmp_path):
    """OPENAI_BASE_URL over plain http to another machine: one warning line at start-up."""
    cwd = workdir(tmp_path, {})
    done = run_agent(cwd, ["/exit"], agent_env("http://model.example/v1"))
    assert "is plain http to another machine" in done.stdout
    done = run_agent(cwd, ["/exit"], agent_env("http://127.0.0.1:9/v1"))
    assert "plain http" not in done.stdout


def test_control_sequences_never_reach_the_terminal(tmp_path):
    """Escapes in a tool name, a result, a log notification, stderr and the model's answer are shown, not obeyed."""
    (tmp_path / "names.json").write_text(json.dumps(["dice\x1b[2K\r", "x" * 1_000_000, "escapes"]))
    cwd = workdir(tmp_path / "agent", {"evil": fake("named", f"@{tmp_path / 'names.json'}")})
    script = [tool_calls(("mcp_evil_escapes", {"text": "t"})), answer("done \x1b]52;c;aGk=\x07 \x1b[8mhidden")]
    with FakeOpenAI(script) as model:
        done = run_agent(cwd, ["/call mcp_evil_dice_x1b", "/mcp", "go", "y", "/exit"], agent_env(model.base_url),
                         args=("--verbose",))
    out = done.stdout + done.stderr
    assert "\x1b" not in out and "\x9b" not in out and "\x07" not in out
    assert "\\x1b]52;c;aGk=\\x07" in out and "forged line\\nsecond line" in out and "\\x1b[8mhidden stderr" in out
    assert max(len(line) for line in out.splitlines()) < 2000  # the 1 MB name is bounded everywhere
