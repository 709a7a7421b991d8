"""Tool calls the server runs as tasks (client/tasks.py; the extension io.modelcontextprotocol/tasks of
2026-07-28), against the project's own tasks server (tests/fakes/tasks_server.py), over stdio and HTTP."""
import json
import sys

import pytest

from beyond.client.capabilities import AskRefused
from beyond.client.tasks import MAX_BAD_ANSWERS, MIN_POLL_S
from conftest import FAKES, wait_until
from fakes.tasks_server import TASKS, TasksHttp
from mcp import McpError


def tasks_entry(tmp_path, mode: str = "", **extra) -> dict:
    """A 2026-07-28 stdio entry for the tasks server; what it receives goes to tmp_path/log.jsonl."""
    return {"command": sys.executable, "args": [str(FAKES / "tasks_server.py")] + ([mode] if mode else []),
            "protocol": "2026-07-28", "env": {"TASKS_LOG": str(tmp_path / "log.jsonl")}, **extra}


def received(tmp_path, method: str | None = None) -> list[dict]:
    lines = (tmp_path / "log.jsonl").read_text().splitlines() if (tmp_path / "log.jsonl").exists() else []
    return [m for m in map(json.loads, lines) if method is None or m.get("method") == method]


class Answers:
    """Handlers that answer a form with a name and sampling with a text, counting what they were asked."""

    def __init__(self, refuse: bool = False) -> None:
        self.asked, self.refuse = [], refuse

    def capabilities(self) -> dict:
        return {"elicitation": {"form": {}}, "sampling": {}}

    def answer(self, server: str, config, method: str, params: object) -> dict:
        self.asked.append(method)
        if self.refuse:
            raise AskRefused(-1, "declined here")
        if method == "elicitation/create":
            return {"action": "accept", "content": {"name": "Ada"}}
        return {"role": "assistant", "content": {"type": "text", "text": "hi there"}, "model": "m"}

    def finished(self, server, config, completed) -> bool:
        return False


def test_a_task_is_polled_to_its_result_never_faster_than_the_clamped_interval(started, tmp_path):
    """Every request declares the extension; the polls follow pollIntervalMs as it changes (0 taken as
    0.1 s); the activity line sees each new status; the result is the call's, as a plain one would be."""
    client = started(tasks_entry(tmp_path))
    shown = []
    text = client.call_tool("slow", {"seconds": 0.5, "intervals": [0, 0, 300]}, on_progress=shown.append)
    assert text == "slow done"
    calls = received(tmp_path, "tools/call")
    assert all(TASKS in m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"]
               for m in received(tmp_path) if "id" in m)
    polls = [m["at"] for m in received(tmp_path, "tasks/get")]
    gaps = [b - a for a, b in zip([calls[0]["at"]] + polls, polls)]
    assert len(polls) >= 3 and all(gap >= MIN_POLL_S - 0.01 for gap in gaps), gaps
    assert all(gap >= 0.29 for gap in gaps[2:]), gaps  # the interval grew to 300 ms at the second poll
    assert shown[0] == "task working: started" and any("% done" in line for line in shown)


def test_a_tasks_question_is_asked_once_though_the_server_repeats_it(started, tmp_path):
    """input_required: the form is answered as a standalone one would be, with tasks/update, once."""
    asks = Answers()
    client = started(tasks_entry(tmp_path), asks=asks)
    assert client.call_tool("form", {}) == "hello Ada"
    assert asks.asked == ["elicitation/create"]
    (update,) = received(tmp_path, "tasks/update")
    assert update["params"]["inputResponses"] == {"name": {"action": "accept", "content": {"name": "Ada"}}}
    assert len(received(tmp_path, "tasks/get")) >= 3  # the question came in two polls at least
    assert client.call_tool("sample", {}) == 'the model said {"type": "text", "text": "hi there"}'


def test_a_refused_form_goes_back_declined_and_the_task_goes_on(started, tmp_path):
    """A form the handlers refuse inside a task is answered with tasks/update as declined, once: the task
    goes on (here it completes) long before its taskTimeout."""
    asks = Answers(refuse=True)
    client = started(tasks_entry(tmp_path, taskTimeout=60), asks=asks)
    assert client.call_tool("form", {}) == "hello None"  # the fake greets what it got: no name
    assert asks.asked == ["elicitation/create"]
    declined = [{"name": {"action": "decline"}}]
    assert [m["params"]["inputResponses"] for m in received(tmp_path, "tasks/update")] == declined


def test_a_refused_sampling_request_ends_the_task_at_once(started, tmp_path):
    """No result refuses a sampling request: the task is cancelled at once, the call fails naming why."""
    asks = Answers(refuse=True)
    client = started(tasks_entry(tmp_path, taskTimeout=60), asks=asks)
    with pytest.raises(McpError, match=r"task \S+ of sample asked for sampling/createMessage, which was refused; the "
                                       r"task was cancelled"):
        client.call_tool("sample", {})
    assert received(tmp_path, "tasks/update") == [] and wait_until(lambda: received(tmp_path, "tasks/cancel"))


@pytest.mark.parametrize("tool, said", [("fail", "failed: API rate limit exceeded"),
                                        ("gone", "was cancelled by the server: the operator stopped it")])
def test_a_failed_or_cancelled_task_is_the_calls_error(started, tmp_path, tool, said):
    with pytest.raises(McpError, match=said):
        started(tasks_entry(tmp_path)).call_tool(tool, {})


def test_a_tool_that_may_run_as_a_task_answers_plainly_too(started, tmp_path):
    client = started(tasks_entry(tmp_path))
    assert client.call_tool("optional", {}) == "optional, no task"
    assert client.call_tool("optional", {"task": True, "seconds": 0.1}) == "optional done"


def test_a_task_for_a_list_is_an_invalid_answer(started, tmp_path):
    """Only tools/call may be answered with a task: a server answering tools/list with one fails to start."""
    with pytest.raises(McpError, match="tools/list: the server answered with a task"):
        started(tasks_entry(tmp_path, "task_list"))


@pytest.mark.parametrize("mode, said", [("new_task", "tasks/get: the server answered with a task"),
                                        ("garbage", "no task status")])
def test_polls_answered_with_no_task_end_the_call_soon(started, tmp_path, mode, said):
    with pytest.raises(McpError, match=said):
        started(tasks_entry(tmp_path, mode)).call_tool("slow", {"seconds": 5})
    assert len(received(tmp_path, "tasks/get")) <= MAX_BAD_ANSWERS


def test_over_http_every_task_request_names_its_task(started):
    """Mcp-Name is the task id on tasks/get, tasks/update and tasks/cancel (the server refuses a mismatch)."""
    with TasksHttp() as server:
        client = started({"url": server.url, "protocol": "2026-07-28", "taskTimeout": 0.5}, asks=Answers())
        assert client.call_tool("form", {}) == "hello Ada"
        with pytest.raises(McpError, match="taskTimeout"):
            client.call_tool("forever", {})
        assert wait_until(lambda: any(m.get("method") == "tasks/cancel" for m in server.seen))
        named = [(m["method"], m["headers"].get("mcp-name"), m["params"]["taskId"]) for m in server.seen
                 if m.get("method", "").startswith("tasks/")]
        assert {method for method, _, _ in named} == {"tasks/get", "tasks/update", "tasks/cancel"}
        assert all(header == task for _, header, task in named)


def test_a_task_from_a_server_never_told_of_the_extension_is_an_invalid_answer(started):
    """A 2025 server (no 2026-07-28 session declared the extension to it) answers a call with a task: that
    call fails with one line, and no tasks/get is ever sent."""
    from conftest import fake
    client = started(fake("normal"))
    with pytest.raises(McpError, match="^tools/call: the server answered with a task, though this session never "
                                       "told it of the tasks extension"):
        client.call_tool("task_answer", {})
    assert "tasks/get" not in json.loads(client.call_tool("methods_seen", {}))
