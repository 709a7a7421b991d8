"""The servers follow the mcp.json files in a running session (beyond/repl/reload.py): /mcp reload, /mcp enable
and /mcp disable, and the prompt's note that a file changed; driven on a pipe, the servers' processes watched."""
import json
from pathlib import Path

from conftest import DAY15, agent_env, pid_alive, processes_in, wait_for_output, wait_until


def server(marker: str) -> dict:
    """The demo server, its command line marked so its process can be told from the others'."""
    import sys
    return {"command": sys.executable, "args": [str(DAY15 / "demo_server.py"), marker]}


def pid_of(cwd: Path, marker: str) -> int | None:
    found = []
    for pid in processes_in(cwd):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                found.append(pid)
        except OSError:
            continue
    return found[0] if len(found) == 1 else None


def write(cwd: Path, servers: dict) -> None:
    (cwd / ".geekagent").mkdir(exist_ok=True)
    (cwd / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_reload_adds_removes_restarts_and_keeps(tmp_path, start_agent):
    write(tmp_path, {"keep": server("keep"), "gone": server("gone"), "changed": server("changed-1")})
    agent = start_agent(tmp_path, agent_env())
    wait_for_output(agent, "Type a message")
    assert wait_until(lambda: all(pid_of(tmp_path, m) for m in ("keep", "gone", "changed-1")))
    keep, gone = pid_of(tmp_path, "keep"), pid_of(tmp_path, "gone")
    write(tmp_path, {"keep": server("keep"), "changed": server("changed-2"), "new": server("new")})
    agent.stdin.write("\n")  # the next prompt says so
    agent.stdin.flush()
    wait_for_output(agent, "mcp.json changed: /mcp reload applies it")
    agent.stdin.write("\n/mcp reload\n")
    agent.stdin.flush()
    said = wait_for_output(agent, "unchanged", timeout=30)
    assert "mcp.json changed" not in said  # once
    assert "added new; removed gone; restarted changed; 1 unchanged" in said
    assert pid_of(tmp_path, "keep") == keep and not pid_alive(gone)
    assert pid_of(tmp_path, "changed-2") and pid_of(tmp_path, "changed-1") is None and pid_of(tmp_path, "new")
    good = (tmp_path / ".geekagent" / "mcp.json").read_bytes()
    (tmp_path / ".geekagent" / "mcp.json").write_text('{"mcpServers": {"keep": ')  # a typo mid-edit
    agent.stdin.write("/mcp reload\n")
    agent.stdin.flush()
    said = wait_for_output(agent, "mcp.json reloaded: nothing changed; 3 unchanged", timeout=30)
    assert "mcp.json cannot be read (the error above says where): what it started keeps running" in said
    assert pid_of(tmp_path, "keep") == keep and pid_of(tmp_path, "new")  # nothing of it stopped
    (tmp_path / ".geekagent" / "mcp.json").write_bytes(good)
    agent.stdin.write("/mcp disable keep\n/mcp\n")
    agent.stdin.flush()
    said = wait_for_output(agent, "- keep: disabled", timeout=30)
    assert "keep stopped, and disabled" in said and not pid_alive(keep)
    assert json.loads((tmp_path / ".geekagent" / "mcp.json").read_text())["mcpServers"]["keep"]["disabled"] is True
    agent.stdin.write("/mcp enable keep\n")
    agent.stdin.flush()
    wait_for_output(agent, "keep (2 tools)", timeout=30)
    assert pid_of(tmp_path, "keep")
    agent.stdin.close()
    agent.wait(20)
    assert processes_in(tmp_path) == []


def test_reload_in_an_untrusted_folder_starts_none_of_its_entries(tmp_path, start_agent):
    write(tmp_path, {})
    agent = start_agent(tmp_path, agent_env(trust=False))  # no terminal to ask, no --trust
    wait_for_output(agent, "Type a message")
    write(tmp_path, {"new": server("new")})
    agent.stdin.write("/mcp reload\n")
    agent.stdin.flush()
    wait_for_output(agent, "mcp.json reloaded: nothing changed", timeout=30)
    assert pid_of(tmp_path, "new") is None
    assert "not trusted" in wait_for_output(agent, "not trusted", stream="stderr")
    agent.stdin.close()
    agent.wait(20)
    assert processes_in(tmp_path) == []


def test_on_a_terminal_reload_and_enable_ask_the_trust_question_first(tmp_path):
    """A folder's new entry starts at /mcp reload only once the user trusts it; disabling asks nothing and the
    entry stays listed as disabled; enabled again unchanged, it asks nothing; changed while disabled, it asks."""
    from conftest import AGENT, run_in_pty
    import sys
    write(tmp_path, {})
    env = {**agent_env(key=None, trust=False), "NO_COLOR": "1", "TERM": "xterm"}

    def add_entry(shown: str) -> str:
        write(tmp_path, {"demo": server("demo")})
        return "/mcp reload\r"

    def change_entry(shown: str) -> str:
        write(tmp_path, {"demo": {**server("changed"), "disabled": True}})
        return "/mcp enable demo\r"
    screen = run_in_pty([sys.executable, AGENT], tmp_path, env, [
        ("Type a message", add_entry),
        ("Trust this folder", "y\r"),
        ("mcp.json reloaded: added demo", "/mcp disable demo\r"),
        ("disabled in", "/mcp\r"),
        ("- demo: disabled", "/mcp demo\r"),
        ("- demo: disabled", "/mcp enable demo\r"),
        ("demo (2 tools)", "/mcp disable demo\r"),
        ("disabled in", change_entry),
        ("Trust this folder", "y\r"),
        ("demo (2 tools)", "/exit\r")])
    assert screen.count("Trust this folder") == 2 and "server demo: runs" in screen
    assert processes_in(tmp_path) == []


def test_the_shells_verbs_in_the_repl_say_the_line_to_type(tmp_path):
    """/mcp add, list, get, remove, import, validate are the shell's: the REPL says the line, with its own door."""
    from conftest import AGENT, run_agent
    write(tmp_path, {})
    done = run_agent(tmp_path, ["/mcp add time -- uvx mcp-server-time", "/mcp list", "/exit"], agent_env())
    assert f"`mcp add` is a shell command; in a shell, type: python3 {AGENT} mcp add time -- uvx mcp-server-time" \
           "\nthen /mcp reload here starts what it changed" in done.stdout
    assert f"type: python3 {AGENT} mcp list\n" in done.stdout and "no server named" not in done.stdout


def test_an_entry_disabled_before_the_session_asks_when_enabled(tmp_path):
    """An entry the folder's file had disabled at start was never shown running: /mcp enable asks the question."""
    from conftest import AGENT, run_in_pty
    import sys
    write(tmp_path, {"ok": server("ok"), "later": {**server("later"), "disabled": True}})
    env = {**agent_env(key=None, trust=False), "NO_COLOR": "1", "TERM": "xterm"}
    screen = run_in_pty([sys.executable, AGENT], tmp_path, env, [
        ("Trust this folder", "y\r"), ("Type a message", "/mcp enable later\r"), ("Trust this folder", "y\r"),
        ("later (2 tools)", "/exit\r")])
    assert screen.count("Trust this folder") == 2 and "server later: runs" in screen
    assert processes_in(tmp_path) == []
