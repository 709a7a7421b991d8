"""Beyond the tutorial: a stdio server confined with Landlock (Linux 5.13 and later), when its entry says
"sandbox" (or the agent runs with --sandbox): the trust question decides whether a server starts, this
what it may touch once started.

A sandboxed server may read and run the system's folders (/usr, /bin, /sbin, /lib*, /etc, /opt; /proc,
/sys and /dev to read), the installation of its command and of the runtime it runs under, the folders
of the files its args name and the project folder; it may write only into the folders its args and
roots name, the entry's "write" folders, npm's and uv's caches and a private temporary folder (its
TMPDIR); nothing else of the home folder (~/.ssh, ~/.aws, the agent's tokens and state). TCP connect
and bind are refused unless "network": true, and signals cannot leave it (ABI 6). Everything it starts
inherits the same confinement. Not confined: UDP, unix sockets by path, /proc of the same user.

The confinement is put on in the child, by this file run as a program before the server's own (one
interpreter start more, about 30 ms): it restricts itself, then execs the server. Where it cannot be
enforced as asked (not Linux, no Landlock, an ABI too old for the network rule, a container that
forbids the calls) the server does not start, and its error says why (fail closed). The variable
GEEKAGENT_LANDLOCK_ABI=N makes the agent act as if the kernel offered ABI N (0: none), for tests.
"""
import ctypes
import json
import os
import shutil
import sys
import tempfile

# The system calls (the same numbers on x86_64 and arm64) and what they take.
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION, RULE_PATH_BENEATH, PR_SET_NO_NEW_PRIVS = 1, 1, 38
# Filesystem rights by bit; REFER came with ABI 2, TRUNCATE with 3, IOCTL_DEV with 5.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1, 2, 4, 8
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | (1 << 14) | (1 << 15)  # what a rule on a file may grant
NET_BIND_TCP, NET_CONNECT_TCP, NET_ABI = 1, 2, 4
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL, SCOPE_ABI = 1, 2, 6
READ = EXECUTE | READ_FILE | READ_DIR
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/sys", "/dev")
CACHES = ("~/.npm", "~/.cache/uv", "~/.local/share/uv", "~/.cache/node")
# A launcher's own caches are made (empty, 0700) before it runs confined: a rule needs a folder that is there.
MADE_FOR = {"npx": ("~/.npm",), "npm": ("~/.npm",), "uvx": ("~/.cache/uv", "~/.local/share/uv"),
            "uv": ("~/.cache/uv", "~/.local/share/uv")}
LAUNCHER_FILES = ("~/.npmrc",)  # read by npx (never written)


class Refused(Exception):
    """The sandbox cannot be enforced as asked: the message says why."""


def abi() -> int:
    """The Landlock ABI this kernel offers (GEEKAGENT_LANDLOCK_ABI, if set, is taken instead); 0 for none."""
    if os.environ.get("GEEKAGENT_LANDLOCK_ABI", "").isdigit():
        return int(os.environ["GEEKAGENT_LANDLOCK_ABI"])
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION))


def policy(command: list[str], env: dict, config, project: str) -> dict:
    """What the server may read and write, and whether it has the network, from its entry."""
    asked = config.sandbox if isinstance(config.sandbox, dict) else {}
    home = env.get("HOME") or os.path.expanduser("~")
    programs = _programs(command[0], env.get("PATH"))
    read = list(SYSTEM) + [os.path.dirname(os.path.dirname(p)) for p in programs] + [project]
    for arg in (os.path.realpath(a) for a in command[1:] if os.path.isfile(a)):  # a script: its folder,
        read += [os.path.dirname(arg)] + [arg.split("/node_modules/")[0] + "/node_modules"] * ("/node_modules/" in arg)
    read += [os.path.expanduser(p) for p in asked.get("read", [])]
    write = [os.path.abspath(a) for a in command[1:] if os.path.isdir(a)]
    write += [os.path.abspath(os.path.expanduser(p)) for p in (config.roots if isinstance(config.roots, list) else [])]
    write += [os.path.expanduser(p) for p in asked.get("write", [])]
    for cache in MADE_FOR.get(os.path.basename(command[0]), ()):
        os.makedirs(cache.replace("~", home, 1), mode=0o700, exist_ok=True)
    write += [c.replace("~", home, 1) for c in CACHES]
    read += [f.replace("~", home, 1) for f in LAUNCHER_FILES]
    return {"read": read, "write": write, "files": ["/dev/null"], "network": asked.get("network") is True}


def _programs(name: str, path: str | None) -> set[str]:
    """The program a command runs, as named and as its links lead, and the interpreter its #! line names
    (a virtual environment's script runs the Python it was made from)."""
    found = shutil.which(name, path=path) or name
    programs = {os.path.abspath(found), os.path.realpath(found)}
    try:
        with open(found, "rb") as f:
            line = f.readline(256)
    except OSError:
        return programs
    words = line[2:].decode("utf-8", "replace").split() if line.startswith(b"#!") else []
    if words and os.path.basename(words[0]) == "env" and len(words) > 1:
        words = [shutil.which(words[1], path=path) or words[1]]
    return programs | ({os.path.abspath(words[0]), os.path.realpath(words[0])} if words else set())


def wrapped(command: list[str], env: dict, config, project: str) -> tuple[list[str], dict]:
    """The command that confines the server, then runs it (-I: the launcher imports nothing of this
    folder), and its environment, with a private TMPDIR; Refused where the kernel cannot do what the
    entry asks."""
    rules = policy(command, env, config, project)
    offered = abi()
    if offered < 1:
        raise Refused("this system offers no Landlock (Linux 5.13 or later, not forbidden by a container)")
    if not rules["network"] and offered < NET_ABI:
        raise Refused(f"this kernel's Landlock (ABI {offered}) cannot refuse TCP (ABI 4, Linux 6.7); "
                      "\"sandbox\": {\"network\": true} runs it confined but with network")
    private = tempfile.mkdtemp(prefix="geekagent-sandbox-")
    rules["write"].append(private)
    launcher = [sys.executable, "-I", os.path.abspath(__file__), json.dumps(rules), "--"]
    return launcher + command, {**env, "TMPDIR": private}


def what_it_may(config) -> str:
    """The line that says how a stdio server is confined, for the trust question and /mcp."""
    if not config.sandbox:
        return "not sandboxed"
    asked = config.sandbox if isinstance(config.sandbox, dict) else {}
    write = ", ".join(asked.get("write", [])) or "the folders its args and roots name"
    return f"sandboxed: writes {write} and a temporary folder; {'network' if asked.get('network') else 'no network'}"


# --- the launcher, run as a program: confine, then exec ------------------------------------------

class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def confine(rules: dict) -> None:
    """Restrict this process (and all it will start) as `rules` say; Refused if the kernel will not."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = abi()
    fs = FS_BY_ABI.get(version, FS_BY_ABI[5])
    net = 0 if rules["network"] or version < NET_ABI else NET_BIND_TCP | NET_CONNECT_TCP
    scoped = (SCOPE_SIGNAL | (0 if rules["network"] else SCOPE_ABSTRACT_UNIX)) if version >= SCOPE_ABI else 0
    attr = (ctypes.c_uint64 * 3)(fs, net, scoped)
    size = 24 if version >= SCOPE_ABI else 16 if version >= NET_ABI else 8
    ruleset = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        raise Refused(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    grants = [(p, READ) for p in rules["read"]] + [(p, fs) for p in rules["write"]]
    grants += [(p, FILE_RIGHTS & fs) for p in rules["files"]]
    for path, rights in grants:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a folder that is not there grants nothing
        beneath = _PathBeneath(rights if os.path.isdir(path) else rights & FILE_RIGHTS, fd)
        done = libc.syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(beneath), 0)
        os.close(fd)
        if done < 0:
            raise Refused(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(RESTRICT_SELF, ruleset, 0) < 0:
        raise Refused(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    os.close(ruleset)


if __name__ == "__main__":
    try:
        confine(json.loads(sys.argv[1]))
        os.execvp(sys.argv[3], sys.argv[3:])
    except (Refused, OSError, ValueError, IndexError) as e:
        print(f"sandbox: {e}", file=sys.stderr)
        sys.exit(126)
