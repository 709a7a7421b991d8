"""Beyond the tutorial: what a server sends on its own, which the tutorial's client ignores.

The FromServer part of the full client (beyond_client.McpClient): the server's requests are
answered (ping, and -32601 for the rest) with one try and at most ANSWERS_PER_S a second, so a
server that stops reading never blocks the reader and one that floods costs little; log notifications and stderr lines are kept (and printed with --verbose); progress is
shown and pushes its call's deadline out; a changed tool list is read again by one thread, spaced
out. It uses the client's lock, send, log, tool list and revision; it has no state the client does not set.
"""
import json
import threading
import time

from beyond_text import clean, shorten
from mcp import McpError
from beyond_base import METHOD_NOT_FOUND
from permissions import mask_secrets

# A server that announces tool-list changes over and over is re-listed at most once per this
# interval, doubled each time the list came back unchanged (up to the cap): a server that repeats
# itself forever then costs a tools/list every few minutes.
RELIST_INTERVAL_S = 1.0
RELIST_INTERVAL_CAP_S = 300.0
# A server's requests are answered at most this many a second, in bursts of as many; the rest are
# dropped and counted, so a server that floods requests (each answer over HTTP is a POST) costs the
# client little more than reading them.
ANSWERS_PER_S = 20.0
# Print the server's words as they come, with the [mcp:name] prefix (index.py --verbose), as the
# tutorial does; otherwise they are kept, not shouted.
ECHO_SERVER_OUTPUT = False


class FromServer:
    """Mixed into beyond_client.McpClient: the handlers of what the server sends unasked."""

    def _answer_server_request(self, message: dict) -> None:
        """ping gets {}; any other method gets -32601, so a server never waits on us (within ANSWERS_PER_S)."""
        method = shorten(str(message["method"]), 100)
        if self.modern:
            return self._drop_answer(method, "in MCP 2026-07-28 a server sends no requests")
        now = time.monotonic()
        self._answer_budget = min(ANSWERS_PER_S, self._answer_budget + (now - self._answer_time) * ANSWERS_PER_S)
        self._answer_time = now
        if self._answer_budget < 1:
            return self._drop_answer(method, f"over {ANSWERS_PER_S:g} requests a second")
        self._answer_budget -= 1
        if method == "ping":
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"],
                     "error": {"code": METHOD_NOT_FOUND, "message": f"method not found: {method}"}}
        try:
            self._send(reply, time.monotonic())  # one try: the reader never waits on a server that does not read
        except McpError as e:
            self._drop_answer(method, str(e))

    def _drop_answer(self, method: str, why: str) -> None:
        """Count an answer not given; say so at the 1st, 10th, 100th, 1000th and every 10000th."""
        self._dropped_answers += 1  # the count is a report, so a rare lost update between readers is harmless
        if self._dropped_answers in (1, 10, 100, 1000) or self._dropped_answers % 10000 == 0:
            self.log(f"could not answer {method} ({self._dropped_answers} answers dropped so far): {why}")

    def _on_notification(self, message: dict) -> None:
        """Log messages are shown and a changed tool list is read again; other notifications are ignored."""
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if message["method"] == "notifications/message":
            data = params.get("data")
            self.said(f"{params.get('level', 'info')}: {data if isinstance(data, str) else json.dumps(data)}")
        elif message["method"] == "notifications/progress":
            self._on_progress(params)
        elif message["method"] == "notifications/subscriptions/acknowledged" and self._subscribed:
            self._subscribed.set()  # 2026-07-28: our subscriptions/listen is in place
        elif message["method"] == "notifications/tools/list_changed":
            with self._relist_lock:
                if self._relisting:
                    self._relist_again = True  # one queued, however many arrive meanwhile
                    return
                self._relisting = True
            # Not on this thread: the reply to tools/list arrives through this very thread.
            threading.Thread(target=self._relist, name=f"mcp-{self.name}-relist", daemon=True).start()

    def _relist(self) -> None:
        """The one re-list thread: read the tools again while changes keep being announced, spaced out."""
        interval = RELIST_INTERVAL_S
        while True:
            before = self.tools
            try:
                self.tools = self.list_tools()
            except McpError as e:
                self.log(f"could not read the changed tool list: {e}")
            else:
                if self.tools != before and self.on_tools_changed:
                    self.on_tools_changed(self)
            interval = RELIST_INTERVAL_S if self.tools != before else min(interval * 2, RELIST_INTERVAL_CAP_S)
            if self._closed_wait(interval):
                break
            with self._relist_lock:
                if not self._relist_again:
                    self._relisting = False
                    return
                self._relist_again = False
        with self._relist_lock:
            self._relisting = False

    def _closed_wait(self, seconds: float) -> bool:
        """Wait, unless the client is stopped meanwhile (then True, at once)."""
        deadline = time.monotonic() + seconds
        while not self._closed and time.monotonic() < deadline:
            time.sleep(min(0.05, seconds))  # a pause between re-lists; stop() is seen within 50 ms
        return self._closed

    def _on_progress(self, params: dict) -> None:
        """Progress of one of our calls: show it, and push that call's deadline out (up to its cap)."""
        token = params.get("progressToken")
        found = self._progress.get(token) if type(token) is int else None
        if found:
            found[1][0] = min(time.monotonic() + self.cfg.timeout, found[2])
        if found:
            done, total, note = params.get("progress"), params.get("total"), params.get("message")
            text = f"{done:g}" if isinstance(done, (int, float)) else "?"
            text += f"/{total:g}" if isinstance(total, (int, float)) else ""
            found[0](text + (f" {shorten(clean(str(note), one_line=True), 80)}" if note else ""))

    def said(self, line: str) -> None:
        """A line of the server's own (stderr, or a log notification): kept, and shown with --verbose."""
        self.tail.append(clean(mask_secrets(line), one_line=True))
        if ECHO_SERVER_OUTPUT:
            self.log(line)
