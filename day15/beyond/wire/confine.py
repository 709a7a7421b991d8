"""Beyond the tutorial: the launcher of a sandboxed stdio server (wire/sandbox.py decides what it may reach).

Run as a program, with a minimal environment and `python -I` (nothing of the folder, no PYTHON*, no LD_*):
  confine.py RULES ENV_FD -- COMMAND ARG...
RULES is JSON (the Landlock ABI to use, the folders and files to grant, the network, the program file
the command resolved to, which is what runs); the server's own
environment arrives as JSON on the inherited pipe ENV_FD, never in an argv or an environment that
/proc shows. In this order it: reads that environment; restricts itself with Landlock; without the
network, installs a seccomp filter that refuses every new socket; drops every capability (bounding and
ambient sets too, so a root launcher gives its server none); then execs the server. Any step that fails
ends it with status 126 and one line on stderr saying why (fail closed). It imports nothing of ours.
"""
import ctypes
import json
import os
import platform
import struct
import sys

# Landlock's system calls (the same numbers on x86_64 and arm64) and what they take.
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
RULE_PATH_BENEATH = 1
# Filesystem rights by bit; REFER came with ABI 2, TRUNCATE with 3, IOCTL_DEV with 5.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # what a rule on a file may grant
READ = EXECUTE | READ_FILE | READ_DIR
NET_BIND_TCP, NET_CONNECT_TCP, NET_ABI = 1, 2, 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL, SCOPE_ABI = 1, 2, 6
# prctl options and the capability calls.
PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 24, 22, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL, SECCOMP_MODE_FILTER = 4, 2
CAPABILITY_VERSION_3 = 0x20080522
# Per architecture: the audit number seccomp sees, and the calls the filter refuses without the network
# (socket, io_uring_setup) and capset. x32's calls are x86_64's numbers with this bit set.
SYSCALLS = {"x86_64": {"arch": 0xC000003E, "socket": 41, "io_uring_setup": 425, "capset": 126},
            "aarch64": {"arch": 0xC00000B7, "socket": 198, "io_uring_setup": 425, "capset": 91}}
SYSCALLS["arm64"] = SYSCALLS["aarch64"]
X32_BIT = 0x40000000
# Classic BPF, as seccomp reads it: load a word of seccomp_data, jump if equal or greater, return.
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
ALLOW, ERRNO, EACCES = 0x7FFF0000, 0x00050000, 13
NR_OFFSET, ARCH_OFFSET = 0, 4


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
    grants = [(p, READ) for p in rules["read"]] + [(p, fs) for p in rules["write"]]
    grants += [(p, READ & FILE_RIGHTS) for p in rules["files"]] + [(p, FILE_RIGHTS & fs) for p in rules["devices"]]
    for path, rights in grants:
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


def no_sockets() -> None:
    """A seccomp filter: socket() and io_uring_setup() fail with EACCES, and so does every call made through
    another ABI than the machine's own (32-bit calls, x32's numbers), where the numbers would differ."""
    calls = SYSCALLS.get(platform.machine())
    if calls is None:
        raise Refused(f"no seccomp filter for {platform.machine()} (x86_64 and arm64 only), so \"no network\" "
                      "cannot hold")
    refuse = _bpf(RET_K, 0, 0, ERRNO | EACCES)
    program = [_bpf(LD_W_ABS, 0, 0, ARCH_OFFSET), _bpf(JEQ_K, 1, 0, calls["arch"]), refuse,
               _bpf(LD_W_ABS, 0, 0, NR_OFFSET), _bpf(JGE_K, 3, 0, X32_BIT),
               _bpf(JEQ_K, 2, 0, calls["socket"]), _bpf(JEQ_K, 1, 0, calls["io_uring_setup"]),
               _bpf(RET_K, 0, 0, ALLOW), refuse]
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
    root), the ambient set, then the effective, permitted and inheritable sets."""
    libc = _libc()
    status = _capabilities()
    if not any(status.values()):
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
    if libc.syscall(SYSCALLS.get(platform.machine(), SYSCALLS["x86_64"])["capset"], header, data) != 0:
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
        env = json.loads(pipe.read(1 << 22))
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise Refused("the server's environment is not an object of strings")
    return env


def main(argv: list[str]) -> None:
    rules, env = json.loads(argv[1]), _environment(int(argv[2]))
    landlock(rules)
    if not rules["network"]:
        no_sockets()
    drop_capabilities()
    os.execve(rules["program"], argv[4:], env)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (Refused, OSError, ValueError, IndexError, KeyError) as e:
        print(f"sandbox: {e}", file=sys.stderr)
        sys.exit(126)
