"""Beyond the tutorial: the stdio transport of the full client (client/session.py).

The tutorial's client (mcp.py) spawns the server with the agent's environment and kill()s it.
Here the server runs in its own process group without the terminal, with a safe environment;
writes never block past the request's deadline; a line over the size limit is discarded as it
streams; stderr is drained so the server never blocks on it; the reason a server went away
carries its exit code and last stderr line; and stop() ends the whole group without waiting on a
pipe: close stdin, wait, SIGTERM, wait, SIGKILL.
"""
import collections
import operator
import os
import re
import select
import signal
import subprocess
import threading
import time

from beyond import secrets
from beyond.dirs import UnsetVariable
from beyond.waits import SIGNAL_CHECK_S
from beyond.wire import sandbox
from beyond.wire.base import MAX_MESSAGE_BYTES, About, Inbox, Transport, TransportError, encode
from beyond.wire.process import not_started, server_apart, server_command, server_env, signal_group, wait_group

# Pipes are read in steps of one pipe's capacity, so a 10 MB reply takes 160 reads, not 1,200.
PIPE_BUFFER_BYTES = 65536
# A stderr line is kept and shown up to this size: enough for any log line, not for a flood.
MAX_STDERR_LINE_BYTES = 8192
# How much of a discarded line is kept, to find the id of the request it answered.
HEAD_BYTES = 4096
# What an "id" looks like near the start of a reply, to fail the request a discarded line answered.
REPLY_ID = re.compile(rb'"id"\s*:\s*(\d{1,18})\s*[,}]')
# Every message ends with it, and none holds it elsewhere (JSON escapes it).
NEWLINE = ord("\n")
# stop(): after stdin is closed, the server gets this long to exit; after SIGTERM, this long;
# together with SIGKILL the agent is gone in about 2 s whatever the server does.
CLOSE_GRACE_S = 0.5
TERM_GRACE_S = 1.0
KILL_WAIT_S = 0.5
# A server that has exited while a child of its holds stdout open has ended all the same: after its
# exit, what it wrote is read for this long before the session ends.
EXIT_DRAIN_S = 0.5


def _hand_over(pipe: tuple[int, int], data: bytes) -> None:
    """Write a sandboxed server's environment to its launcher, which reads it before anything else, and
    close the pipe; a launcher that is gone already has said why on stderr."""
    os.close(pipe[0])
    try:
        with open(pipe[1], "wb") as f:
            f.write(data)
    except BrokenPipeError:
        pass  # the launcher ended first: its exit is reported like any server's


class StdioTransport(Transport):
    """A server started as a subprocess; messages are newline-delimited JSON on stdin/stdout."""

    def __init__(self, name: str, config, inbox: Inbox) -> None:
        super().__init__(name, config, inbox)
        self.proc: subprocess.Popen | None = None
        self._stderr_thread: threading.Thread | None = None
        self._last_stderr = ""
        # Set once the session has ended (the reason is in _end_reason): by the stdout thread at the end
        # of stdout, or by the exit thread when the server exited and a child holds stdout open.
        # _end_lock makes the first of the two the one that says so.
        self._ended = threading.Event()
        self._end_reason = ""
        self._end_lock = threading.Lock()
        # _proc_lock guards proc and _stopping, so a stop() that lands while start() spawns
        # still stops what start() spawned. Held across Popen only (fork and exec, no wait).
        self._proc_lock = threading.Lock()
        self._stopping = False
        # _write_lock is held by the one thread writing on stdin, which writes what others put in _queued
        # (message bytes, deadline, request id, what it is) meanwhile; nobody waits for it.
        self._write_lock = threading.Lock()
        self._queued: collections.deque[tuple] = collections.deque()
        self._private: str | None = None  # a sandboxed server's temporary folder, removed at stop()

    def start(self) -> None:
        """Spawn the server and start the reader threads; TransportError if it cannot be started."""
        pipe, handed = None, b""  # a sandboxed server's environment, handed to its launcher on a pipe
        try:
            command, env = server_command(self.config), server_env(self.config)
            secrets.learn_entry({"args": self.config.args, "env": self.config.env},  # masked from now on
                                {"args": command[1:], "env": {key: env[key] for key in self.config.env}})
            if self.config.sandbox:  # confined before it runs (sandbox.py, confine.py), or not started
                launcher, env, handed, self._private = sandbox.wrapped(self.config, command, env)
                pipe = os.pipe()
                command = launcher + [str(pipe[0]), "--"] + command
        except (UnsetVariable, sandbox.NotFound) as e:
            raise TransportError(str(e)) from None
        except sandbox.Refused as e:
            raise TransportError(f"sandbox: {e}; \"sandbox\": false in its entry runs it unconfined") from None
        except OSError as e:  # a folder to write that cannot be made, a folder that changed while walked
            raise TransportError(f"sandbox: {e}") from None
        with self._proc_lock:
            if self._stopping:
                raise TransportError("server stopped")
            try:
                self.proc = subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    bufsize=PIPE_BUFFER_BYTES, env=env, cwd=self.config.cwd, pass_fds=pipe[:1] if pipe else (),
                    **server_apart())
            except (OSError, ValueError) as e:  # ValueError: a NUL byte in the command or env
                if self._private:
                    sandbox.remove(self._private)
                raise TransportError(not_started(e, command[0], self.config.cwd)) from None
            finally:
                if pipe:
                    _hand_over(pipe, handed if self.proc else b"")
        os.set_blocking(self.proc.stdin.fileno(), False)  # writes wait in select(), up to a deadline
        # stderr first: the stdout thread joins it to report the server's last words.
        self._stderr_thread = threading.Thread(target=self._drain_stderr, name=f"mcp-{self.name}-stderr",
                                               daemon=True)
        self._stderr_thread.start()
        threading.Thread(target=self._read_stdout, name=f"mcp-{self.name}-stdout", daemon=True).start()
        threading.Thread(target=self._watch_exit, name=f"mcp-{self.name}-exit", daemon=True).start()

    def send(self, message: dict, deadline: float, about: About) -> None:
        """Write one message by `deadline` (Transport.send; a pipe has no headers, so `about` says nothing
        here); TransportError if the server does not take it."""
        what = message.get("method", "reply")
        if self.proc is None:
            raise TransportError(f"{what} failed: the server is not started")
        try:
            data = encode(message, "\n")
        except ValueError as e:  # NaN, Infinity, or a lone surrogate: refused rather than sent
            raise TransportError(f"{what} not sent: {e}") from None
        # Whoever holds the pipe writes what the others queued meanwhile, in one write where it can, so a
        # sender never waits for another's write: it queues its message and goes on to wait for the reply.
        mine = (data, deadline, message.get("id") if "method" in message else None, what)
        self._queued.append(mine)
        failed = None
        while self._queued and self._write_lock.acquire(False):  # else its holder writes ours before it lets go
            try:
                batch = [self._queued.popleft()]  # ours alone, unless others came meanwhile
                while self._queued:
                    batch.append(self._queued.popleft())
                data = batch[0][0] if len(batch) == 1 else b"".join(map(operator.itemgetter(0), batch))
                try:  # most batches go in one write, without waiting
                    sent = os.write(self.proc.stdin.fileno(), data)
                except (OSError, ValueError):
                    sent = 0  # _write_rest says why
                if sent < len(data):
                    failed = self._write_rest(batch, data, sent, mine) or failed
            finally:
                self._write_lock.release()
        if failed:
            raise TransportError(failed)

    def _write_rest(self, batch: list[tuple], data: bytes, sent: int, mine: tuple) -> str | None:
        """The rest of a batch of queued messages, by the latest of their deadlines (a deadline already past:
        no wait). Caller holds _write_lock. Returns why `mine` was not written, if it was not; another
        sender's request that was not is failed through the inbox, its notification logged."""
        sent, reason = self._write_all(data, sent, max(entry[1] for entry in batch))
        failed, end = None, 0
        for entry in batch:
            end += len(entry[0])
            if end <= sent:
                continue
            if entry is mine:
                failed = f"{entry[3]} failed: {reason}"
            elif entry[2] is not None:
                self.inbox.rejected(entry[2], reason)
            else:
                self.inbox.log(f"{entry[3]} not written: {reason}")
        return failed

    def _write_all(self, data: bytes, sent: int, deadline: float) -> tuple[int, str | None]:
        """The rest of `data`, from byte `sent`: (the bytes written, why it stopped short, or None). A message
        cut short ends the session: the next would be garbled."""
        view, reason = memoryview(data)[sent:], None
        try:
            while view:
                try:
                    view = view[os.write(self.proc.stdin.fileno(), view):]
                    continue
                except BlockingIOError:
                    left = deadline - time.monotonic()
                except BrokenPipeError:  # the server closed its input, most likely by exiting: say why
                    self._ended.wait(2 * CLOSE_GRACE_S)
                    reason = self._end_reason or "the server closed its input"
                    break
                except (OSError, ValueError):  # stdin closed by stop()
                    left = -1.0
                if left <= 0:
                    reason = "the server is not reading its input"
                    break
                # Short steps: a Ctrl-C or SIGTERM that landed on another thread is still seen.
                select.select([], [self.proc.stdin.fileno()], [], min(left, SIGNAL_CHECK_S))
        finally:
            written = len(data) - len(view)
            if view and written and data[written - 1] != NEWLINE:  # given up (deadline, Ctrl-C) inside a message
                self.inbox.ended("the server stopped reading its input in the middle of a message")
        return written, reason

    def _read_stdout(self) -> None:
        """Reader thread: one JSON message per line, none over MAX_MESSAGE_BYTES; at the end, say why."""
        stdout = self.proc.stdout
        try:
            while line := stdout.readline(MAX_MESSAGE_BYTES + 1):
                if len(line) > MAX_MESSAGE_BYTES:
                    self._discard(stdout, line)
                elif not line.isspace():  # stops at the first other byte, so a 20 MB line is not copied
                    self.inbox.deliver(line)
        except (OSError, ValueError):
            pass  # stdout closed under us by stop(); the reason below says so
        finally:
            self._end(self._exit_reason())
            stdout.close()  # this thread's own pipe: its descriptor goes with it, restart after restart

    def _watch_exit(self) -> None:
        """Exit thread: the server's end is its exit, even while a child of its holds stdout open."""
        self.proc.wait()  # also reaps it; stop()'s timed waits see the exit status this leaves
        if not self._ended.wait(EXIT_DRAIN_S):  # what it wrote before exiting is read first
            self._end(self._exit_reason())

    def _end(self, reason: str) -> None:
        """Say once why the session ended (the first of the two threads to know)."""
        with self._end_lock:
            if self._ended.is_set():
                return
            self._end_reason = reason
            self._ended.set()
        self.inbox.ended(reason)

    def _discard(self, stdout, line: bytes) -> None:
        """Fail the request an oversized line answers, then read the rest of it in small steps, keeping nothing."""
        found = REPLY_ID.search(line[:HEAD_BYTES])
        if found:
            self.inbox.rejected(int(found.group(1)), f"the reply is over the {_mb(MAX_MESSAGE_BYTES)} limit "
                                                    "of one message and was discarded")
        self.inbox.log(f"discarding a message over {_mb(MAX_MESSAGE_BYTES)}"
                       + ("" if found else " (no request id in it)"))
        while line and not line.endswith(b"\n"):
            line = stdout.readline(PIPE_BUFFER_BYTES)

    def _drain_stderr(self) -> None:
        """Stderr thread: an undrained pipe would block the server, so read every line; show 8 KB of each."""
        stderr = self.proc.stderr
        try:
            while raw := stderr.readline(MAX_STDERR_LINE_BYTES):
                cut = not raw.endswith(b"\n") and len(raw) >= MAX_STDERR_LINE_BYTES
                rest = raw
                while cut and rest and not rest.endswith(b"\n"):
                    rest = stderr.readline(PIPE_BUFFER_BYTES)
                line = raw.decode("utf-8", "replace").rstrip() + (" ... (cut at 8 KB)" if cut else "")
                if line:
                    self._last_stderr = line
                    self.inbox.said(line)
        except (OSError, ValueError):
            pass  # stderr closed under us by stop(): nothing more to read
        finally:
            stderr.close()

    def _exit_reason(self) -> str:
        """Why stdout closed: the exit code and the server's last stderr line, if any."""
        if self._stopping:
            return "server stopped"
        try:
            code = self.proc.wait(CLOSE_GRACE_S)
        except subprocess.TimeoutExpired:
            return "server closed its stdout"
        self._stderr_thread.join(CLOSE_GRACE_S)  # let the last stderr line arrive
        last = f": {self._last_stderr}" if self._last_stderr else ""
        return f"server exited (code {code}){last}"

    def stop(self) -> None:
        """Close stdin, then SIGTERM and SIGKILL the group as needed. Idempotent; never raises, never blocks
        on a pipe."""
        with self._proc_lock:
            if self._stopping:
                return
            self._stopping = True
            proc = self.proc
        if proc is None:
            return  # nothing spawned, and start() will not spawn any more
        closed = self._close_stdin(proc)  # the polite way first, unless a writer is stuck on it
        if not (closed and wait_group(proc, CLOSE_GRACE_S)):
            signal_group(proc, signal.SIGTERM)
            if not wait_group(proc, TERM_GRACE_S):
                signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                wait_group(proc, KILL_WAIT_S)
        self._close_stdin(proc)
        if self._private:
            sandbox.remove(self._private)

    def _close_stdin(self, proc: subprocess.Popen) -> bool:
        """Close stdin unless a sender holds it (it then fails by its deadline, or at once when the server dies)."""
        if not self._write_lock.acquire(blocking=False):
            return False
        try:
            proc.stdin.close()  # nothing is ever buffered in it (we write the raw descriptor), so no flush waits
        except OSError:
            pass  # the server closed its end first; the signals still apply
        finally:
            self._write_lock.release()
        return True


def _mb(size: int) -> str:
    return f"{size / (1 << 20):g} MB"


