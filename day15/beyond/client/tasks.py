"""Beyond the tutorial: a tool call the server runs as a task (MCP 2026-07-28, the extension
io.modelcontextprotocol/tasks, SEP-2663).

Every request of a 2026-07-28 session declares the extension (revisions.py). A tools/call may then be
answered with a task instead of its result: its id, its status, how often to ask again. Task polls
tasks/get at the interval the server asks for, kept between MIN_POLL_S and MAX_POLL_S (0 never spins,
an hour never strands the user), and shows each new status on the activity line. What the task asks
(input_required) is answered as the same request standing alone would be, each key once, with
tasks/update. A completed task's result is the call's result; a failed one's error, a cancelled one and
one past the entry's taskTimeout are the call's error. Ctrl-C sends tasks/cancel (never
notifications/cancelled) and gives the prompt back at once. The id is kept (`kept`, the agent's
folder/tasks.py) from before the first poll until the outcome is delivered, so /tasks finds it after a crash.
"""
import json
import threading
import time

from beyond.client.errors import ReplyError, ServerError
from beyond.text import clean, shorten
from beyond.waits import SIGNAL_CHECK_S, cancelled
from mcp import McpError

TASKS = "io.modelcontextprotocol/tasks"
TASK_METHODS = ("tools/call",)  # the requests a server may answer with a task
STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
MIN_POLL_S, MAX_POLL_S = 0.1, 30.0
DEFAULT_POLL_S = 1.0        # a task that names no interval
MAX_INPUT_KEYS = 32         # questions one task may ask in all; past them it fails
MAX_BAD_ANSWERS = 3         # polls in a row answered with something that is no task of ours
MAX_TASK_ID_CHARS = 200


def declaring(capabilities: dict) -> dict:
    """The client's capabilities with the extension declared, as every 2026-07-28 request carries them."""
    return {**capabilities, "extensions": {**capabilities.get("extensions", {}), TASKS: {}}}


def task_allowed(method: str, server: str) -> None:
    """A task answers only TASK_METHODS; to anything else it is an invalid answer (McpError)."""
    if method not in TASK_METHODS:
        raise ServerError(f"{method}: the server answered with a task, which only {', '.join(TASK_METHODS)} may be "
                          "answered with (an invalid answer)", server)


class NoTasks:
    """Where task ids are kept when nothing keeps them (scripts): nowhere."""

    def created(self, server: str, tool: str, task_id: str, config) -> None:
        pass

    def delivered(self, task_id: str, config) -> None:
        pass


def task_id(created: dict, server: str) -> str:
    """The id of a task the server created, checked: a string of sane length."""
    value = created.get("taskId")
    if not isinstance(value, str) or not value or len(value) > MAX_TASK_ID_CHARS:
        raise ServerError(f"tools/call: the server answered with a task without a usable taskId "
                          f"({shorten(json.dumps(value), 80)})", server)
    return value


def described(task: dict) -> str:
    """A task's status and message, as the activity line and /tasks show them."""
    message = task.get("statusMessage")
    note = f": {shorten(clean(message, one_line=True), 80)}" if isinstance(message, str) and message else ""
    return f"task {clean(str(task.get('status')), one_line=True)[:20]}{note}"


class Task:
    """One task of a session (requests.Requests): run() polls it to its end and returns its result."""

    def __init__(self, session, tool: str, created: dict, on_progress=None, kept=None) -> None:
        self.session, self.tool, self.first = session, tool, created
        self.id = task_id(created, session.name)
        self.on_progress = on_progress or (lambda text: None)
        self.kept = kept or NoTasks()
        self.answered: set[str] = set()  # inputRequests keys answered (or refused): never asked again

    def run(self) -> dict:
        """The CallToolResult of the task once it completed; McpError when it failed, was cancelled or
        ran past taskTimeout (cancelled then); KeyboardInterrupt after tasks/cancel went out."""
        self.kept.created(self.session.name, self.tool, self.id, self.session.cfg)
        deadline = time.monotonic() + self.session.cfg.task_timeout
        task, shown, bad = self.first, None, 0
        try:
            while True:
                if described(task) != shown:
                    shown = described(task)
                    self.on_progress(shown)
                outcome = self._outcome(task)
                if outcome is not None:
                    self.kept.delivered(self.id, self.session.cfg)
                    return outcome
                if task.get("status") == "input_required":
                    self._answer(task.get("inputRequests"))
                self._pause(self._interval(task), deadline)
                task, bad = self._poll(bad)
        except KeyboardInterrupt:
            self.cancel("cancelled by the user")
            raise

    def _outcome(self, task: dict) -> dict | None:
        """A terminal task's result (completed), or its McpError raised (failed, cancelled); None while it runs."""
        status = task.get("status")
        if status == "completed":
            result = task.get("result")
            if not isinstance(result, dict):
                raise ServerError(f"task {self.id} completed without a result object", self.session.name)
            return result
        if status == "failed":
            error = task.get("error") if isinstance(task.get("error"), dict) else {}
            message = error.get("message") or task.get("statusMessage") or "no message"
            self.kept.delivered(self.id, self.session.cfg)
            code = error.get("code") if type(error.get("code")) is int else None
            raise ReplyError(f"task {self.id} failed: {shorten(str(message), 500)}", self.session.name, code)
        if status == "cancelled":
            self.kept.delivered(self.id, self.session.cfg)
            why = f": {shorten(str(task['statusMessage']), 200)}" if task.get("statusMessage") else ""
            raise ServerError(f"task {self.id} was cancelled by the server{why}", self.session.name)
        return None

    def _poll(self, bad: int) -> tuple[dict, int]:
        """tasks/get: (the task now, how many answers in a row were no task of ours)."""
        answer = self.session.request("tasks/get", {"taskId": self.id})
        if isinstance(answer, dict) and answer.get("status") in STATUSES and answer.get("taskId") in (None, self.id):
            return answer, 0
        if bad + 1 >= MAX_BAD_ANSWERS:
            raise ServerError(f"task {self.id}: tasks/get answered {MAX_BAD_ANSWERS} times with no task status "
                              f"({shorten(json.dumps(answer, default=str), 120)})", self.session.name)
        return {**self.first, "status": "working", "statusMessage": "(an answer that was no task, ignored)"}, bad + 1

    def _interval(self, task: dict) -> float:
        """The pause before the next poll: the server's pollIntervalMs (it may change), kept within bounds."""
        ms = task.get("pollIntervalMs")
        number = isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms == ms  # NaN is no interval
        seconds = ms / 1000 if number else DEFAULT_POLL_S
        return min(max(seconds, MIN_POLL_S), MAX_POLL_S)

    def _pause(self, seconds: float, deadline: float) -> None:
        """Wait before the next poll, in steps that notice Ctrl-C; past taskTimeout the task is cancelled."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if time.monotonic() >= deadline:
                break
            if cancelled():  # the main thread's Ctrl-C, for a call on a thread of its own (waits.py)
                raise KeyboardInterrupt
            time.sleep(min(left, SIGNAL_CHECK_S))
        if time.monotonic() >= deadline:
            self.cancel("taskTimeout")
            raise ServerError(f"task {self.id} of {self.tool} did not finish within "
                              f"{self.session.cfg.task_timeout:g} s (the entry's taskTimeout) and was cancelled; "
                              "/tasks shows it while the server keeps it", self.session.name)

    def _answer(self, requests: object) -> None:
        """Answer the task's new input requests, each as the same request of the server's own would be. A
        refused question goes back too, so the task goes on or ends instead of waiting for taskTimeout: a
        form as declined; a sampling or roots request, which no result refuses, cancels the task."""
        if not isinstance(requests, dict):
            return
        responses = {}
        for key, request in requests.items():
            if key in self.answered or not isinstance(request, dict):
                continue
            if len(self.answered) >= MAX_INPUT_KEYS:
                self.cancel("too many questions")
                raise ServerError(f"task {self.id} asked more than {MAX_INPUT_KEYS} questions; it was cancelled",
                                  self.session.name)
            self.answered.add(key)
            method = str(request.get("method"))
            answer = self.session.answer_input(method, request.get("params"))
            if answer is None and method == "elicitation/create":
                answer = {"action": "decline"}
            if answer is None:
                self.cancel(f"{shorten(method, 80)} was refused")
                raise ServerError(f"task {self.id} of {self.tool} asked for "
                                  f"{shorten(clean(method, one_line=True), 80)}, which was refused; the task was "
                                  "cancelled", self.session.name)
            responses[key] = answer
        if responses:
            self.session.request("tasks/update", {"taskId": self.id, "inputResponses": responses})

    def cancel(self, reason: str) -> None:
        """tasks/cancel, sent on a thread of its own: the caller goes on at once; a failure is only logged."""
        def send() -> None:
            try:
                self.session.request("tasks/cancel", {"taskId": self.id})
            except McpError as e:
                self.session.log(f"tasks/cancel of {self.id} ({reason}) failed: {e}")
        threading.Thread(target=send, name=f"mcp-{self.session.name}-cancel", daemon=True).start()
