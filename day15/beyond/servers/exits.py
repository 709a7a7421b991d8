"""Beyond the tutorial: the agent leaves cleanly, however it is ended.

The tutorial stops its servers on /exit and Ctrl-C. Here SIGTERM and a closed terminal (SIGHUP)
leave through the same way out, so no server is left running. And on Linux, what escaped a
server's process group is stopped too: StdioTransport.stop() ends a server's whole group, but a
descendant that left it (setsid, as daemons do) is out of its reach; the full agent makes itself
a child subreaper, so such a descendant is re-parented to the agent instead of to init, and stops
it when it leaves.
"""
import contextlib
import os
import signal
import sys
import time

from beyond.wire.stdio import KILL_WAIT_S, TERM_GRACE_S


def stop_on_signals() -> None:
    """SIGTERM or a closed terminal leaves through main()'s finally, so servers are stopped."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _leave)


def _leave(signum: int, frame) -> None:
    """Exit through main()'s finally; a second signal must not cut the stopping of the servers short."""
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    sys.exit(128 + signum)


PR_SET_CHILD_SUBREAPER = 36


class Orphans:
    """The descendants of servers that left their process groups, re-parented to the agent (Linux)."""

    def __init__(self) -> None:
        self.subreaper = False  # whether the agent is a child subreaper

    def adopt(self) -> bool:
        """Become a child subreaper (Linux only); False where that is not possible."""
        if sys.platform.startswith("linux") and not self.subreaper:
            try:
                import ctypes
                self.subreaper = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                pass  # no prctl: escaped descendants go to init, as they would without this
        return self.subreaper

    def stop(self) -> None:
        """Stop what was re-parented to us (SIGTERM, then SIGKILL) and reap those pids only: never
        waitpid(-1), which would take the exit statuses subprocess.Popen waits for. Call it after every
        server is stopped, so the children left are orphans."""
        deadline, sig = time.monotonic() + TERM_GRACE_S, signal.SIGTERM
        while self.subreaper and (orphans := _children_of(os.getpid())):
            for pid in orphans:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            if time.monotonic() > deadline:
                if sig == signal.SIGKILL:
                    return  # what survives SIGKILL this long is beyond us
                deadline, sig = time.monotonic() + KILL_WAIT_S, signal.SIGKILL
            time.sleep(0.01)  # orphans are waited for by polling: waitpid(-1) is not ours to call


def _children_of(parent: int) -> list[int]:
    """The processes (zombies too) whose parent is `parent`, from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == parent:
                        found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue  # it ended while we looked
    return found
