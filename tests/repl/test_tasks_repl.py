"""Tasks through the agent (client/tasks.py, repl/tasks.py): a form inside a task and Ctrl-C on a
terminal, -p, and a task that outlives the agent, found again with /tasks."""
import json
import signal
import subprocess
import sys

from conftest import FAKES, AGENT, agent_env, assert_no_process_left, run_agent, run_in_pty, wait_until, workdir
from fakes.openai_server import FakeOpenAI, answer_from_tools, tool_calls
from fakes.tasks_server import TasksHttp
from test_console import pty_env

TOOLS = ("slow", "form", "sample", "forever")
ALLOWED = {f"mcp_tasks_{tool}": "allow" for tool in TOOLS} | {f"mcp_remote_{tool}": "allow" for tool in TOOLS}


def tasks_folder(tmp_path):
    """A folder whose server "tasks" is the tasks server over stdio, on 2026-07-28; its log in the folder."""
    return workdir(tmp_path, {"tasks": {"command": sys.executable, "args": [str(FAKES / "tasks_server.py")],
                                        "protocol": "2026-07-28", "env": {"TASKS_LOG": str(tmp_path / "log.jsonl")}}},
                   ALLOWED)


def received(tmp_path, method: str) -> list[dict]:
    lines = (tmp_path / "log.jsonl").read_text().splitlines() if (tmp_path / "log.jsonl").exists() else []
    return [m for m in map(json.loads, lines) if m.get("method") == method]


def test_a_form_inside_a_task_and_ctrl_c_on_a_task(tmp_path):
    """The task's question is the console's form; Ctrl-C while a task works sends tasks/cancel (and no
    notifications/cancelled), and the prompt is back at once."""
    cwd = tasks_folder(tmp_path / "p")
    script = [tool_calls(("mcp_tasks_form", {})), answer_from_tools, tool_calls(("mcp_tasks_forever", {}))]
    with FakeOpenAI(script) as model:
        screen = run_in_pty([sys.executable, AGENT], cwd, pty_env(tmp_path, model.base_url), [
            ("> ", "greet me\r"), ("name (required)", "Ada\r"), ("[a]ccept", "a\r"), ("tokens:", "work forever\r"),
            ("task working", "\x03"), ("> ", "/exit\r")])
    assert "Results: hello Ada" in screen and "(cancelled)" in screen
    assert "Your name, for the greeting?" in screen
    assert wait_until(lambda: received(tmp_path / "p", "tasks/cancel"))
    assert received(tmp_path / "p", "notifications/cancelled") == []
    (update,) = received(tmp_path / "p", "tasks/update")
    assert update["params"]["inputResponses"]["name"]["content"] == {"name": "Ada"}


def test_p_runs_a_task_and_declines_its_form_as_it_would_a_standalone_one(tmp_path):
    cwd = tasks_folder(tmp_path)
    script = [tool_calls(("mcp_tasks_slow", {"seconds": 0.2}), ("mcp_tasks_form", {})), answer_from_tools]
    with FakeOpenAI(script) as model:
        done = subprocess.run([sys.executable, AGENT, "-p", "go"], cwd=cwd, capture_output=True, text=True,
                              env=agent_env(model.base_url), timeout=30)
    assert_no_process_left(cwd)
    assert done.returncode == 0, done.stderr
    assert "slow done" in done.stdout and "hello None" in done.stdout
    assert "tasks (7 tools)" in done.stderr  # those that need a task are offered on 2026-07-28
    (update,) = received(tmp_path, "tasks/update")
    assert update["params"]["inputResponses"]["name"]["action"] == "decline"
    assert "[mcp_tasks_slow] task " in done.stderr and "[mcp_tasks_slow]" not in done.stdout  # its status lines


def test_p_refusing_a_sampling_request_inside_a_task_ends_the_task_at_once(tmp_path):
    """Under -p nobody is asked: a sampling request inside a task is refused and the task cancelled at once,
    well before taskTimeout; the model reads why."""
    cwd = tasks_folder(tmp_path)
    with FakeOpenAI([tool_calls(("mcp_tasks_sample", {})), answer_from_tools]) as model:
        done = subprocess.run([sys.executable, AGENT, "-p", "go"], cwd=cwd, capture_output=True, text=True,
                              env=agent_env(model.base_url), timeout=30)
    assert_no_process_left(cwd)
    assert done.returncode == 0 and "which was refused; the task was cancelled" in done.stdout, done
    assert wait_until(lambda: received(tmp_path, "tasks/cancel")) and received(tmp_path, "tasks/update") == []


def test_a_task_outlives_a_killed_agent_and_tasks_shows_its_result(tmp_path):
    """SIGKILL during a task: the next start in the folder lists it with /tasks, shows its result with
    /tasks <id>, and then forgets it; another folder lists nothing."""
    with TasksHttp() as server:
        cwd = workdir(tmp_path / "p", {"remote": {"url": server.url, "protocol": "2026-07-28"}}, ALLOWED)
        env = {**agent_env(), "XDG_STATE_HOME": str(tmp_path / "state")}
        with FakeOpenAI([tool_calls(("mcp_remote_slow", {"seconds": 1.0}))]) as model:
            agent = subprocess.Popen([sys.executable, AGENT, "-p", "go"], cwd=cwd, env={
                **env, "OPENAI_BASE_URL": model.base_url}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                assert wait_until(lambda: any(m.get("method") == "tasks/get" for m in server.seen))
            finally:
                agent.send_signal(signal.SIGKILL)
                agent.wait(10)
        (task_id,) = server.tasks.tasks
        assert wait_until(lambda: server.tasks.state(server.tasks.tasks[task_id])["status"] == "completed")
        done = run_agent(cwd, ["/tasks", f"/tasks {task_id}", "/tasks", "/exit"], env)
        listing, result, after = done.stdout.split("> ")[1:4]
        assert f"remote  slow  {task_id}  completed" in listing and f"/tasks {task_id} shows its result" in listing
        assert "slow done" in result and "no tasks of this folder" in after
        other = run_agent(workdir(tmp_path / "q", {}), ["/tasks", "/exit"], env)
        assert "no tasks of this folder" in other.stdout


def test_tasks_lists_drops_and_forgets_as_the_server_says(started, tmp_path, capsys):
    """/tasks: a task the server no longer knows is dropped with a line; a failed one is listed, then
    forgotten; one still working stays; a server that is not up is said so; a task kept for another program
    now under the server's name is never sent to it, and /tasks forget drops it. Two servers' tasks with
    the same id are both kept."""
    from types import SimpleNamespace

    from beyond.client.config import parse_server_config
    from beyond.folder.tasks import TaskLog
    from beyond.repl.tasks import cmd_tasks
    with TasksHttp() as server:
        client = started({"url": server.url, "protocol": "2026-07-28"}, name="remote")
        log = TaskLog(str(tmp_path), str(tmp_path / "tasks.json"))
        failed, working = (server.tasks.create(tool, {})["taskId"] for tool in ("fail", "forever"))
        for task_id, tool, server_name in ((failed, "fail", "remote"), ("no-such-task", "slow", "remote"),
                                           (working, "forever", "remote"), ("elsewhere", "slow", "down")):
            log.created(server_name, tool, task_id, client.cfg)
        other = parse_server_config("remote", {"url": server.url + "/another", "protocol": "2026-07-28"})
        log.created("remote", "forever", "by-another", other)  # the folder's "remote" was another server then
        log.created("remote", "forever", working, other)  # the same id, another server's: both kept
        status = SimpleNamespace(server="remote", client=client)
        session = SimpleNamespace(agent=SimpleNamespace(task_log=log),
                                  servers=SimpleNamespace(mcp_statuses=lambda: [status]))
        cmd_tasks(session, "")
        out = capsys.readouterr().out
        assert f"remote  fail  {failed}  failed: it broke" in out and f"forever  {working}  working" in out
        assert "no-such-task  dropped: the server no longer knows it" in out
        assert "elsewhere  (its server is not up)" in out
        assert "by-another  server changed: not resumed (/tasks forget by-another drops it)" in out
        assert f"{working}  server changed: not resumed" in out
        assert sorted(e["id"] for e in log.pending().values()) == sorted([working, working, "elsewhere", "by-another"])
        cmd_tasks(session, "no-such-task")
        assert "no task no-such-task waits here" in capsys.readouterr().out
        cmd_tasks(session, "forget by-another")
        assert "by-another" not in [e["id"] for e in log.pending().values()]
