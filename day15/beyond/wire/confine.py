"""Beyond the tutorial: the launcher of a sandboxed stdio server (wire/sandbox.py decides what it may reach).

Run as a program, with a minimal environment and `python -I -S` (nothing of the folder, no PYTHON*, no LD_*,
no site-packages):
  confine.py RULES ENV_FD -- COMMAND ARG...
RULES is a dict in marshal's format, in hex (the Landlock ABI to use, [path, kind] of each rule, the network,
the limits, the mounts when it isolates the server, the program file the command resolved to, which is what
runs); the server's own environment arrives as a marshalled dict on the inherited pipe ENV_FD, never in an
argv or an environment that /proc shows. Marshal, a builtin, because the launcher's start is every sandboxed
server's start (importing json would cost it half again). In this order it: reads that environment; sets the
limits; isolates the server in namespaces where the rules give mounts (isolate); restricts itself with
Landlock; installs a seccomp filter that refuses what Landlock has no right for (the keyring, io_uring;
chmod, chown, utimes and extended attributes, where no mounts keep what it may not write read only;
without the network, every new socket); drops every capability (bounding and ambient sets too, so a root launcher gives
its server none); then execs the server. Any step that fails ends it with status 126 and one line on stderr
saying why (fail closed). It imports nothing of ours.
"""
import ctypes
import marshal
import os
import resource
import struct
import sys

# Landlock's system calls (the same numbers on x86_64 and arm64) and what they take.
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
RULE_PATH_BENEATH = 1
# Filesystem rights by bit; REFER came with ABI 2, TRUNCATE with 3, IOCTL_DEV with 5.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
TRUNCATE_ABI = 3
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # what a rule on a file may grant
READ = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP, NET_ABI = 1, 2, 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL, SCOPE_ABI = 1, 2, 6
# prctl options and the capability calls.
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_SET_PDEATHSIG = 24, 22, 38, 47, 1
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER = 4, 2
# Signals by number, the same on x86_64 and arm64 (the signal module would cost the launcher's start a third).
SIGHUP, SIGINT, SIGKILL, SIGTERM, SIG_IGN = 1, 2, 9, 15, 1
CAPABILITY_VERSION_3 = 0x20080522
# Per architecture: the audit number seccomp sees, and the calls the filter refuses: always the keyring's and
# io_uring's (its operations, by path and on sockets, pass every other check here);
# where no mounts keep what it may not write read only, changing a file's mode, owner, times or extended
# attributes in every form (Landlock checks none of them, and an open file may be one it may only read);
# without the network, new sockets. arm64 has no calls of the old forms
# (chmod, chown...). x32's calls are x86_64's numbers with this bit set.
SYSCALLS = {
    "x86_64": {"arch": 0xC000003E, "capset": 126, "sockets": (41,), "always": (248, 249, 250, 425, 426, 427),
               "metadata": (90, 91, 268, 452, 92, 93, 94, 260, 132, 235, 261, 280, 188, 189, 190, 197, 198, 199,
                            463, 466)},
    "aarch64": {"arch": 0xC00000B7, "capset": 91, "sockets": (198,), "always": (217, 218, 219, 425, 426, 427),
                "metadata": (52, 53, 452, 54, 55, 88, 5, 6, 7, 14, 15, 16, 463, 466)}}
SYSCALLS["arm64"] = SYSCALLS["aarch64"]
X32_BIT = 0x40000000
# Namespaces, mounts and their attributes (mount_setattr came with Linux 5.12: without it, no isolation).
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x20000, 0x10000000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 0x4000, 1 << 18
MOUNT_SETATTR, AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 1
# Classic BPF, as seccomp reads it: load a word of seccomp_data, jump if equal or greater, return.
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
ALLOW, ERRNO, EACCES = 0x7FFF0000, 0x00050000, 13
NR_OFFSET, ARCH_OFFSET = 0, 4
# What each kind of rule grants, of the rights this ABI has (a rule on a file keeps only a file's rights).
KINDS = {"read": lambda fs: READ, "write": lambda fs: fs, "list": lambda fs: READ_DIR,
         "file": lambda fs: READ & FILE_RIGHTS, "file-write": lambda fs: FILE_RIGHTS & fs,
         "device": lambda fs: FILE_RIGHTS & fs}


class Refused(Exception):
    """A step of the confinement the kernel would not take: the message says which, and why."""


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _failed(what: str) -> Refused:
    return Refused(f"{what}: {os.strerror(ctypes.get_errno())}")


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock(rules: dict) -> None:
    """Restrict this process (and all it will start) to the folders and files of `rules`."""
    libc, version = _libc(), int(rules["abi"])
    fs = FS_BY_ABI.get(version, FS_BY_ABI[5])
    net = 0 if rules["network"] or version < NET_ABI else NET_BIND_TCP | NET_CONNECT_TCP
    scoped = (SCOPE_SIGNAL | (0 if rules["network"] else SCOPE_ABSTRACT_UNIX)) if version >= SCOPE_ABI else 0
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 24 if version >= SCOPE_ABI else 16 if version >= NET_ABI else 8
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise _failed("landlock_create_ruleset")
    for path, kind in rules["grants"]:
        path, rights = f"/proc/{os.getpid()}" if path == "/proc/self" else path, KINDS[kind](fs)
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path that is not there grants nothing
        if os.readlink(f"/proc/self/fd/{fd}") != path:  # the agent granted it resolved: a link swapped in
            os.close(fd)  # since then grants nothing
            continue
        beneath = _PathBeneath(rights if os.path.isdir(path) else rights & FILE_RIGHTS, fd)
        done = libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(beneath), 0)
        os.close(fd)
        if done < 0:
            raise _failed(f"landlock_add_rule {path}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _failed("no_new_privs")
    if libc.syscall(RESTRICT_SELF, ruleset, 0) < 0:
        raise _failed("landlock_restrict_self")
    os.close(ruleset)


def seccomp(refused: dict) -> None:
    """A seccomp filter: the calls SYSCALLS lists fail with EACCES (the keyring's and io_uring's always; the
    others when `refused` says: "metadata", "sockets"), and so does every call made through another ABI than
    the machine's own (32-bit calls, x32's numbers), where the numbers differ."""
    calls = SYSCALLS.get(os.uname().machine)
    if calls is None:
        raise Refused(f"no seccomp filter for {os.uname().machine} (x86_64 and arm64 only)")
    numbers = list(calls["always"]) + [number for kind in ("metadata", "sockets") if refused[kind]
                                        for number in calls[kind]]
    # [arch] [refuse] [nr] [x32] [each number] [allow] [refuse]
    refuse = _bpf(RET_K, 0, 0, ERRNO | EACCES)
    program = [_bpf(LD_W_ABS, 0, 0, ARCH_OFFSET), _bpf(JEQ_K, 1, 0, calls["arch"]), refuse,
               _bpf(LD_W_ABS, 0, 0, NR_OFFSET), _bpf(JGE_K, len(numbers) + 1, 0, X32_BIT)]
    program += [_bpf(JEQ_K, len(numbers) - i, 0, number) for i, number in enumerate(numbers)]
    program += [_bpf(RET_K, 0, 0, ALLOW), refuse]
    code = ctypes.create_string_buffer(b"".join(program))
    fprog = struct.pack("HxxxxxxQ", len(program), ctypes.addressof(code))
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(
            PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        raise _failed("seccomp")


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def drop_capabilities() -> None:
    """Give up every capability for good: the bounding set (so an exec cannot gain them back, even as
    root), the ambient set, then the effective, permitted and inheritable sets. A process that holds none
    (a user's, outside namespaces) keeps its bounding set, which it may not change: with no_new_privs set
    (Landlock's condition) no exec gives it any."""
    libc = _libc()
    status = _capabilities()
    if not any(value for name, value in status.items() if name != "CapBnd"):
        return
    with open("/proc/sys/kernel/cap_last_cap") as f:
        last = int(f.read())
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: none such
            raise _failed(f"dropping capability {cap}")
    if libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise _failed("clearing the ambient capabilities")
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two of {effective, permitted, inheritable}, all zero
    if libc.syscall(SYSCALLS.get(os.uname().machine, SYSCALLS["x86_64"])["capset"], header, data) != 0:
        raise _failed("capset")
    if any(_capabilities().values()):
        raise Refused("capabilities remain after dropping them")


def _capabilities() -> dict[str, int]:
    """CapEff, CapPrm, CapInh, CapBnd and CapAmb of this process, from /proc/self/status."""
    with open("/proc/self/status") as f:
        return {line[:6]: int(line.split()[1], 16) for line in f if line.startswith("Cap")}


def _environment(fd: int) -> dict[str, str]:
    """The server's environment, read to its end from the pipe the agent wrote it to."""
    with os.fdopen(fd, "rb") as pipe:
        env = marshal.loads(pipe.read(1 << 22))
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise Refused("the server's environment is not an object of strings")
    return env


def limit(limits: dict) -> None:
    """Memory per process (RLIMIT_DATA) and, when set, processes of this user (RLIMIT_NPROC); never above
    what the launcher had."""
    for which, value in ((resource.RLIMIT_DATA, limits.get("data")), (resource.RLIMIT_NPROC, limits.get("nproc"))):
        if value is not None:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))


def isolate(mounts: dict) -> None:
    """In namespaces of its own (user, mount, process): every mount made read-only, then the binds in their
    order (what it may write writable again, what runs later and a closed top read-only again), each secret
    covered by an empty file or folder no one may open; then this process and the first inside stay behind
    (_stay_behind), and the server runs as the second, seeing only its own /proc."""
    libc, uid, gid = _libc(), os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0:
        raise _failed("unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise _failed("making the mounts private")
    _mount_attr("/", MOUNT_ATTR_RDONLY, 0, recursive=True)
    for path, how in mounts["binds"]:  # in order: a folder, then what differs inside it
        if os.path.lexists(path):
            writable = how == "rw"
            if libc.mount(path.encode(), path.encode(), None, MS_BIND | MS_REC, None) != 0:
                raise _failed(f"binding {path}")
            _mount_attr(path, 0 if writable else MOUNT_ATTR_RDONLY, MOUNT_ATTR_RDONLY if writable else 0, not writable)
    for path in mounts["hide"]:
        cover = mounts["empty_folder"] if os.path.isdir(path) else mounts["empty_file"]
        if libc.mount(cover.encode(), path.encode(), None, MS_BIND, None) != 0:
            raise _failed(f"covering {path}")
    os.chdir(os.getcwd())  # the folder it works in, looked up again: through the mounts made over it
    _stay_behind()
    if libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 or os.getppid() == 1:
        raise _failed("dying with the launcher")
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        raise _failed("mounting /proc")
    _stay_behind()  # the first of its processes


def _stay_behind() -> None:
    """Fork; the parent waits for the child and leaves with its status, reaping what else ends meanwhile (the
    first process inside adopts what the server leaves behind); the child returns. Neither parent ends on
    the agent's SIGTERM, SIGINT or SIGHUP: the server, in the same process group, gets them itself. The
    agent's SIGKILL ends the launcher, and with it everything inside (PR_SET_PDEATHSIG, then the end of
    the namespace's first process)."""
    child = os.fork()
    if not child:
        return
    for fd in (0, 1):  # the server's pipes are the server's alone: their end is its end
        os.close(fd)
    for number in (SIGHUP, SIGINT, SIGTERM):
        _libc().signal(number, ctypes.c_void_p(SIG_IGN))
    while True:
        pid, status = os.wait()
        if pid == child:
            raise SystemExit(os.waitstatus_to_exitcode(status) % 256)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


def _mount_attr(path: str, set_: int, clear: int, recursive: bool) -> None:
    attr = _MountAttr(set_, clear, 0, 0)
    if _libc().syscall(MOUNT_SETATTR, AT_FDCWD, path.encode(), AT_RECURSIVE if recursive else 0,
                       ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
        raise _failed(f"mount_setattr {path}")


def main(argv: list[str]) -> None:
    if argv[1] == "--probe":  # whether this kernel and user can isolate (wire/walls.py asks once)
        return isolate({"binds": [], "hide": []})
    rules, env = marshal.loads(bytes.fromhex(argv[1])), _environment(int(argv[2]))
    limit(rules["limits"])
    if rules["mounts"] is not None:
        isolate(rules["mounts"])
    landlock(rules)
    seccomp({"sockets": not rules["network"], "metadata": rules["mounts"] is None})
    drop_capabilities()
    os.execve(rules["program"], argv[4:], env)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (Refused, OSError, ValueError, IndexError, KeyError) as e:
        print(f"sandbox: {e}", file=sys.stderr)
        sys.exit(126)
