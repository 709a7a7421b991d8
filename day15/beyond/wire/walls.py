"""Beyond the tutorial: the walls of a sandboxed stdio server on this kernel, and the rules its launcher
(confine.py) builds them from (wire/sandbox.py asks).

Three kinds of wall. Confidentiality (the user's secrets stay unread) and integrity (nothing of the user's
changed, nothing planted that runs later) hold on every kernel with Landlock, or the server does not start.
Where this user may make namespaces of its own (user, mount, process; Linux 5.12), the launcher isolates the
server: every mount read-only but what it may write, what runs later read-only, secrets covered, only its
own processes in /proc; else Landlock's rules are built around them (inside.py), a seccomp filter refuses
what Landlock has no right for (changing a file's mode, owner, times or attributes, which stops npx and uvx
from installing there; truncate before ABI 3), and below ABI 3 it does not start (opening a file with
O_TRUNC needs no write right there). The keyring is refused either way. Availability (it cannot signal or
starve the agent and the user's processes) holds where the kernel allows: Landlock's scope (ABI 6) or a
process namespace, a process limit (not as root), memory per process; where it cannot, the trust question
says so and the server starts.
GEEKAGENT_NAMESPACES=0 in the agent's environment makes it act as if there were none, for tests.
"""
import ctypes
import functools
import os
import platform
import subprocess
import sys

from beyond.wire.confine import CREATE_RULESET, SCOPE_ABI, SYSCALLS, TRUNCATE_ABI
from beyond.wire.grants import SYSTEM, allowed
from beyond.wire.inside import Inside

CREATE_RULESET_VERSION = 1
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confine.py")
# The kernel's process files a runtime reads (Node: cpuinfo, stat, meminfo; Python and uv: none): no other
# process's; its own folder as /proc/self (the launcher's, which the server's exec keeps).
PROC = ("/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/uptime", "/proc/version",
        "/proc/filesystems", "/proc/sys")
# Per process (an address space's data, heap and private writable mappings): more than Node or uv take. It
# bounds one process, not the server's processes together (a cgroup would; none is made).
MAX_DATA_BYTES = 8 << 30
# Processes a server may start beyond those the user runs now (RLIMIT_NPROC counts the user's own).
MORE_PROCESSES = 512


def abi() -> int:
    """The Landlock ABI this kernel offers (GEEKAGENT_LANDLOCK_ABI, if set, is taken instead); 0 for none."""
    if os.environ.get("GEEKAGENT_LANDLOCK_ABI", "").isdigit():
        return int(os.environ["GEEKAGENT_LANDLOCK_ABI"])
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION))


def missing(offered: int) -> str | None:
    """Which confidentiality or integrity wall this system lacks, as the refusal says it; None when all hold."""
    if offered < 1:
        return "this system offers no Landlock (Linux 5.13 or later, not forbidden by a container): your files " \
               "would not be kept from it"
    if platform.machine() not in SYSCALLS:
        return f"no seccomp filter for {platform.machine()} (x86_64 and arm64 only): your keyring and the " \
               "metadata of your files would not be kept from it"
    if offered < TRUNCATE_ABI and not namespaces():  # opening a file it may read with O_TRUNC empties it
        return f"this kernel's Landlock (ABI {offered}) cannot keep it from emptying files it may read (ABI " \
               f"{TRUNCATE_ABI}, Linux 6.2), nor may this user make the namespaces that would"
    return None


def gaps(offered: int, network: bool) -> list[str]:
    """What this kernel and user cannot keep a sandboxed server from (availability), for the question."""
    said, kernel = [], f"on this kernel (Linux {platform.release()}, Landlock ABI {offered})"
    if offered < SCOPE_ABI and not namespaces():
        said.append(f"{kernel} it can signal your processes" + (" and reach their abstract sockets" if network else ""))
    elif offered < SCOPE_ABI and network:
        said.append(f"{kernel} it can reach your processes' abstract sockets")
    if not namespaces():
        said.append("without namespaces of its own (this user may not make them), npx and uvx cannot install "
                    "there (chmod is refused)")
    if os.geteuid() == 0:
        said.append("as root, how many processes it starts is unbounded")
    said.append(f"its memory is bounded per process ({MAX_DATA_BYTES >> 30} GiB), not in all")
    return said


def limits() -> dict:
    """The launcher's limits for the server: memory per process, and (not as root, whom the kernel does not
    count) processes."""
    nproc = None if os.geteuid() == 0 else _processes_of(os.getuid()) + MORE_PROCESSES
    return {"data": MAX_DATA_BYTES, "nproc": nproc}


@functools.cache  # asked once a run: the launcher tries, as it would for a server
def namespaces() -> bool:
    """Whether the launcher can isolate a server in namespaces of its own here."""
    if os.environ.get("GEEKAGENT_NAMESPACES") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        done = subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--probe"], capture_output=True, timeout=10,
                              env={})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def mounts(inside: Inside, write: list[str], covers: tuple[str, str]) -> dict | None:
    """What the launcher mounts when it isolates the server (confine.isolate), or None: [path, "rw" or "ro"]
    in order (`write` writable; a closed top read-only, each of its entries writable again; what runs later
    read-only), and the secrets (and, for root, what only root may read in /etc) covered by `covers` (an
    empty file and an empty folder no one may open)."""
    if not inside.mounts:
        return None
    binds = [[path, "rw"] for path in write]
    for folder in sorted(inside.closed):
        binds.append([folder, "ro"])
        with os.scandir(folder) as entries:
            binds += [[entry.path, "rw"] for entry in sorted(entries, key=lambda entry: entry.name)
                      if not entry.is_symlink() and entry.path not in inside.readonly | inside.out]
    return {"binds": binds + [[path, "ro"] for path in sorted(inside.readonly)],
            "hide": sorted(inside.out | _etc().out), "empty_file": covers[0], "empty_folder": covers[1]}


def rules(grants, inside: Inside, extra_write: list[str], devices: tuple) -> list[list[str]]:
    """[path, kind] of every Landlock rule: the system's folders (/etc without what only root may read, for
    root; of /proc only PROC and itself, unless it is the server's own), its files, what it may read and
    write built around what stays out (inside.py), its own caches and temporary folder, its devices."""
    found = [[path, "read"] for path in SYSTEM if path not in ("/proc", "/etc") and allowed(path) is None]
    if inside.mounts:  # a /proc of its own processes, and what is kept out of /etc covered
        found += [["/proc", "read"], ["/etc", "read"]]
    else:
        found += [list(rule) for rule in _etc().rules("/etc", "read")] + [[path, "read"] for path in PROC]
        found += [["/proc/self", "read"]]
    found += [[path, "file"] for path in grants.files]
    for folder in grants.read:
        found += [list(rule) for rule in inside.rules(folder, "read")]
    for folder in [*grants.write, *extra_write]:
        found += [list(rule) for rule in inside.rules(folder, "write")]
    return found + [[path, "device"] for path in devices]


def look_inside(grants, login_files: set[str]) -> Inside:
    """What stays out of the folders granted (secrets, what runs later): walked, but runtimes; what a grant
    names is granted as named (Inside.granted)."""
    inside = Inside(mounts=namespaces())
    for folder in grants.read:
        if folder not in grants.runtimes:
            inside.look(folder, False, login_files)
    for folder in grants.write:
        inside.look(folder, True, login_files)
    inside.granted(grants.named)
    return inside


@functools.cache  # the system's: the same for every server of this run
def _etc() -> Inside:
    """As root, what under /etc only root may read (shadow, ssl/private, host keys) stays out; as another
    user the kernel keeps it out already."""
    inside = Inside()
    if os.geteuid() != 0:
        return inside
    for folder, folders, files in os.walk("/etc"):
        for name in folders + files:
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not mode & 0o004:  # not readable by others
                inside.out.add(path)
        folders[:] = [name for name in folders if os.path.join(folder, name) not in inside.out]
    return inside


def _processes_of(uid: int) -> int:
    """How many processes the user runs now (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.scandir("/proc"):
        try:
            count += entry.name.isdigit() and os.stat(entry.path).st_uid == uid
        except OSError:
            continue  # ended while we looked
    return count
