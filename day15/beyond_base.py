"""Beyond the tutorial: what the full client's parts share, in one small module they import downward.

The limits every transport holds a message to, the helpers that wait in steps short enough to notice
Ctrl-C and SIGTERM, the JSON-RPC code more than one part answers or checks, and the user's own folders
(XDG), where answers, pins and history live. Nothing here knows of servers, sessions or the REPL.
"""
import os
import queue
import threading
import time
from collections.abc import Callable

# Waits in the caller's thread wake up at least this often, so a Ctrl-C or SIGTERM that landed on
# another thread is still acted on (only a wait that returns to Python lets the handler run).
SIGNAL_CHECK_S = 0.1
# One JSON-RPC message may be this big (a 20 MB tool result is fine); a longer line or event is
# discarded as it streams, so a hostile server costs at most this much memory, once.
MAX_MESSAGE_BYTES = 64 << 20
# JSON-RPC's "method not found": what we answer a request we do not serve (and what a server
# without tools may answer tools/list with).
METHOD_NOT_FOUND = -32601


def wait_for(waiter: queue.SimpleQueue, deadline: list[float]) -> object:
    """waiter.get() until deadline[0] (queue.Empty then), which may move meanwhile, in steps short
    enough to notice signals."""
    while True:
        try:
            return waiter.get(timeout=max(0.0, min(SIGNAL_CHECK_S, deadline[0] - time.monotonic())))
        except queue.Empty:
            if time.monotonic() >= deadline[0]:
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


def config_dir() -> str:
    """$XDG_CONFIG_HOME/geekagent (default ~/.config/geekagent): what the user decided."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent")


def state_dir() -> str:
    """$XDG_STATE_HOME/geekagent (default ~/.local/state/geekagent): what the agent keeps for itself."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "geekagent")
