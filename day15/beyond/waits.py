"""Beyond the tutorial: deadlines and waits, the bottom every part may use (it imports none of ours).

A deadline is one type everywhere: an instant of time.monotonic(), in seconds. Waits in the
caller's thread wake up often enough to notice Ctrl-C and SIGTERM, and those of a thread that runs
calls for the main one (Cancel) notice when the main thread's Ctrl-C cancelled them.
"""
import contextlib
import contextvars
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


class Cancel:
    """Ctrl-C for calls that run on threads of their own (the calls of one model reply, model/reply_calls.py):
    a Ctrl-C reaches only the main thread, which then set()s this. Each such thread runs its job through
    run(); a call's waits there (for its reply, between a task's polls) ask cancelled() as they wake and end
    as a Ctrl-C would end them (KeyboardInterrupt), and an HTTP answer it reads is cut at once (cut_on_cancel)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards is_set and _cuts: set() and the threads' reads share them
        self.is_set = False
        self._cuts: set[Callable[[], None]] = set()

    def set(self) -> None:
        with self._lock:
            self.is_set, cuts = True, list(self._cuts)
        for cut in cuts:
            cut()

    def run(self, job: Callable[[], object]) -> object:
        """job() on this thread, its waits cancelled by set() (this thread's own context holds the Cancel)."""
        _cancel.set(self)
        return job()

    @contextlib.contextmanager
    def cutting(self, cut: Callable[[], None]):
        """While inside, set() calls cut() (at once, if it was set already)."""
        with self._lock:
            if not self.is_set:
                self._cuts.add(cut)
        if self.is_set:
            cut()
        try:
            yield
        finally:
            with self._lock:
                self._cuts.discard(cut)


# The Cancel of the job this thread runs (Cancel.run), if any: each thread has a context of its own.
_cancel: contextvars.ContextVar[Cancel | None] = contextvars.ContextVar("cancel", default=None)


def cancelled() -> bool:
    """Whether the calls this thread runs were cancelled (Cancel.set): then its waits end as at a Ctrl-C."""
    cancel = _cancel.get()
    return cancel is not None and cancel.is_set


def cut_on_cancel(cut: Callable[[], None]) -> contextlib.AbstractContextManager:
    """While inside, cut() (of a connection this thread reads) is called at once when its calls are cancelled."""
    cancel = _cancel.get()
    return contextlib.nullcontext() if cancel is None else cancel.cutting(cut)
