"""`beyond_agent.py mcp <verb>` (beyond/repl/manage.py, validate.py, imports.py), each run as a subprocess in a folder
and a home of the test's own."""
import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import (AGENT, DAY15, Asked, agent_env, assert_no_process_left, demo, fake, processes_in, run_agent,
                      workdir)
from fakes.http_server import FakeHttpMcp


def verb(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, AGENT, "mcp", *args], cwd=cwd, capture_output=True, text=True,
                          env=env or agent_env(trust=False), timeout=60)


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "geekagent" / "mcp.json"


def test_add_in_both_scopes_then_list_and_get(tmp_path):
    added = verb(tmp_path, "add", "-s", "project", "files", "--env", "ROOT=${HOME}", "--sandbox", "--", "npx", "-y",
                 "srv", "/x")
    assert added.returncode == 0, added.stderr
    done = verb(tmp_path, "add", "remote", "--user", "--url", "https://mcp.example.com/mcp",
                "--header", "Authorization=Bearer abc123", "--header", "X-Team=blue")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / ".geekagent" / "mcp.json").read_text())
    assert written == {"mcpServers": {"files": {"command": "npx", "args": ["-y", "srv", "/x"],
                                                "env": {"ROOT": "${HOME}"}, "sandbox": True}}}
    rows = json.loads(verb(tmp_path, "list", "--json").stdout)
    assert [(r["name"], r["scope"], r["transport"], r["command"], r["args"], r["url"], r["enabled"], r["sandbox"])
            for r in rows] == [("files", "project", "stdio", "npx", ["-y", "srv", "/x"], None, True, True),
                               ("remote", "user", "http", None, [], "https://mcp.example.com/mcp", True, False)]
    assert [r["trusted"] for r in rows] == [False, True]  # the folder's entries wait for its trust question
    got = json.loads(verb(tmp_path, "get", "remote", "--json").stdout)
    assert got["scope"] == "user" and got["entry"]["headers"] == {"Authorization": "Bearer [masked]", "X-Team": "blue"}
    assert "abc123" not in verb(tmp_path, "get", "remote").stdout
    assert json.loads(verb(tmp_path, "get", "files", "--json").stdout)["entry"]["env"] == {"ROOT": "${HOME}"}


def test_add_sandboxed_with_network(tmp_path):
    """--sandbox=network writes the one key a uvx or npx server needs to fetch what it runs."""
    assert verb(tmp_path, "add", "-s", "project", "time", "--sandbox=network", "--", "uvx",
                "mcp-server-time").returncode == 0
    written = json.loads((tmp_path / ".geekagent" / "mcp.json").read_text())["mcpServers"]["time"]
    assert written == {"command": "uvx", "args": ["mcp-server-time"], "sandbox": {"network": True}}
    wrong = verb(tmp_path, "add", "-s", "project", "web", "--sandbox=net", "--", "uvx", "x")
    assert wrong.returncode != 0 and "--sandbox=net" in wrong.stderr


def local_entries(cwd: Path) -> dict:
    """What the local scope keeps for a folder (the user's state, never the project)."""
    kept = json.loads((Path(os.environ["XDG_STATE_HOME"]) / "geekagent" / "local-servers.json").read_text())
    return kept.get(str(cwd.resolve()), {}).get("mcpServers", {})


def test_claude_codes_forms_write_what_they_say(tmp_path):
    """-s local|project|user, -e, -H 'Key: Value', -t http NAME URL, add-json (sandbox as written), -t sse refused
    with what to use; each checked in the file it wrote. add with no scope is local: nothing in the project."""
    cwd = tmp_path / "p"
    cwd.mkdir()
    added = verb(cwd, "add", "-e", "A=1", "-e", "TOKEN=sk-live-abcdefghijklmnop", "mine", "--", "npx", "x")
    assert added.returncode == 0 and "(local)" in added.stdout
    assert local_entries(cwd)["mine"] == {"command": "npx", "args": ["x"],
                                          "env": {"A": "1", "TOKEN": "sk-live-abcdefghijklmnop"}}
    assert not (cwd / ".geekagent" / "mcp.json").exists()
    assert verb(cwd, "add", "-s", "user", "-t", "http", "-H", "X-Team: blue", "web",
                "https://mcp.example.com/mcp").returncode == 0
    assert json.loads(user_file().read_text())["mcpServers"]["web"] == {"url": "https://mcp.example.com/mcp",
                                                                       "headers": {"X-Team": "blue"}}
    assert verb(cwd, "add-json", "-s", "project", "j", '{"command": "uvx", "args": ["t"], "sandbox": true}'
                ).returncode == 0
    assert json.loads((cwd / ".geekagent" / "mcp.json").read_text())["mcpServers"]["j"]["sandbox"] is True
    sse = verb(cwd, "add", "-t", "sse", "old", "https://x.example/sse")
    assert sse.returncode == 1 and "use `-t http` with that URL" in sse.stderr
    scope = verb(cwd, "add", "-s", "global", "g", "--", "x")
    assert scope.returncode == 2 and "the scopes are local" in scope.stderr
    assert verb(cwd, "add", "--transport", "http", "-s", "local", "api", "https://api.example.com/mcp").returncode == 0
    assert local_entries(cwd)["api"] == {"url": "https://api.example.com/mcp"}
    desktop = Path(os.environ["XDG_CONFIG_HOME"]) / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True, exist_ok=True)
    desktop.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs", "/tmp"]}}}))
    assert verb(cwd, "add-from-claude-desktop", "--yes").returncode == 0
    assert local_entries(cwd)["fs"] == {"command": "npx", "args": ["-y", "fs", "/tmp"]}
    listed = verb(cwd, "list").stdout
    assert re.search(r"^mine +local ", listed, re.M) and re.search(r"^j +project ", listed, re.M)
    assert "sk-live-abcdefghijklmnop" not in verb(cwd, "get", "mine").stdout  # masked, as the user file's are


def test_a_local_server_starts_without_a_trust_question_here_and_nowhere_else(tmp_path):
    """The next agent in the folder starts the local entry without asking; in another folder it does not exist."""
    from conftest import run_in_pty
    cwd, elsewhere = tmp_path / "p", tmp_path / "q"
    cwd.mkdir()
    elsewhere.mkdir()
    assert verb(cwd, "add", "demo", "--", sys.executable, str(DAY15 / "demo_server.py")).returncode == 0
    env = {**agent_env(key=None, trust=False), "NO_COLOR": "1", "TERM": "xterm"}
    screen = run_in_pty([sys.executable, AGENT], cwd, env, [("> ", "/mcp\r"), ("scope: local", "/exit\r")])
    assert "Trust this folder" not in screen and "demo (2 tools)" in screen
    other = verb(elsewhere, "list").stdout
    assert "no local entries for this folder" in other and "demo" not in other
    assert_no_process_left(cwd)


def test_reset_project_choices_forgets_the_trust_answer_and_the_always_answers(tmp_path):
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    from beyond.folder.project import JsonStore
    state = Path(os.environ["XDG_STATE_HOME"]) / "geekagent"
    JsonStore(str(state / "approvals.json")).update(str(cwd.resolve()), {"mcp_demo_dice": {"always": True}})
    JsonStore(str(Path(os.environ["XDG_CONFIG_HOME"]) / "geekagent" / "trusted-folders.json")).update(
        str(cwd.resolve()), {"files": {}})
    done = verb(cwd, "reset-project-choices")
    assert done.returncode == 0 and "forgot for" in done.stdout
    assert "the trust answer" in done.stdout and "the `a` answers" in done.stdout
    again = verb(cwd, "reset-project-choices")
    assert "nothing was kept for" in again.stdout


def test_a_shadowed_entry_and_a_taken_name(tmp_path):
    """local > project > user: the local entry shadows the others (an untrusted project's shadows nothing)."""
    assert verb(tmp_path, "add", "same", "--user", "--", "echo", "user").returncode == 0
    assert verb(tmp_path, "add", "-s", "project", "same", "--", "echo", "project").returncode == 0
    lines = verb(tmp_path, "list").stdout.splitlines()
    assert lines[0] == "no local entries for this folder" and "shadowed" not in lines[2]  # the folder: not trusted
    assert verb(tmp_path, "add", "same", "--", "echo", "local").returncode == 0
    lines = verb(tmp_path, "list").stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [["same", "local"], ["same", "project"], ["same", "user"]]
    assert "shadowed" in lines[2] and "shadowed" not in lines[0]
    assert verb(tmp_path, "remove", "same", "-s", "local").returncode == 0
    taken = verb(tmp_path, "add", "-s", "project", "same", "--", "echo", "again")
    assert taken.returncode == 1 and "already" in taken.stderr and "--force" in taken.stderr
    assert verb(tmp_path, "add", "-s", "project", "same", "--force", "--", "echo", "again").returncode == 0
    got = json.loads(verb(tmp_path, "get", "same", "--json").stdout)
    assert got["entry"]["args"] == ["again"] and got["scope"] == "project" and got["shadows"] == ["user"]


def test_a_secret_is_not_written_into_the_project_and_a_broken_file_is_left_alone(tmp_path):
    secret = verb(tmp_path, "add", "-s", "project", "gh", "--env", "GITHUB_TOKEN=ghp_abcdef123456", "--", "npx", "gh")
    assert secret.returncode == 1 and "--env 'GITHUB_TOKEN=${GITHUB_TOKEN}'" in secret.stderr
    assert "env GITHUB_TOKEN is a secret written out" in secret.stderr and "-s local" in secret.stderr
    plain = verb(tmp_path, "add", "-s", "project", "w", "--url", "http://mcp.example.com/mcp")
    assert plain.returncode == 1 and "unencrypted" in plain.stderr
    assert not (tmp_path / ".geekagent" / "mcp.json").exists()
    assert verb(tmp_path, "add", "gh", "--user", "--env", "GITHUB_TOKEN=ghp_abcdef123456", "--", "npx", "gh"
                ).returncode == 0
    broken = b'{"mcpServers": {"a": {"command": "x"},}}\n'
    (tmp_path / ".geekagent").mkdir(exist_ok=True)
    (tmp_path / ".geekagent" / "mcp.json").write_bytes(broken)
    for args in (("add", "-s", "project", "b", "--", "y"), ("remove", "a"), ("disable", "a")):
        done = verb(tmp_path, *args)
        assert done.returncode == 1 and "mcp.json" in done.stderr and "line 1" in done.stderr, done.stderr
    assert (tmp_path / ".geekagent" / "mcp.json").read_bytes() == broken
    assert sorted(p.name for p in (tmp_path / ".geekagent").iterdir()) == ["mcp.json"]  # no lock, no temporary


def test_remove_disable_enable_and_what_they_do_to_trust(tmp_path):
    from beyond.folder.trust import Project, decide
    for name in ("a", "b"):
        assert verb(tmp_path, "add", "-s", "project", name, "--", sys.executable, "-c", "pass").returncode == 0
    asked = Asked()
    assert decide(Project.read(tmp_path), False, asked) and len(asked) == 1  # the user trusts the folder
    assert verb(tmp_path, "disable", "a").returncode == 0
    assert json.loads((tmp_path / ".geekagent" / "mcp.json").read_text())["mcpServers"]["a"]["disabled"] is True
    assert decide(Project.read(tmp_path), False, asked) and len(asked) == 1  # fewer servers: nothing asked
    assert verb(tmp_path, "enable", "a").returncode == 0
    assert "disabled" not in json.loads((tmp_path / ".geekagent" / "mcp.json").read_text())["mcpServers"]["a"]
    assert not decide(Project.read(tmp_path), False, None)  # started again: the question comes back
    assert decide(Project.read(tmp_path), False, asked) and len(asked) == 2
    assert verb(tmp_path, "remove", "b").returncode == 0
    assert decide(Project.read(tmp_path), False, None)
    unknown = verb(tmp_path, "remove", "zzz")
    assert unknown.returncode == 1 and "there are: a" in unknown.stderr


def test_validate_a_good_and_a_failing_server(tmp_path):
    failing = {"command": sys.executable, "args": ["-c", "import sys; print('cannot open the database', "
                                                         "file=sys.stderr); sys.exit(3)"]}
    (tmp_path / ".geekagent").mkdir()
    (tmp_path / ".geekagent" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "good": demo(), "bad": failing, "off": {**demo(), "disabled": True}}}))
    done = verb(tmp_path, "validate", "--json", "--trust")
    assert done.returncode == 1, done.stderr
    results = {r["name"]: r for r in json.loads(done.stdout)}
    assert list(results) == ["good", "bad"]  # every enabled one
    assert (results["good"]["status"], results["good"]["tools"], results["good"]["prompts"]) == ("ok", 2, 0)
    assert results["bad"]["status"] == "failed" and "cannot open the database" in results["bad"]["stderr"]
    assert_no_process_left(tmp_path)
    named = verb(tmp_path, "validate", "good", "off", "--trust")
    assert named.returncode == 1 and named.stdout.splitlines() == ["good: ok (2 tools, 0 resources, 0 prompts)",
                                                                  "off: disabled"]
    untrusted = verb(tmp_path, "validate", "--json")  # no terminal to ask, no --trust
    assert untrusted.returncode == 1 and {r["status"] for r in json.loads(untrusted.stdout)} == {"not_trusted"}
    assert processes_in(tmp_path) == []


def test_validate_and_mcp_count_a_servers_tools_alike(tmp_path):
    """A server with resources: validate counts what the model is offered (its reader too), as /mcp does."""
    cwd = workdir(tmp_path, {"ctx": fake("context")})
    validated = verb(cwd, "validate", "--json", "--trust")
    (result,) = json.loads(validated.stdout)
    shown = run_agent(cwd, ["/mcp ctx", "/exit"], agent_env())
    assert f"ctx ({result['tools']} tools" in shown.stdout and "mcp_ctx_read_resource" in shown.stdout


def test_validate_interrupted_prints_what_it_knows_and_list_into_a_closed_pipe_is_quiet(tmp_path):
    """Ctrl-C while a server is still starting: the results so far (the slow one cancelled), exit 130, nothing
    left running. `mcp list` into a pipe closed early ends without a word (141, as a program SIGPIPE stops)."""
    import signal
    from conftest import FAKES, wait_until
    log = tmp_path / "skills.log"
    (tmp_path / "skills").mkdir()
    quick = {"command": sys.executable, "args": [str(FAKES / "skills_server.py"), str(tmp_path / "skills")],
             "env": {"SKILLS_LOG": str(log)}}
    cwd = workdir(tmp_path / "p", {"quick": quick, "slow": fake("slow_start", "30"),
                                   **{f"s{i}": {**demo(), "disabled": True, "args": [str(i) * 300]}
                                      for i in range(400)}})
    running = subprocess.Popen([sys.executable, AGENT, "mcp", "validate", "--trust"], cwd=cwd, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=agent_env(trust=False))
    assert wait_until(lambda: log.exists() and "skills/list" in log.read_text(), 30)
    running.send_signal(signal.SIGINT)
    out, _ = running.communicate(timeout=30)
    assert running.returncode == 130
    assert "slow: cancelled: Ctrl-C before it was ready" in out and "\nquick: " in "\n" + out
    assert_no_process_left(cwd)
    listing = subprocess.Popen([sys.executable, AGENT, "mcp", "list"], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=agent_env(trust=False))
    listing.stdout.read(10)
    listing.stdout.close()  # as `| head -c 10` does
    assert listing.wait(30) == 141 and listing.stderr.read() == b""


@pytest.mark.parametrize("sandboxed", [False, True])
def test_validate_names_a_program_that_is_not_installed(tmp_path, sandboxed):
    """A command not on PATH is said to be not found (never the network), sandboxed or not."""
    cwd = workdir(tmp_path, {"gone": {"command": "no-such-program-here", "args": ["x"]}})
    done = verb(cwd, "validate", "--trust", *(["--sandbox"] if sandboxed else []))
    assert done.returncode == 1 and "no-such-program-here is not found on" in done.stdout, done.stdout
    assert "network" not in done.stdout


def test_validate_says_a_server_needs_a_login(tmp_path):
    with FakeHttpMcp("unauthorized") as server:
        assert verb(tmp_path, "add", "remote", "--user", "--url", server.url).returncode == 0
        done = verb(tmp_path, "validate", "remote", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)[0]["status"] == "needs_login"


def home_env(home: Path) -> dict:
    env = agent_env(trust=False)
    env["HOME"] = str(home)
    return env


def test_import_from_claude_desktop_and_a_vscode_folder(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    desktop = Path(os.environ["XDG_CONFIG_HOME"]) / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs", "/tmp"]},
                                                  "taken": {"command": "other"},
                                                  "old": {"type": "sse", "url": "https://x.example/sse"}}}))
    (work / ".vscode").mkdir(parents=True)
    (work / ".vscode" / "mcp.json").write_text(json.dumps({"inputs": [], "servers": {
        "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "${env:TZ}"}},
        "asks": {"type": "http", "url": "https://api.example.com", "headers": {"Authorization": "${input:tok}"}},
        "here": {"command": "node", "args": ["${workspaceFolder}/s.js"]}}}))
    assert verb(work, "add", "-s", "project", "taken", "--", "mine").returncode == 0
    done = verb(work, "import", "-s", "project", "claude-desktop", "--yes", env=home_env(home))
    assert done.returncode == 0, done.stderr
    assert "skipped taken" in done.stdout and "exists" in done.stdout and "skipped old" in done.stdout
    done = verb(work, "import", "-s", "project", "vscode", "--yes", env=home_env(home))
    assert done.returncode == 0 and "skipped asks" in done.stdout and "skipped here" not in done.stdout
    servers = json.loads((work / ".geekagent" / "mcp.json").read_text())["mcpServers"]
    assert servers == {"taken": {"command": "mine", "args": []}, "fs": {"command": "npx", "args": ["-y", "fs", "/tmp"]},
                       "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "${TZ}"}},
                       "here": {"command": "node", "args": [f"{work}/s.js"]}}
    shared = verb(work, "import", str(work / ".vscode" / "mcp.json"), "--user", "--yes", env=home_env(home))
    assert shared.returncode == 1 and not user_file().exists()  # a project's entries into --user: asked, always


def test_import_reads_each_clients_file_as_it_does_and_validate_starts_what_came_in(tmp_path):
    """A VS Code file with comments and a trailing comma, an entry with ${workspaceFolder}, a Gemini entry of
    "type": "http": all three come in, and validate starts them."""
    from fakes.http_server import FakeHttpMcp
    home, work = tmp_path / "home", tmp_path / "work"
    (work / ".vscode").mkdir(parents=True)
    (work / "demo_server.py").write_bytes((DAY15 / "demo_server.py").read_bytes())
    (work / ".vscode" / "mcp.json").write_text(
        '{\n  // the demo, beside the project\n  "servers": {\n    "here": {"type": "stdio", "command": "%s", '
        '"args": ["${workspaceFolder}/demo_server.py"]}, /* more later */\n  },\n}\n' % sys.executable)
    (home / ".gemini").mkdir(parents=True)
    with FakeHttpMcp() as remote:
        (home / ".gemini" / "settings.json").write_text(
            '{"mcpServers": {"web": {"type": "http", "url": "%s"}}, // Gemini reads comments too\n}' % remote.url)
        for source in ("vscode", "gemini"):
            done = verb(work, "import", "-s", "project", source, "--yes", env=home_env(home))
            assert done.returncode == 0 and "+ " in done.stdout, done.stdout + done.stderr
        servers = json.loads((work / ".geekagent" / "mcp.json").read_text())["mcpServers"]
        assert servers["here"]["args"] == [f"{work}/demo_server.py"] and servers["web"] == {"url": remote.url}
        validated = verb(work, "validate", "--trust", env=home_env(home))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "here: ok (2 tools" in validated.stdout and "web: ok (" in validated.stdout


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Codex's TOML is read with tomllib (3.11)")
def test_import_from_codex_and_cursor(tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "o3"\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs"]\nstartup_timeout_sec = 20\n'
        '[mcp_servers.remote]\nurl = "https://mcp.example.com/mcp"\nbearer_token_env_var = "REMOTE_TOKEN"\n'
        '[mcp_servers.picky]\ncommand = "x"\nenabled_tools = ["a"]\n')
    (home / ".cursor").mkdir()
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"cur": {
        "command": "node", "args": ["s.js"], "env": {"TOKEN": "${env:MY_TOKEN}"}}}}))
    work.mkdir()
    done = verb(work, "import", "codex", "--user", "--yes", env=home_env(home))
    assert done.returncode == 0 and "skipped picky" in done.stdout, done.stdout + done.stderr
    assert verb(work, "import", "cursor", "--user", "--yes", env=home_env(home)).returncode == 0
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({"theme": "x", "mcpServers": {
        "gem": {"httpUrl": "https://g.example.com/mcp", "headers": {"X-Key": "$API_KEY"}, "timeout": 30000},
        "old": {"url": "https://g.example.com/sse"}}}))
    gemini = verb(work, "import", "-s", "project", "gemini", "--yes", env=home_env(home))
    assert gemini.returncode == 0 and "skipped old" in gemini.stdout and "HTTP+SSE" in gemini.stdout
    assert json.loads(user_file().read_text())["mcpServers"] == {
        "docs": {"command": "npx", "args": ["-y", "docs"], "startupTimeout": 20},
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}},
        "cur": {"command": "node", "args": ["s.js"], "env": {"TOKEN": "${MY_TOKEN}"}}}
    assert json.loads((work / ".geekagent" / "mcp.json").read_text())["mcpServers"] == {
        "gem": {"url": "https://g.example.com/mcp", "headers": {"X-Key": "${API_KEY}"}, "timeout": 30.0}}


def test_usage_errors_exit_2(tmp_path):
    for args in (("frobnicate",), ("add", "x"), ("add", "bad name!", "--", "x")):
        done = verb(tmp_path, *args)
        assert done.returncode == 2 and "usage:" in done.stderr, args
    assert verb(tmp_path, "--help").returncode == 0


def test_edits_at_once_are_all_kept_and_a_link_is_never_written_through(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    adds = [subprocess.Popen([sys.executable, AGENT, "mcp", "add", "-s", "project", f"s{i}", "--", "echo", str(i)],
                             cwd=work,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=agent_env(trust=False))
            for i in range(6)]
    assert [add.wait(60) for add in adds] == [0] * 6
    assert sorted(json.loads((work / ".geekagent" / "mcp.json").read_text())["mcpServers"]) == \
        [f"s{i}" for i in range(6)]
    outside = tmp_path / "outside.json"
    outside.write_text('{"mcpServers": {}}')
    (work / ".geekagent" / "mcp.json").unlink()
    (work / ".geekagent" / "mcp.json").symlink_to(outside)
    done = verb(work, "add", "-s", "project", "x", "--", "echo")
    assert done.returncode == 1 and "outside the folder" in done.stderr
    assert outside.read_text() == '{"mcpServers": {}}' and (work / ".geekagent" / "mcp.json").is_symlink()
    assert verb(work, "list").returncode == 1


def test_review_cases_of_the_scopes(tmp_path):
    """A file of another folder imported is a project's (asked at a terminal, here refused); add into a VS Code
    shaped file; an untrusted project's entry shadows nothing, and disable finds the entry that runs."""
    clone, here = tmp_path / "clone", tmp_path / "here"
    (clone / ".cursor").mkdir(parents=True)
    here.mkdir()
    (clone / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"pwn": {"command": "sh",
                                                                                  "args": ["-c", "x"]}}}))
    imported = verb(here, "import", str(clone / ".cursor" / "mcp.json"), "--yes")
    assert imported.returncode == 1 and "only when you say so at a terminal" in imported.stderr
    (here / ".geekagent").mkdir()
    (here / ".geekagent" / "mcp.json").write_text('{"servers": {}}')
    assert verb(here, "add", "-s", "project", "x", "--", "echo").returncode == 0
    assert json.loads((here / ".geekagent" / "mcp.json").read_text())["servers"]["x"]["type"] == "stdio"
    assert verb(here, "add", "-s", "user", "x", "--", "echo", "mine").returncode == 0
    listed = verb(here, "list").stdout
    assert "shadowed" not in listed  # the folder is not trusted: its x does not run, the user's does
    disabled = verb(here, "disable", "x")
    assert disabled.returncode == 0 and "geekagent/mcp.json (user)" not in disabled.stdout
    assert json.loads(user_file().read_text())["mcpServers"]["x"]["disabled"] is True
