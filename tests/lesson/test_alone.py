"""The lesson alone: day15/'s flat files copied into an empty folder are the tutorial's program, with or
without the POSIX calls the product needs (as on Windows), and the whole project without those calls runs it."""
import re
import shutil
import subprocess
import sys

import pytest

from conftest import DAY15, agent_env, assert_no_process_left, workdir
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
    """day15/*.py but the entry for scripts (which is the product's), and a config for the demo server."""
    (folder / "day15").mkdir(parents=True)
    for path in DAY15.glob("*.py"):
        if path.name != "beyond_mcp.py":
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


@pytest.mark.parametrize("no_posix", [False, True], ids=["as-is", "no-posix-calls"])
def test_the_lesson_copied_alone_holds_section_5s_conversation(tmp_path, no_posix):
    """/mcp lists the two discovered tools; the scenario asks y/N twice on stdin, both tools run through
    the registry, the answer holds both results; /exit stops the server (no process left)."""
    cwd = copy_lesson(tmp_path / "alone")
    script = [tool_calls(("mcp_demo_dice", {}), ("mcp_demo_word_count", {"text": "Model Context Protocol"})),
              answer_from_tools]
    with FakeOpenAI(script) as model:
        done = run(cwd, ["/mcp", SCENARIO, "y", "y", "/exit"], agent_env(model.base_url), no_posix, tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "MCP  demo(2)" in done.stdout
    assert "demo (2 tools)\n  mcp_demo_word_count\n  mcp_demo_dice\n" in done.stdout
    roll = re.search(r"\[tool mcp_demo_dice -> rolled ([1-6])\]", done.stdout)
    assert roll and "[tool mcp_demo_word_count -> 22 characters, 3 words]" in done.stdout, done.stdout
    assert f"Results: rolled {roll.group(1)} | 22 characters, 3 words" in done.stdout
    assert done.stdout.count("Allow?") == 2 and model.violations == []


@pytest.mark.parametrize("tutorial", [False, True], ids=["copied alone", "--tutorial"])
def test_section_5s_deny_is_offered_and_refused_and_end_of_input_leaves(tmp_path, tutorial):
    """Section 5's last check, copied alone and with --tutorial: a tool GeekAgent.json denies is still
    offered to the model, and its call is refused by the permission layer, never run (the model reads
    why); Ctrl-D (end of input) leaves."""
    cwd = copy_lesson(tmp_path / "alone")
    (cwd / ".geekagent" / "GeekAgent.json").write_text('{"tools": {"mcp_demo_dice": "deny"}}')
    with FakeOpenAI([tool_calls(("mcp_demo_dice", {})), answer_from_tools]) as model:
        done = run(cwd, ["roll"], agent_env(model.base_url), False, tmp_path,
                   index=str(DAY15 / "index.py") if tutorial else "day15/index.py", args=("--tutorial",) * tutorial)
    assert done.returncode == 0 and "Allow?" not in done.stdout, done
    assert "mcp_demo_dice" in [spec["function"]["name"] for spec in model.requests[0]["tools"]]
    assert "rolled" not in done.stdout and "[tool mcp_demo_dice -> Denied" in done.stdout, done.stdout


@pytest.mark.parametrize("args", [(), ("--tutorial",), ("mcp", "validate", "--trust")])
def test_the_whole_project_without_posix_calls_starts_nothing_and_says_why(tmp_path, args):
    """The repository's index.py on a Python without the product's calls, in an untrusted folder whose
    server would write a marker: it never falls back to the lesson (which would start it unasked), it exits 2
    with one line, and the marker is not written; --help and the mcp verbs are no exception to it."""
    marker = tmp_path / "marker"
    cwd = workdir(tmp_path / "clone", {"m": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}})
    done = run(cwd, ["/exit"], agent_env(key=None, trust=False), True, tmp_path, index=str(DAY15 / "index.py"),
               args=args)
    assert done.returncode == 2 and done.stdout == "" and not marker.exists(), done
    assert done.stderr.count("\n") == 1 and "needs Linux, macOS or WSL, where --tutorial runs" in done.stderr
