"""The lesson: day15/'s flat files, copied into an empty folder or in the repository, are the tutorial's
program, with or without the POSIX calls the product needs (as on Windows); the full agent's door without
those calls starts nothing and says why; an edit to index.py is what runs."""
import re
import shutil
import subprocess
import sys

import pytest

from conftest import DAY15, agent_env, assert_no_process_left, demo, workdir
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls

SCENARIO = "roll a die, then count the characters and words of 'Model Context Protocol'"
# A sitecustomize.py that takes away what the product needs and Windows' Python does not have.
NO_POSIX = """import os, sys
for name in ("geteuid", "killpg", "set_blocking", "O_NOFOLLOW", "getpgid", "setsid"):
    if hasattr(os, name):
        delattr(os, name)
for name in ("fcntl", "termios", "readline", "pty", "tty"):
    sys.modules[name] = None
"""


def copy_lesson(folder):
    """day15/*.py but the product's doors (beyond_*.py), and a config for the demo server."""
    (folder / "day15").mkdir(parents=True)
    for path in DAY15.glob("*.py"):
        if not path.name.startswith("beyond_"):
            shutil.copy(path, folder / "day15" / path.name)
    return workdir(folder, {"demo": {"command": sys.executable, "args": ["day15/demo_server.py"]}})


def run(cwd, lines, env, no_posix, tmp_path, index="day15/index.py", args=()):
    if no_posix:
        (tmp_path / "site").mkdir(exist_ok=True)
        (tmp_path / "site" / "sitecustomize.py").write_text(NO_POSIX)
        env = {**env, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run([sys.executable, index, *args], cwd=cwd, input="".join(f"{l}\n" for l in lines),
                          capture_output=True, text=True, env=env, timeout=60)
    assert_no_process_left(cwd)
    return done


@pytest.mark.parametrize("where, no_posix", [("alone", False), ("alone", True), ("repository", True)],
                         ids=["copied alone", "copied alone, no posix calls", "repository, no posix calls"])
def test_the_lesson_holds_section_5s_conversation(tmp_path, where, no_posix):
    """/mcp lists the two discovered tools; the scenario asks y/N twice on stdin, both tools run through
    the registry, the answer holds both results; /exit stops the server (no process left)."""
    alone = where == "alone"
    cwd = copy_lesson(tmp_path / "alone") if alone else workdir(tmp_path / "p", {"demo": demo()})
    script = [tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": "Model Context Protocol"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run(cwd, ["/mcp", SCENARIO, "y", "y", "/exit"], agent_env(model.base_url), no_posix, tmp_path,
                   index="day15/index.py" if alone else str(DAY15 / "index.py"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "MCP  demo(2)" in done.stdout
    assert "demo (2 tools)\n  mcp_demo_word_count\n  mcp_demo_dice\n" in done.stdout
    roll = re.search(r"\[tool mcp_demo_dice -> rolled ([1-6])\]", done.stdout)
    assert roll and "[tool mcp_demo_word_count -> 22 characters, 3 words]" in done.stdout, done.stdout
    assert f"Results: rolled {roll.group(1)} | 22 characters, 3 words" in done.stdout
    assert done.stdout.count("Allow?") == 2 and model.violations == []


@pytest.mark.parametrize("where", ["copied alone", "repository"])
def test_section_5s_deny_is_offered_and_refused_and_end_of_input_leaves(tmp_path, where):
    """Section 5's last check, copied alone and in the repository: a tool GeekAgent.json denies is still
    offered to the model, and its call is refused by the permission layer, never run (the model reads
    why); Ctrl-D (end of input) leaves."""
    cwd = copy_lesson(tmp_path / "alone")
    (cwd / ".geekagent" / "GeekAgent.json").write_text('{"tools": {"mcp_demo_dice": "deny"}}')
    with FakeOpenAI([tool_calls(("mcp_demo_dice", {})), answer_from_tools]) as model:
        done = run(cwd, ["roll"], agent_env(model.base_url), False, tmp_path,
                   index=str(DAY15 / "index.py") if where == "repository" else "day15/index.py")
    assert done.returncode == 0 and "Allow?" not in done.stdout, done
    assert "mcp_demo_dice" in [spec["function"]["name"] for spec in model.requests[0]["tools"]]
    assert "rolled" not in done.stdout and "[tool mcp_demo_dice -> Denied" in done.stdout, done.stdout


@pytest.mark.parametrize("args", [(), ("--help",), ("mcp", "validate", "--trust")])
def test_the_full_agent_without_posix_calls_starts_nothing_and_says_why(tmp_path, args):
    """beyond_agent.py on a Python without the product's calls, in an untrusted folder whose server would
    write a marker: it never falls back to the lesson (which would start it unasked), it exits 2 with one
    line naming the lesson, and the marker is not written; --help and the mcp verbs are no exception."""
    marker = tmp_path / "marker"
    cwd = workdir(tmp_path / "clone", {"m": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}})
    done = run(cwd, ["/exit"], agent_env(key=None, trust=False), True, tmp_path,
               index=str(DAY15 / "beyond_agent.py"), args=args)
    assert done.returncode == 2 and done.stdout == "" and not marker.exists(), done
    assert done.stderr == "error: the full agent needs Linux, macOS or WSL; day15/index.py, the lesson, runs on any " \
                          "Python\n", done.stderr


def test_an_edit_to_index_pys_loop_is_what_runs(tmp_path):
    """In a copy of the repository, a line added to index.py's /mcp shows when index.py runs."""
    shutil.copytree(DAY15, tmp_path / "repo" / "day15", ignore=shutil.ignore_patterns("__pycache__"))
    index = tmp_path / "repo" / "day15" / "index.py"
    source = index.read_text()
    mcp_command = '    statuses = mcp.mcp_statuses()\n    if not statuses:\n        print("(no MCP'
    assert source.count(mcp_command) == 1
    index.write_text(source.replace(mcp_command, '    print("A READER WAS HERE")\n' + mcp_command))
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    done = subprocess.run([sys.executable, str(index)], cwd=cwd, input="/mcp\n/exit\n", capture_output=True,
                          text=True, env=agent_env(key=None), timeout=60)
    assert done.returncode == 0 and "A READER WAS HERE\ndemo (2 tools)" in done.stdout, done
    assert_no_process_left(cwd)


def test_ctrl_c_while_a_server_starts_leaves_no_server(tmp_path):
    """Ctrl-C while a server that ignores it is starting: index.py leaves without a traceback, and the
    server is stopped on the way out (its SIGTERM is not ignored)."""
    import signal
    from conftest import processes_in, wait_for_output, wait_until
    server = tmp_path / "stubborn.py"
    server.write_text("import signal, sys, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      "print('starting', file=sys.stderr, flush=True)\ntime.sleep(60)\n")
    cwd = workdir(tmp_path / "p", {"slow": {"command": sys.executable, "args": [str(server)]}})
    lesson = subprocess.Popen([sys.executable, str(DAY15 / "index.py")], cwd=cwd, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=agent_env(key=None))
    try:
        wait_for_output(lesson, "[mcp:slow] starting", stream="stderr")
        lesson.send_signal(signal.SIGINT)
        _, err = lesson.communicate(timeout=30)
        assert lesson.returncode == 0 and b"Traceback" not in err, err
        assert wait_until(lambda: processes_in(cwd) == [], 10)
    finally:
        lesson.kill()
        lesson.communicate()
