"""Beyond the tutorial: what a server sends on its own, which the tutorial's client ignores.

The full client (session.py's Session) holds one FromServer per server: the server's requests
are answered (ping and roots at once, a question for the user on a thread of its own, -32601 for
the rest) at most ANSWERS_PER_S a second, written by one answers thread with the server's timeout
to take them, so a server that stops reading never blocks the reader and one that floods costs
little; log notifications and stderr lines are kept (and printed with --verbose); progress is
shown and pushes its call's deadline out; a changed tool or resource list is read again by one
thread, spaced out.
It asks the client to send, to log, to list tools and resources, and which revision it speaks.
"""
import itertools
import json
import threading
import time
from collections import deque

from beyond.client.capabilities import AskRefused
from beyond.secrets import mask
from beyond.wire.base import METHOD_NOT_FOUND
from beyond.wire.sandbox import refusal
from beyond.text import clean, shorten
from mcp import McpError

# A server that announces list changes over and over is re-listed at most once per this
# interval, doubled each time the list came back unchanged (up to the cap): a server that repeats
# itself forever then costs a tools/list every few minutes.
RELIST_INTERVAL_S = 1.0
RELIST_INTERVAL_CAP_S = 300.0
# A server's requests are answered at most this many a second, in bursts of as many; the rest are
# dropped and counted, so a server that floods requests (each answer over HTTP is a POST) costs the
# client little more than reading them.
ANSWERS_PER_S = 20.0
# The server's own words (stderr lines and log notifications) kept for /logs and for its errors.
TAIL_LINES = 200
# The requests of a server's that asks/handlers.py answers, and JSON-RPC codes of answers we cannot give.
ASKED_METHODS = ("elicitation/create", "sampling/createMessage")
BUSY, INTERNAL_ERROR = -32000, -32603
# A request whose id is longer than this is not answered (an id is a counter or a short string; a
# huge one would make every answer a huge write).
MAX_ID_CHARS = 1024
# Answers waiting to be written (the server is not reading meanwhile) at most; the rest are dropped.
MAX_QUEUED_ANSWERS = 64
# A server's log messages at these levels are printed as they come; lower ones go to /logs (--verbose: both).
LOUD_LEVELS = ("warning", "error", "critical", "alert", "emergency")
# A server's lines are printed at most this many a second (in bursts of as many); the rest are held
# back and counted (/logs keeps them), so a server that logs in a loop cannot flood the terminal.
PRINTED_PER_S = 20.0
# The ids of URL elicitations the server said are complete, kept (the newest): what a -32042 waits on.
COMPLETED_KEPT = 32
# What a sandbox refused the server, as its lines said (wire/sandbox.py), the last few: for a call that fails.
REFUSALS_KEPT = 8


class FromServer:
    """What one server sends unasked, and the state its handling needs; `echo` prints the server's
    words as they come, with the [mcp:name] prefix, as the tutorial does (beyond_agent.py --verbose)."""

    def __init__(self, client, echo: bool = False) -> None:
        self.client, self.echo = client, echo
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)  # what the server said last (appends are atomic)
        # _relist_lock guards _relisting and _stale: one re-list in flight, and the lists (tools,
        # resources) announced changed since it began, each read again once however often announced.
        self._relist_lock = threading.Lock()
        self._relisting = False
        self._stale: set[str] = set()
        self._asking = threading.Lock()  # held while the user is asked for one server's request
        # Our answers to its requests, in the order given, for the one answers thread (_writing while it
        # runs); _answers_lock guards both.
        self._answers: deque[tuple[dict, str, float]] = deque()
        self._answers_lock = threading.Lock()
        self._writing = False
        self._dropped_answers = 0  # answers to the server's requests not given (not writable at once, or too many)
        self._skipped_lines = 0  # lines from the server that were no JSON-RPC message
        self._answer_budget, self._answer_time = ANSWERS_PER_S, time.monotonic()  # answers allowed now, and when
        # Our calls in flight by progress token: the call (its deadline, progress callback, latest
        # deadline). No lock: every touch is one dict operation, which the GIL makes atomic.
        self.calls: dict[int, object] = {}
        self._tokens = itertools.count(1)  # next() on a count is atomic too
        # The URL elicitations the server said are complete (notifications/elicitation/complete), the last few.
        self._completed: deque[str] = deque(maxlen=COMPLETED_KEPT)
        self._refusals: deque[tuple[float, str]] = deque(maxlen=REFUSALS_KEPT)  # (when, the grant that allows it)
        # _print_lock guards the lines it may print now, when that was counted, and those held back since
        # the last one printed: stderr and stdout lines come on two threads.
        self._print_lock = threading.Lock()
        self._print_budget, self._print_time, self._held = PRINTED_PER_S, time.monotonic(), 0

    def completed(self, elicitation_id: str) -> bool:
        """Whether the server said the URL elicitation of this id is complete."""
        return bool(elicitation_id) and elicitation_id in self._completed

    def track(self, call) -> int:
        """A progress token for `call`, whose progress then reaches it until untrack()."""
        token = next(self._tokens)
        self.calls[token] = call
        return token

    def untrack(self, token: int) -> None:
        del self.calls[token]

    def handle(self, message: dict) -> bool:
        """A message with a method: a request of the server's (it has an id) or a notification. False for
        the acknowledgement of our own subscription, which is no news."""
        if "id" in message:
            self._answer(message)
            return True
        return self._on_notification(message)

    def _answer(self, message: dict) -> None:
        """ping gets {} and roots/list its roots at once; elicitation and sampling their answers
        (asks/handlers.py; one question of this server at a time, on a thread of its own, as the user may
        take a while); any other method -32601, so a server never waits on us (within ANSWERS_PER_S)."""
        method = shorten(str(message["method"]), 100)
        if len(json.dumps(message["id"])) > MAX_ID_CHARS:
            return self._drop_answer(method, f"its id is over {MAX_ID_CHARS} characters")
        if self.client.revisions.modern:
            return self._drop_answer(method, "in MCP 2026-07-28 a server sends no requests")
        now = time.monotonic()
        self._answer_budget = min(ANSWERS_PER_S, self._answer_budget + (now - self._answer_time) * ANSWERS_PER_S)
        self._answer_time = now
        if self._answer_budget < 1:
            return self._drop_answer(method, f"over {ANSWERS_PER_S:g} requests a second")
        self._answer_budget -= 1
        if method == "ping":
            return self._reply(message, {"result": {}})
        if method == "roots/list":  # needs nobody: answered even while a question of this server waits
            try:
                return self._reply(message, {"result": self.client.asks.answer(self.client.name, self.client.cfg,
                                                                               method, None)})
            except AskRefused as e:  # "roots": false
                return self._reply(message, {"error": {"code": e.code, "message": str(e)}})
        if method not in ASKED_METHODS:
            return self._reply(message, {"error": {"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"}})
        if not self._asking.acquire(blocking=False):
            return self._reply(message, {"error": {"code": BUSY, "message": "the client is answering another request"}})
        threading.Thread(target=self._ask, args=(message,), name=f"mcp-{self.client.name}-ask", daemon=True).start()

    def _ask(self, message: dict) -> None:
        """The answer to one elicitation or sampling request (releases _asking)."""
        try:
            result = {"result": self.client.asks.answer(self.client.name, self.client.cfg, message["method"],
                                                        message.get("params"))}
        except AskRefused as e:
            result = {"error": {"code": e.code, "message": str(e)}}
        except Exception as e:  # a bug must not leave the server waiting: it is told, and we say so
            self.said(f"could not answer {shorten(str(message['method']), 80)}: {type(e).__name__}: {e}", loud=True)
            result = {"error": {"code": INTERNAL_ERROR, "message": "the client could not answer"}}
        finally:
            self._asking.release()
        self._reply(message, result)

    def _reply(self, message: dict, outcome: dict) -> None:
        """Our answer to a server's request, written by the answers thread with the server's timeout to
        take it, so the reader never waits on a server that is busy writing (or does not read)."""
        with self._answers_lock:
            if len(self._answers) >= MAX_QUEUED_ANSWERS:
                return self._drop_answer(str(message["method"]), f"{MAX_QUEUED_ANSWERS} answers wait to be written")
            self._answers.append(({"jsonrpc": "2.0", "id": message["id"], **outcome}, str(message["method"]),
                                  time.monotonic() + self.client.cfg.timeout))
            if self._writing:
                return
            self._writing = True
        threading.Thread(target=self._write_answers, name=f"mcp-{self.client.name}-answers", daemon=True).start()

    def _write_answers(self) -> None:
        """The answers thread: write what waits, in order, each by its deadline; it ends when none waits."""
        while True:
            with self._answers_lock:
                if not self._answers or self.client.closed:
                    self._writing = False
                    self._answers.clear()
                    return
                reply, method, deadline = self._answers.popleft()
            try:
                self.client.send_message(reply, deadline)
            except McpError as e:
                self._drop_answer(method, str(e))

    def _drop_answer(self, method: str, why: str) -> None:
        """Count an answer not given; say so at the 1st, 10th, 100th, 1000th and every 10000th."""
        self._dropped_answers += 1  # the count is a report, so a rare lost update between readers is harmless
        if self._dropped_answers in (1, 10, 100, 1000) or self._dropped_answers % 10000 == 0:
            self.said(f"could not answer {method} ({self._dropped_answers} answers dropped so far): {why}", loud=True)

    def _on_notification(self, message: dict) -> bool:
        """Log messages are shown and a changed tool list is read again; other notifications are ignored.
        False for the acknowledgement of our own subscription (no news)."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if message["method"] == "notifications/message":
            data, level = params.get("data"), str(params.get("level", "info"))
            self.said(f"{shorten(level, 20)}: {data if isinstance(data, str) else json.dumps(data)}",
                      loud=level in LOUD_LEVELS)
        elif message["method"] == "notifications/progress":
            self._on_progress(params)
        elif message["method"] == "notifications/elicitation/complete":
            self._completed.append(str(params.get("elicitationId", ""))[:200])
        elif message["method"] == "notifications/subscriptions/acknowledged":
            return not self.client.revisions.acknowledged()  # 2026-07-28: our subscriptions/listen is in place
        elif message["method"] in ("notifications/tools/list_changed", "notifications/resources/list_changed"):
            with self._relist_lock:
                self._stale.add(message["method"].split("/")[1])  # "tools" or "resources"
                if self._relisting:
                    return True  # the re-list thread reads it at its next turn
                self._relisting = True
            # Not on this thread: the reply to the list request arrives through this very thread.
            threading.Thread(target=self._relist, name=f"mcp-{self.client.name}-relist", daemon=True).start()
        return True

    def _relist(self) -> None:
        """The one re-list thread: read the lists announced changed again while changes keep being
        announced, spaced out; the registry is told when the tools or the resources it offers changed."""
        client, interval = self.client, RELIST_INTERVAL_S
        while True:
            with self._relist_lock:
                stale, self._stale = self._stale, set()
            changed = client.relist(stale)
            try:
                if changed and client.on_tools_changed:
                    client.on_tools_changed(client)
            except Exception as e:  # this thread must live on, or no later change would be followed
                client.log(f"could not follow the changed lists ({type(e).__name__}: {e})")
            interval = RELIST_INTERVAL_S if changed else min(interval * 2, RELIST_INTERVAL_CAP_S)
            if self._closed_wait(interval):
                break
            with self._relist_lock:
                if not self._stale:
                    self._relisting = False
                    return
        with self._relist_lock:
            self._relisting = False

    def _closed_wait(self, seconds: float) -> bool:
        """Wait, unless the client is stopped meanwhile (then True, at once)."""
        deadline = time.monotonic() + seconds
        while not self.client.closed and time.monotonic() < deadline:
            time.sleep(min(0.05, seconds))  # a pause between re-lists; stop() is seen within 50 ms
        return self.client.closed

    def _on_progress(self, params: dict) -> None:
        """Progress of one of our calls: show it, and push that call's deadline out (up to its latest)."""
        token = params.get("progressToken")
        call = self.calls.get(token) if type(token) is int else None
        if call is None:
            return
        call.deadline = min(time.monotonic() + call.timeout, call.latest)
        done, total, note = params.get("progress"), params.get("total"), params.get("message")
        text = f"{done:g}" if isinstance(done, (int, float)) else "?"
        text += f"/{total:g}" if isinstance(total, (int, float)) else ""
        call.on_progress(text + (f" {shorten(clean(mask(str(note)), one_line=True), 80)}" if note else ""))

    def refused_since(self, began: float) -> str:
        """The last thing a sandbox refused the server, as it said, since `began` (monotonic); "" if none."""
        return next((hint for when, hint in reversed(list(self._refusals)) if when >= began), "")

    def skipped(self, complaint: str) -> None:
        """A line that is no message: the first is said on stderr, the rest kept for /logs (all with --verbose)."""
        self._skipped_lines += 1
        if self._skipped_lines == 1 or self.echo:
            self.client.log(complaint + ("" if self.echo else " (more such lines go to /logs)"))
        else:
            self.tail.append(clean(mask(complaint), one_line=True))

    def said(self, line: str, loud: bool = False) -> None:
        """A line of the server's own (stderr, or a log notification): kept, and shown when echoing or `loud`,
        within PRINTED_PER_S; past it the first held back line says so, the next one printed how many were.
        What a sandbox refused it is said after it, once, with the grant that allows it."""
        self.tail.append(clean(mask(line), one_line=True))
        hint = clean(mask(refusal(self.client.cfg, line)), one_line=True)
        if hint and hint not in (said for _, said in list(self._refusals)):  # a copy: two threads say
            self.tail.append(hint)
        if hint:
            self._refusals.append((time.monotonic(), hint))
        if not (self.echo or loud):
            return
        now = time.monotonic()
        with self._print_lock:
            self._print_budget = min(PRINTED_PER_S, self._print_budget + (now - self._print_time) * PRINTED_PER_S)
            self._print_time, printed = now, self._print_budget >= 1
            held, self._held = (self._held, 0) if printed else (0, self._held + 1)
            self._print_budget -= 1 if printed else 0
        where = f"/logs {self.client.name} keeps the last {TAIL_LINES}"
        if not printed and self._held == 1:
            self.client.log(f"more than {PRINTED_PER_S:g} lines a second: the rest are held back ({where})")
        if printed and held:
            self.client.log(f"{held} line{'s' if held != 1 else ''} held back ({where})")
        if printed:
            self.client.log(line)
