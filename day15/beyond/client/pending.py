"""Beyond the tutorial: the requests of one server awaiting their replies (the twin's ids and reply queues,
mcp.py), and why none can come while the server is dead.

The reader thread settles a reply into its waiter, a queue.SimpleQueue the caller waits on (requests.py). A
reply to an id nobody waits for any more finds nothing, so a late reply is the reader's to report, never a crash.
"""
import queue
import threading

from beyond.client.errors import ServerError


class Pending:
    """Ids, the waiter of each request in flight, and the reason the server cannot answer now."""

    def __init__(self, name: str) -> None:
        self.name = name
        # _lock guards _next_id, _waiting and dead, shared by callers, the reader thread and the link; held
        # only for those updates, never across a write or a wait. dead is read without it: one reference.
        self._lock = threading.Lock()
        self._next_id = 1
        self._waiting: dict[int, queue.SimpleQueue] = {}
        self.dead: str | None = None

    def add(self, method: str, waiter: queue.SimpleQueue) -> int:
        """A new request's id, its waiter kept; McpError at once when the server is dead."""
        with self._lock:
            if self.dead:
                raise ServerError(f"{method} failed: {self.dead}", self.name)
            request_id, self._next_id = self._next_id, self._next_id + 1
            self._waiting[request_id] = waiter
        return request_id

    def new_id(self) -> int:
        """An id for a request no one waits on (a subscription whose answer stays open)."""
        with self._lock:
            request_id, self._next_id = self._next_id, self._next_id + 1
        return request_id

    def drop(self, request_id: int) -> None:
        """No one waits for this request any more: a reply that comes later finds nothing."""
        with self._lock:
            self._waiting.pop(request_id, None)

    def settle(self, request_id: int, outcome: object) -> bool:
        """The waiter of this request gets its outcome; False when none waits (unknown, or given up on)."""
        with self._lock:
            waiter = self._waiting.pop(request_id, None)
        if waiter is not None:
            waiter.put(outcome)
        return waiter is not None

    def fail_all(self, reason: str) -> None:
        """The server cannot answer: keep why (the first reason) and fail every waiter with it."""
        with self._lock:
            self.dead = self.dead or reason
            waiting, self._waiting = list(self._waiting.values()), {}
        for waiter in waiting:
            waiter.put(ServerError(reason, self.name))

    def revive(self) -> None:
        """Forget the last death: the server is being started again."""
        with self._lock:
            self.dead = None
