"""Beyond the tutorial: how a server process is started and stopped, for the stdio transport (stdio.py).

The tutorial's client spawns its server with the agent's whole environment and kill()s it. Here a
server gets a safe part of the environment plus its entry's `env` (`${VAR}` expanded), runs in a
process group of its own without the agent's terminal, and is stopped with its whole group.
"""
import os
import subprocess
import sys
import time

try:
    import fcntl
    import termios
except ImportError:  # Windows
    fcntl = termios = None

from beyond.dirs import expand

# A server inherits only these variables (the official SDKs' list) plus its config `env`, so
# secrets such as OPENAI_API_KEY never reach third-party code unasked.
SAFE_ENV_POSIX = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
# And the network's settings, on every platform: behind a company's CA or proxy, `uvx` and `npx`
# (and the servers they start) reach their registries only with these (a proxy's password is masked
# wherever text goes; a sandboxed server without network gets none of them, sandbox.py).
NETWORK_ENV = tuple(name for names in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                                       "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")
                    for name in (names, names.lower()))
SAFE_ENV_WINDOWS = ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
                    "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME",
                    "USERPROFILE", "PROGRAMFILES")


def server_command(config) -> list[str]:
    """command and args with variables expanded."""
    return [expand(part, "command/args") for part in [config.command, *config.args]]


def server_env(config) -> dict[str, str]:
    """The safe part of the agent's environment plus the config's env (expanded)."""
    names = SAFE_ENV_WINDOWS if sys.platform == "win32" else SAFE_ENV_POSIX
    env = {name: os.environ[name] for name in names + NETWORK_ENV if name in os.environ}
    env.update({key: expand(value, f"env.{key}") for key, value in config.env.items()})
    return env


def server_apart() -> dict:
    """How a server is kept apart from the agent's terminal: a process group of its own (stop() reaches
    the children of launchers such as npx, and Ctrl-C stays ours) and no controlling terminal (it
    cannot open /dev/tty to prompt or read keys). A session of its own gives both, but Linux schedules
    each session as a group of its own (autogroup), which halves a busy server's share of a CPU
    against the agent's threads; so on Linux the server stays in the agent's session and gives up
    the terminal before it runs (TIOCNOTTY), when the agent has one."""
    if not sys.platform.startswith("linux") or sys.version_info < (3, 11):  # process_group is 3.11's
        return {"start_new_session": True}
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:  # no controlling terminal: nothing to give up, and the spawn stays a fast vfork
        return {"process_group": 0}
    return {"process_group": 0, "preexec_fn": _give_up_terminal}


def _give_up_terminal() -> None:
    """In the child, before exec: leave the controlling terminal (a process that leads no session
    only drops it for itself). C calls only, on modules imported beforehand. If the terminal cannot
    be left, the error ends the spawn: that server fails to start rather than run with it."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return  # no terminal to leave
    try:
        fcntl.ioctl(fd, termios.TIOCNOTTY)
    finally:
        os.close(fd)


def not_started(error: Exception, program: str, cwd: str | None) -> str:
    """Why a server could not be spawned, blaming what is wrong: a missing cwd is not a missing program."""
    if cwd and not os.path.isdir(cwd):
        return f"cannot start server: its \"cwd\" {cwd!r} is not a folder; fix \"cwd\" in .geekagent/mcp.json"
    if isinstance(error, FileNotFoundError) and os.sep not in program:  # looked up on PATH, and not there
        return f"cannot start server: {program} is not found on PATH (is it installed?)"
    return f"cannot start server: {getattr(error, 'strerror', None) or error} ({program})"


def wait_group(proc: subprocess.Popen, timeout: float) -> bool:
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


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
    except (ProcessLookupError, PermissionError):
        pass  # already gone
