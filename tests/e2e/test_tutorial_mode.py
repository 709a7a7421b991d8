"""--tutorial: index.py's own program behind the folder's trust question (beyond/repl/tutorial.py). What a
reader edits in index.py is what runs; what it is given is what the user trusted, and nothing when not."""
import shutil
import subprocess
import sys

from conftest import DAY15, agent_env, demo, run_agent, workdir
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls


def marker_entry(marker) -> dict:
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}


def test_an_edit_to_index_pys_loop_is_what_runs(tmp_path):
    """In a copy of the repository, a line added to index.py's /mcp shows under --tutorial."""
    shutil.copytree(DAY15, tmp_path / "repo" / "day15", ignore=shutil.ignore_patterns("__pycache__"))
    index = tmp_path / "repo" / "day15" / "index.py"
    source = index.read_text()
    assert source.count('    statuses = mcp.mcp_statuses()\n    if not statuses:\n        print("(no MCP') == 1
    index.write_text(source.replace('    statuses = mcp.mcp_statuses()\n    if not statuses:\n        print("(no MCP',
                                    '    print("A READER WAS HERE")\n    statuses = mcp.mcp_statuses()\n'
                                    '    if not statuses:\n        print("(no MCP'))
    cwd = workdir(tmp_path / "p", {"demo": demo()})
    done = subprocess.run([sys.executable, str(index), "--tutorial"], cwd=cwd, input="/mcp\n/exit\n",
                          capture_output=True, text=True, env=agent_env(key=None), timeout=60)
    assert done.returncode == 0 and "A READER WAS HERE\ndemo (2 tools)" in done.stdout, done


def test_untrusted_it_starts_nothing_and_the_folder_allows_nothing(tmp_path):
    """No terminal, no --trust: no server starts (its marker is never written), .env is not read, and a tool
    GeekAgent.json allows is not there to run: the model's call is refused."""
    marker = tmp_path / "marker"
    cwd = workdir(tmp_path / "clone", {"m": marker_entry(marker)}, {"mcp_m_x": "allow"})
    (cwd / ".env").write_text("OPENAI_MODEL=from-the-folder\n")
    with FakeOpenAI([tool_calls(("mcp_m_x", {})), answer_from_tools]) as model:
        done = run_agent(cwd, ["go", "/exit"], agent_env(model.base_url, trust=False), args=("--tutorial",))
    assert not marker.exists() and "MCP  none" in done.stdout and "from-the-folder" not in done.stdout
    assert "not trusted" in done.stderr and "[tool mcp_m_x -> Error: unknown tool 'mcp_m_x'.]" in done.stdout


def test_trusted_it_gets_the_trusted_files_without_disabled_entries(tmp_path):
    """Trusted: the .env's model, the demo server, GeekAgent.json's allow (dice runs unasked); a
    "disabled" entry, which the tutorial's client would start, is left out as the question said."""
    marker = tmp_path / "marker"
    cwd = workdir(tmp_path / "p", {"demo": demo(), "off": {**marker_entry(marker), "disabled": True}},
                  {"mcp_demo_dice": "allow"})
    (cwd / ".env").write_text("OPENAI_MODEL=from-the-folder\n")
    with FakeOpenAI([tool_calls(("mcp_demo_dice", {})), answer_from_tools]) as model:
        done = run_agent(cwd, ["roll", "/exit"], agent_env(model.base_url), args=("--tutorial",))
    assert "model from-the-folder" in done.stdout and "MCP  demo(2)" in done.stdout and not marker.exists()
    assert "[tool mcp_demo_dice -> rolled " in done.stdout and "Allow?" not in done.stdout, done.stdout
