"""Beyond the tutorial: deadlines and waits, the bottom every part may use (it imports none of ours).

A deadline is one type everywhere: an instant of time.monotonic(), in seconds. Waits in the
caller's thread wake up often enough to notice Ctrl-C and SIGTERM.
"""
import threading
import time
from dataclasses import dataclass
from collections.abc import Callable

# Waits in the caller's thread wake up at least this often, so a Ctrl-C or SIGTERM that landed on
# another thread is still acted on (only a wait that returns to Python lets the handler run).
SIGNAL_CHECK_S = 0.1


@dataclass(slots=True)
class Call:
    """One request in flight: its deadline (which progress may push out, up to `latest`), the timeout it
    was given, and where its progress goes. Call.within(timeout) makes one."""
    deadline: float
    timeout: float
    latest: float
    on_progress: Callable[[str], None] | None = None

    @classmethod
    def within(cls, timeout: float, on_progress: Callable[[str], None] | None = None, cap: int = 1) -> "Call":
        """A call due `timeout` seconds from now, which progress may push out to `cap` timeouts in all."""
        now = time.monotonic()
        return cls(now + timeout, timeout, now + cap * timeout, on_progress)


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
