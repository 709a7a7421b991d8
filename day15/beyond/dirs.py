"""Beyond the tutorial: the user's own folders (XDG), where answers, pins, logins and history live,
`${VAR}` from the user's environment, and how a file a folder names is read (no links out, no devices,
bounded); the bottom every part may use (it imports none of ours).
"""
import os
import re
import stat

# ${VAR} or ${VAR:-default}, as in shells and in Claude Code's configs; ${env:VAR}, as VS Code writes it.
VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


# Config files are written by hand; anything bigger is not one, and is refused rather than held in memory.
MAX_CONFIG_BYTES = 1 << 20
# Links are never followed when the agent opens a file; a FIFO's open does not wait for a writer.
# The flags do not exist on Windows.
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
# The kernel's folders: their files pass for regular ones (/proc/self/environ holds the agent's
# environment, keys included) or never end (/dev/zero). No file an entry names is read from them.
SYSTEM_FOLDERS = ("/proc", "/sys", "/dev")


class UnsetVariable(ValueError):
    """A ${VAR} with no value and no default; the message says where, and what to do."""


class FolderError(ValueError):
    """A file that is not used: a link out of its folder, not a regular file, too big."""


class LinkOutside(FolderError):
    """A file that is a link leading out of its folder (perhaps meant: it is named, and refused)."""


def config_dir() -> str:
    """$XDG_CONFIG_HOME/geekagent (default ~/.config/geekagent): what the user decided."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "geekagent")


def state_dir() -> str:
    """$XDG_STATE_HOME/geekagent (default ~/.local/state/geekagent): what the agent keeps for itself."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "geekagent")


def cache_dir() -> str:
    """$XDG_CACHE_HOME/geekagent (default ~/.cache/geekagent): what can be made again (a sandbox's caches)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "geekagent")


def expand(text: str, where: str) -> str:
    """${VAR} and ${VAR:-default} from the agent's environment; a missing VAR is UnsetVariable."""
    def value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise UnsetVariable(f"{where}: ${{{name}}} is not set; set it in the environment or .env, "
                            f"or write ${{{name}:-default}}")
    return VARIABLE.sub(value, text)


def read_inside(path: str, limit: int = MAX_CONFIG_BYTES, root: str | None = ".") -> bytes | None:
    """The bytes of a file of the folder `root`, read once; None when there is none. FolderError when
    it leads outside `root` (through a link, or named so), into the kernel's folders, is no regular
    file, or is bigger than `limit`. root None: a file the user named in their own config, anywhere
    but the kernel's folders."""
    joined = os.path.abspath(os.path.join(root or ".", os.path.expanduser(path) if root is None else path))
    real, base = os.path.realpath(joined), os.path.realpath(root) if root is not None else None
    how = "names" if joined == real else "is a link to"
    if base is not None and os.path.commonpath([base, real]) != base:
        raise LinkOutside(f"{path} {how} {_visible(real)}, outside the folder; it is not read")
    if any(os.path.commonpath([real, system]) == system for system in SYSTEM_FOLDERS):
        raise FolderError(f"{path} {how} {_visible(real)}, a file of the system's; it is not read")
    try:
        fd = os.open(real, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise FolderError(f"{path} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder, a FIFO, a device: never read as a file
        os.close(fd)
        raise FolderError(f"{path} is not a regular file; it is not read")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FolderError(f"{path} is over {limit:,} bytes; it is not read")
    return data


def _visible(path: str) -> str:
    """A path in a message, its control characters escaped (a link's target is the folder's word)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)
