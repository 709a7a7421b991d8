"""The user's state files (dirs.StateFile): two agents changing one at once lose nothing, a file that cannot
be parsed is moved aside with a line (never overwritten as empty), a file the user writes is never moved,
and the history is appended to, not rewritten."""
import json
import subprocess
import sys

from conftest import DAY15, AGENT, agent_env, run_in_pty, workdir

WRITER = """
import sys
sys.path.insert(0, sys.argv[1])
from beyond.client.config import parse_server_config
from beyond.folder.project import JsonStore
from beyond.folder.tasks import TaskLog
store, tasks, who = JsonStore(sys.argv[2]), TaskLog(sys.argv[3], sys.argv[4]), sys.argv[5]
config = parse_server_config("s", {"command": "server"})
for n in range(60):
    store.edit("items", lambda kept: (kept or []) + [f"{who}-{n}"])
    if n < 40:
        tasks.created("s", "t", f"{who}-{n}", config)
"""


def test_two_processes_changing_one_store_at_once_lose_nothing(tmp_path):
    """Each of two processes makes 60 changes to one store and 40 to the tasks of one folder, at once."""
    store, tasks = tmp_path / "state" / "store.json", tmp_path / "state" / "tasks.json"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(DAY15), str(store), str(tmp_path), str(tasks), who])
               for who in ("a", "b")]
    for writer in writers:
        assert writer.wait(60) == 0
    items = json.loads(store.read_text())["items"]
    assert sorted(items) == sorted(f"{who}-{n}" for who in "ab" for n in range(60))
    assert len(json.loads(tasks.read_text())[str(tmp_path)]) == 80
    assert oct(store.stat().st_mode & 0o777) == "0o600"


def test_a_state_file_that_cannot_be_parsed_is_moved_aside_not_emptied(tmp_path, capsys):
    from beyond.folder.project import JsonStore
    path = tmp_path / "approvals.json"
    path.write_text('{"half": ')
    path.chmod(0o600)
    store = JsonStore(str(path))
    assert store.load() == {} and path.read_text() == '{"half": '  # a look changes nothing
    store.update("k", 1)
    (aside,) = tmp_path.glob("approvals.json.corrupt-*")
    assert aside.read_text() == '{"half": ' and json.loads(path.read_text()) == {"k": 1}
    assert "moved to" in capsys.readouterr().err


def test_a_users_settings_file_that_cannot_be_parsed_is_left_as_it_is(tmp_path, own_user_dirs):
    settings = own_user_dirs / "config" / "geekagent" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"safeFolders": [')
    done = subprocess.run([sys.executable, AGENT], cwd=workdir(tmp_path, {}), input="/exit\n", capture_output=True,
                          text=True, env=agent_env(key=None), timeout=30)
    assert done.returncode == 0 and settings.read_text() == '{"safeFolders": ['
    assert not list(settings.parent.glob("settings.json.corrupt-*"))


def test_history_is_appended_so_another_agents_lines_stay(tmp_path, own_user_dirs):
    """A line another agent saved while this one ran stays in the history, between this one's lines (each is
    appended as it is entered)."""
    history = own_user_dirs / "state" / "geekagent" / "history"
    history.parent.mkdir(parents=True)
    history.write_text("older\n")
    cwd = workdir(tmp_path / "p", {})

    def another_agent_saves(shown: str) -> str:
        with open(history, "a") as f:
            f.write("from another agent\n")
        return "/exit\r"
    run_in_pty([sys.executable, AGENT], cwd, {**agent_env(key=None), "NO_COLOR": "1"},
               [("> ", "/tools\r"), ("> ", another_agent_saves)])
    assert history.read_text().splitlines() == ["older", "/tools", "from another agent", "/exit"]
