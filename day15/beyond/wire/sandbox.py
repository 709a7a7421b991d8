"""Beyond the tutorial: a stdio server confined ("sandbox", --sandbox): what it may reach (wire/grants.py) shown
in the trust question and /mcp, and enforced by the launcher (wire/confine.py) before the server runs.

Without "network": true it gets no socket at all. Where that cannot be enforced the server does not start
(Refused says why); a server that fails to start is told what the sandbox most likely refused it. The
agent itself is made not dumpable. GEEKAGENT_LANDLOCK_ABI=N in the agent's environment makes it act as if
the kernel offered ABI N, for tests.
"""
import ctypes
import json
import os
import platform
import re
import sys
import tempfile

from beyond.dirs import UnsetVariable
from beyond.wire.confine import CREATE_RULESET, NET_ABI, SYSCALLS
from beyond.wire.grants import LAUNCHER_CACHES, SYSTEM, NotFound, Refused, allowed, cache_env, grants, shown
from beyond.wire.process import NETWORK_ENV, server_command, server_env

__all__ = ["NotFound", "Refused", "abi", "insist", "what_it_may", "wrapped", "refused_in", "keep_to_itself"]

CREATE_RULESET_VERSION = 1
# The devices it may open; not /dev/tty or /dev/pts (the user's terminal), not /dev/shm.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# What a refused path or a refused network looks like in what a server says on stderr (Python, Node, uv, git).
DENIED = re.compile(r"(?:permission denied|EACCES|os error 13)\W*?[^/]{0,40}?['`\"]?(/[^'`\"\s:,)]+)"
                    r"|['`\"](/[^'`\"]+)['`\"][^/]{0,40}?(?:permission denied|EACCES|os error 13)", re.IGNORECASE)
WRITING = re.compile(r"creat|writ|mkdir|rename|unlink|remove|EROFS", re.IGNORECASE)
OFFLINE = re.compile(r"name resolution|getaddrinfo|EAI_AGAIN|ENOTFOUND|socket|network|fetch|connect", re.IGNORECASE)
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confine.py")


def abi() -> int:
    """The Landlock ABI this kernel offers (GEEKAGENT_LANDLOCK_ABI, if set, is taken instead); 0 for none."""
    if os.environ.get("GEEKAGENT_LANDLOCK_ABI", "").isdigit():
        return int(os.environ["GEEKAGENT_LANDLOCK_ABI"])
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION))


def insist(configs: dict) -> None:
    """--sandbox: every stdio entry is confined; one that says "sandbox": false asked for less, refused."""
    for config in configs.values():
        if config.kind == "stdio" and not config.sandbox:
            config.overruled, config.sandbox = config.sandbox is False, True


def what_it_may(config) -> str:
    """The line that says how a stdio server is confined, for the trust question, /mcp and the audit."""
    if not config.sandbox:
        return "not sandboxed"
    try:
        given = grants(config, *_as_started(config))
    except Refused as e:
        return f"sandboxed, cannot start: {e}"
    reads = [shown(p) for p in given.files + given.read] or ["only the system's folders"]
    writes = [shown(p) for p in given.write] + [f"its own {name} cache" for name in given.cache[:1]]
    return (f"sandboxed: reads {', '.join(reads)}; writes {', '.join(writes + ['a temporary folder'])}; "
            f"network: {'all' if given.network else 'none'}" + "".join(f"; refused: {why}" for why in given.refused))


def _as_started(config) -> tuple[list[str], dict]:
    """The command line and environment the server would start with (process.py), ${VAR} expanded where set."""
    try:
        return server_command(config), server_env(config)
    except UnsetVariable:  # it will not start; what it would reach is judged from what is written
        return [config.command, *config.args], dict(os.environ)


def wrapped(config, command: list[str], env: dict) -> tuple[list[str], dict, bytes, str]:
    """(the launcher's command line, its own minimal environment, the server's environment to hand it on
    its pipe, the private temporary folder); Refused where the kernel cannot do what the entry asks."""
    given, offered = grants(config, command, env), abi()
    if offered < 1:
        raise Refused("this system offers no Landlock (Linux 5.13 or later, not forbidden by a container)")
    if not given.network and offered < NET_ABI:
        raise Refused(f"this kernel's Landlock (ABI {offered}) cannot refuse TCP (ABI 4, Linux 6.7); "
                      "\"sandbox\": {\"network\": true} runs it confined but with network")
    if not given.network and platform.machine() not in SYSCALLS:
        raise Refused(f"no socket filter for {platform.machine()} (x86_64 and arm64 only); "
                      "\"sandbox\": {\"network\": true} runs it confined but with network")
    cache = cache_env(given.cache)
    for folder in cache.values():
        os.makedirs(folder, mode=0o700, exist_ok=True)
    private = tempfile.mkdtemp(prefix="geekagent-sandbox-")
    rules = {"abi": offered, "program": given.program, "network": given.network, "devices": list(DEVICES),
             "files": list(given.files), "read": [p for p in SYSTEM if allowed(p) is None] + list(given.read),
             "write": list(given.write) + list(given.cache[1:]) + [private]}
    # Without network a proxy is of no use to it, and its address may hold the proxy's password.
    kept = env if given.network else {key: value for key, value in env.items() if key not in NETWORK_ENV}
    server_env = {**kept, **cache, "TMPDIR": private}
    return [sys.executable, "-I", LAUNCHER, json.dumps(rules)], {}, json.dumps(server_env).encode(), private


def refused_in(config, said: list[str]) -> str:
    """What the sandbox most likely refused a server that failed to start, from its last stderr lines, and
    the grant that would allow it; "" when it was not sandboxed."""
    if config.kind != "stdio" or not config.sandbox:
        return ""
    for line in reversed(said[-20:]):
        found = DENIED.search(line)
        if found:
            path = shown(found.group(1) or found.group(2))
            key = "write" if WRITING.search(line) else "read"
            return f" (the sandbox refused {path}: \"sandbox\": {{\"{key}\": [\"{path}\"]}} grants it, if you trust it)"
    launcher = os.path.basename(config.command) in LAUNCHER_CACHES
    if (config.sandbox is True or not config.sandbox.get("network")) and (launcher or any(map(OFFLINE.search, said))):
        return " (it ran sandboxed without network: \"sandbox\": {\"network\": true} lets it fetch or connect)"
    return " (it ran sandboxed: /mcp shows what it may reach)"


def keep_to_itself() -> None:
    """Make the agent not dumpable: no process of the same user without CAP_SYS_PTRACE (a sandboxed
    server has none) reads its /proc/<pid>/environ or its memory. Linux only; elsewhere nothing to do."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
