"""Beyond the tutorial: deadlines and waits, the bottom every part may use (it imports none of ours).

A deadline is one type everywhere: an instant of time.monotonic(), in seconds. Waits in the
caller's thread wake up often enough to notice Ctrl-C and SIGTERM.
"""
import queue
import threading
import time
from collections.abc import Callable

# Waits in the caller's thread wake up at least this often, so a Ctrl-C or SIGTERM that landed on
# another thread is still acted on (only a wait that returns to Python lets the handler run).
SIGNAL_CHECK_S = 0.1


class Call:
    """One request in flight: its deadline (which progress may push out, up to `latest`), the timeout
    it was given, and where its progress goes."""

    __slots__ = ("deadline", "timeout", "latest", "on_progress")

    def __init__(self, timeout: float, on_progress: Callable[[str], None] | None = None, cap: int = 1) -> None:
        self.deadline, self.timeout = time.monotonic() + timeout, timeout
        self.latest, self.on_progress = self.deadline + (cap - 1) * timeout, on_progress


def wait_for(waiter: queue.SimpleQueue, call: Call) -> object:
    """waiter.get() until call.deadline (queue.Empty then), which progress may push out meanwhile,
    in steps short enough to notice signals."""
    while True:
        try:
            return waiter.get(timeout=max(0.0, min(SIGNAL_CHECK_S, call.deadline - time.monotonic())))
        except queue.Empty:
            if time.monotonic() >= call.deadline:
                raise


def run_all(jobs: list[tuple[str, Callable[[], None]]]) -> None:
    """Run each (name, job) on a thread of its own and wait until all are done, in steps short enough
    that the main thread notices Ctrl-C and SIGTERM.

    Not Thread.join(): on Python 3.11 a join that a signal handler's exception interrupts marks the
    running thread as stopped, and the interpreter then exits without waiting for it, so a server
    that thread was stopping would be left running. A semaphore has no such side effect.
    """
    done = threading.Semaphore(0)

    def run(job: Callable[[], None]) -> None:
        try:
            job()
        finally:
            done.release()
    for name, job in jobs:
        threading.Thread(target=run, args=(job,), name=name).start()
    for _ in jobs:
        while not done.acquire(timeout=SIGNAL_CHECK_S):
            pass
