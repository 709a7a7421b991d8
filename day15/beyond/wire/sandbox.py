"""Beyond the tutorial: a stdio server confined ("sandbox", --sandbox): what it may reach (wire/grants.py, and
what stays out inside it, wire/inside.py) shown in the trust question and /mcp, with what this kernel cannot
keep it from (wire/walls.py), and enforced by the launcher (wire/confine.py) before the server runs.

Without "network": true it gets no socket at all. Where a confidentiality or integrity wall cannot be built
the server does not start (Refused says which); a server that fails to start is told what the sandbox most
likely refused it. The agent itself is made not dumpable. GEEKAGENT_LANDLOCK_ABI=N in the agent's
environment makes it act as if the kernel offered ABI N, for tests.
"""
import ctypes
import marshal
import os
import re
import shutil
import sys
import tempfile

from beyond.dirs import UnsetVariable
from beyond.wire.confine import NET_ABI
from beyond.secrets import looks_secret
from beyond.wire.grants import LAUNCHER_CACHES, SYSTEM, NotFound, Refused, allowed, cache_env, grants, shown, under
from beyond.wire.inside import RUNS_LATER
from beyond.wire.process import NETWORK_ENV, server_command, server_env
from beyond.wire.walls import LAUNCHER, abi, gaps, limits, look_inside, missing, mounts, rules

__all__ = ["NotFound", "Refused", "abi", "insist", "what_it_may", "wrapped", "remove", "refused_in", "refusal",
           "keep_to_itself"]

# What covers a secret inside its grants, in its temporary folder: an empty file, an empty folder.
COVERS = (".hidden-file", ".hidden-folder")
# The devices it may open; not /dev/tty or /dev/pts (the user's terminal), not /dev/shm.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# What a refused path or a refused network looks like in what a server says on stderr (Python, Node, uv, git).
# With namespaces, what it may not write is a read-only mount (EROFS).
REFUSAL = r"(?:permission denied|EACCES|os error 13|read-only file system|EROFS|os error 30)"
DENIED = re.compile(rf"{REFUSAL}\W*?[^/]{{0,40}}?['`\"]?(/[^'`\"\s:,)]+)"
                    rf"|['`\"](/[^'`\"]+)['`\"][^/]{{0,40}}?{REFUSAL}", re.IGNORECASE)
WRITING = re.compile(r"creat|writ|mkdir|rename|unlink|remove|EROFS", re.IGNORECASE)
OFFLINE = re.compile(r"name resolution|getaddrinfo|EAI_AGAIN|ENOTFOUND|socket|network|fetch|connect", re.IGNORECASE)


def insist(configs: dict) -> None:
    """--sandbox: every stdio entry is confined; one that says "sandbox": false asked for less, refused."""
    for config in configs.values():
        if config.kind == "stdio" and not config.sandbox:
            config.overruled, config.sandbox = config.sandbox is False, True


def what_it_may(config) -> str:
    """The line that says how a stdio server is confined, for the trust question, /mcp and the audit: what it
    reads and writes, what stays out of that, its network, what was refused and what this kernel cannot keep
    it from."""
    if not config.sandbox:
        return "not sandboxed"
    try:
        given = grants(config, *_as_started(config))
        inside = look_inside(given, set(config.login_files))
        lacking = missing(abi())
    except Refused as e:
        return f"sandboxed, cannot start: {e}"
    if lacking:
        return f"sandboxed, cannot start: {lacking}"
    reads = [shown(p) for p in given.files] + [shown(p) + inside.said(p, False) for p in given.read]
    reads = ", ".join(reads) or "only the system's folders"
    writes = [shown(p) + (inside.said(p, True) if os.path.lexists(p) else " (made as it starts)") for p in given.write]
    writes += [f"its own {name} cache" for name in given.cache[:1]]
    return (f"sandboxed: reads {reads}; writes "
            f"{', '.join(writes + ['a temporary folder'])}; network: {'all' if given.network else 'none'}"
            + "".join(f"; refused: {why}" for why in given.refused)
            + "".join(f"; {gap}" for gap in gaps(abi(), given.network)))


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
    lacking = missing(offered)
    if lacking:
        raise Refused(lacking)
    if not given.network and offered < NET_ABI:
        raise Refused(f"this kernel's Landlock (ABI {offered}) cannot refuse TCP (ABI 4, Linux 6.7); "
                      "\"sandbox\": {\"network\": true} runs it confined but with network")
    for folder in given.write:  # a folder "write" names that is not there yet: made, as the question said
        os.makedirs(folder, exist_ok=True)
    inside = look_inside(given, set(config.login_files))
    cache = cache_env(given.cache)
    for folder in cache.values():
        os.makedirs(folder, mode=0o700, exist_ok=True)
    private = tempfile.mkdtemp(prefix="geekagent-sandbox-")
    try:
        covers = (os.path.join(private, COVERS[0]), os.path.join(private, COVERS[1]))
        open(covers[0], "w").close()
        os.mkdir(covers[1])
        for cover in covers:  # what covers a secret: empty, and no one may open it (the server has no capability)
            os.chmod(cover, 0)
        write = [*given.write, *given.cache[1:], private]
        launch = {"abi": offered, "program": given.program, "network": given.network, "limits": limits(),
                  "grants": rules(given, inside, write[len(given.write):], DEVICES),
                  "mounts": mounts(inside, write, covers)}
    except BaseException:  # a folder that changed under the walk: nothing of this start is left behind
        remove(private)
        raise
    # Without network a proxy is of no use to it, and its address may hold the proxy's password.
    kept = env if given.network else {key: value for key, value in env.items() if key not in NETWORK_ENV}
    server_env = {**kept, **cache, "TMPDIR": private}
    return [sys.executable, "-I", "-S", LAUNCHER, marshal.dumps(launch).hex()], {}, marshal.dumps(server_env), private


def remove(private: str) -> None:
    """Remove a server's temporary folder, the folder that covered its secrets opened again to be removed."""
    try:
        os.chmod(os.path.join(private, COVERS[1]), 0o700)
    except OSError:
        pass  # not made, or made otherwise: what rmtree cannot remove, it leaves
    shutil.rmtree(private, ignore_errors=True)


def refused_in(config, said: list[str]) -> str:
    """What the sandbox most likely refused a server that failed to start, from its last stderr lines, and
    the grant that would allow it; "" when it was not sandboxed."""
    if config.kind != "stdio" or not config.sandbox:
        return ""
    for line in reversed(said[-20:]):
        hint = refusal(config, line)
        if hint:
            return f" ({hint})"
    launcher = os.path.basename(config.command) in LAUNCHER_CACHES
    if (config.sandbox is True or not config.sandbox.get("network")) and (launcher or any(map(OFFLINE.search, said))):
        return " (it ran sandboxed without network: \"sandbox\": {\"network\": true} lets it fetch or connect)"
    return " (it ran sandboxed: /mcp shows what it may reach)"


def refusal(config, text: str) -> str:
    """The path a sandboxed server's line or error says it was refused, with the grant that allows it:
    'the sandbox refused ~/.gitconfig: "sandbox": {"read": ["~/.gitconfig"]} grants it, if you trust it'.
    A grant writes folders: a file to write or make is named by its folder. "" where no grant should be
    suggested: not sandboxed, the agent may not reach it either, a grant may not name it, it holds secrets
    or is the system's. Named as it resolves; what runs later outside the sandbox is said to."""
    found = DENIED.search(text) if config.kind == "stdio" and config.sandbox else None
    if not found:
        return ""
    path, writing = found.group(1) or found.group(2), bool(WRITING.search(text))
    if not os.path.lexists(path) or writing and not os.path.isdir(path):
        path, writing = os.path.dirname(path), True
    real = os.path.realpath(path)
    if not os.access(real, os.W_OK if writing else os.R_OK) or allowed(real, writing) is not None \
            or looks_secret(real + "/x" * os.path.isdir(real)) or under(real, SYSTEM):
        return ""
    later = any(part in RUNS_LATER for part in real.split("/"))
    path, key = shown(real), "write" if writing else "read"
    return f"the sandbox refused {path}: \"sandbox\": {{\"{key}\": [\"{path}\"]}} grants it" + (
        ", though what it writes there runs later outside the sandbox" if later else ", if you trust it")


def keep_to_itself() -> None:
    """Make the agent not dumpable: no process of the same user without CAP_SYS_PTRACE (a sandboxed
    server has none) reads its /proc/<pid>/environ or its memory. Linux only; elsewhere nothing to do."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
