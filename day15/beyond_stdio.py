"""Beyond the tutorial: the stdio transport of the full client (beyond_client.py).

The tutorial's client (mcp.py) spawns the server with the agent's environment and kill()s it.
Here the server runs in its own process group with a safe environment, every line of stdout goes
to the client's _accept, stderr is drained so the server never blocks on it, the reason it went
away carries its exit code and last stderr line, and stop() ends the whole group: close stdin,
wait, SIGTERM, wait, SIGKILL.
"""
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from beyond_config import ServerConfig, server_command, server_env
from mcp import McpError

# Pipes are read in steps of one pipe's capacity, so a 10 MB reply takes 160 reads, not 1,200.
PIPE_BUFFER_BYTES = 65536
# One encoder for every message: json.dumps(..., ensure_ascii=False) would build a new one per call.
JSON_ENCODER = json.JSONEncoder(ensure_ascii=False)
# How long stop() gives a server at each step (stdin closed, then SIGTERM) before the next one.
STOP_GRACE_S = 1.0


class StdioTransport:
    """A server started as a subprocess; messages are newline-delimited JSON on stdin/stdout."""

    def __init__(self, name: str, config: ServerConfig, deliver: Callable[[bytes], None],
                 closed: Callable[[str], None], log: Callable[[str], None]) -> None:
        self.name, self.config = name, config
        self.deliver, self.closed, self.log = deliver, closed, log  # the client's callbacks
        self.proc: subprocess.Popen | None = None
        self.threads: list[threading.Thread] = []
        self._last_stderr = ""
        self._stopping = False
        # _write_lock keeps one message's bytes together on stdin when several threads send.
        self._write_lock = threading.Lock()

    def start(self) -> None:
        """Spawn the server and start the reader threads; McpError if it cannot be started."""
        command = server_command(self.config)
        try:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=PIPE_BUFFER_BYTES, env=server_env(self.config), cwd=self.config.cwd,
                # A session of its own: its own process group, so stop() reaches the children of
                # launchers such as npx, no controlling terminal, and Ctrl-C stays ours.
                start_new_session=True)
        except OSError as e:
            raise McpError(f"cannot start server: {e.strerror or e} ({command[0]})", self.name) from None
        stderr = threading.Thread(target=self._drain_stderr, name=f"mcp-{self.name}-stderr", daemon=True)
        stdout = threading.Thread(target=self._read_stdout, args=(stderr,),
                                  name=f"mcp-{self.name}-stdout", daemon=True)
        self.threads = [stdout, stderr]
        for thread in self.threads:
            thread.start()

    def send(self, message: dict) -> None:
        data = (JSON_ENCODER.encode(message) + "\n").encode("utf-8")
        try:
            with self._write_lock:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):  # broken pipe, or stdin already closed by stop()
            raise McpError(f"{message.get('method', 'reply')} failed: the server is not reading its input",
                           self.name) from None

    def _read_stdout(self, stderr: threading.Thread) -> None:
        """Reader thread: one JSON message per line; when stdout closes, say why once."""
        try:
            for line in self.proc.stdout:
                if not line.isspace():  # stops at the first other byte, so a 20 MB line is not copied
                    self.deliver(line)
        finally:
            self.closed(self._exit_reason(stderr))

    def _drain_stderr(self) -> None:
        """Stderr thread: an undrained pipe would block the server, so print every line."""
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self._last_stderr = line
                self.log(line)

    def _exit_reason(self, stderr: threading.Thread) -> str:
        """Why stdout closed: the exit code and the server's last stderr line, if any."""
        if self._stopping:
            return "server stopped"
        try:
            code = self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            return "server closed its stdout"
        stderr.join(STOP_GRACE_S)  # let the last stderr line arrive
        last = f": {self._last_stderr}" if self._last_stderr else ""
        return f"server exited (code {code}){last}"

    def stop(self) -> None:
        """Close stdin, then SIGTERM and SIGKILL the group as needed. Idempotent; never raises."""
        proc = self.proc
        if proc is None or self._stopping:
            return
        self._stopping = True
        try:
            proc.stdin.close()
        except OSError:
            pass  # the server already closed its end; the signals below still apply
        if not _wait_group(proc, STOP_GRACE_S):
            _signal_group(proc, signal.SIGTERM)
            if not _wait_group(proc, STOP_GRACE_S):
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                _wait_group(proc, STOP_GRACE_S)
        for thread, pipe in zip(self.threads, (proc.stdout, proc.stderr)):
            if thread is not threading.current_thread():
                thread.join(STOP_GRACE_S)
            if not thread.is_alive():  # a pipe still held by an escaped process stays open
                pipe.close()


def _wait_group(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until the server and every process in its group are gone; False on timeout."""
    deadline = time.monotonic() + timeout
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    while _group_alive(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)  # orphans in the group are not our children, so there is nothing to wait on
    return True


def _group_alive(proc: subprocess.Popen) -> bool:
    """True while a process of the server's group runs (zombies nobody reaps do not count)."""
    if os.path.isdir("/proc"):
        return any(_running_in_group(entry.path, proc.pid) for entry in os.scandir("/proc")
                   if entry.name.isdigit())
    if not hasattr(os, "killpg"):
        return False
    try:
        os.killpg(proc.pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _running_in_group(proc_dir: str, pgid: int) -> bool:
    try:
        with open(f"{proc_dir}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after "pid (comm)": state ppid pgrp ...
    except (OSError, IndexError):
        return False  # the process ended while we looked
    return int(fields[2]) == pgid and fields[0] != b"Z"


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass  # already gone
