"""Beyond the tutorial: what stays out of a folder a sandboxed server is granted (wire/grants.py decides the
folders): the user's secrets inside it, unless a grant names them (secrets/names.py lists their names; a
key file only when it holds a private key, a repository's config (its own, a submodule's, a worktree's) only
when it holds a credential, any file an entry's login reads), and what runs later outside the sandbox, which
stays read only: .git (a folder, or a file saying where git goes; any repository's own folder, bare ones
too), .envrc, .geekagent/, .vscode/. A writable repository's or project's top takes no new entry, nor do the
folders on the way to what stays out or read only (no rename there hides it from the next walk). A new .git
deeper in a writable folder is not kept from being made; secrets made after the start are not seen.
Landlock grants whole trees, so the rules are built around them: the folders on the way to each are listed,
their other entries granted one by one; with mounts, the launcher covers and binds them.

The walk is bounded: past MAX_WALKED entries or MAX_SECRETS secrets the server does not start (grant
subfolders instead). It passes over what holds no secret of the user's and is large: node_modules/, a
Python's site-packages/, a repository's objects/ (never a folder for a file a server could write there).
"""
import os
import re
import stat

from beyond.secrets import looks_secret, mask
from beyond.wire.grants import Refused

MAX_WALKED = 20_000
MAX_SECRETS = 64
# What a tool outside the sandbox runs later from a project: git's hooks and config, direnv's .envrc, this
# agent's own files, an editor's tasks.
RUNS_LATER = (".git", ".envrc", ".geekagent", ".vscode")
# What a project holds that holds no secret of the user's and many files: never walked (a repository's
# objects/ neither).
PASSED_OVER = ("node_modules", "site-packages", "dist-packages")
# What a repository's own folder holds, whatever its name (.git, a bare one, a separate one).
GIT_DIR = {"HEAD", "config", "objects", "refs"}
# A key file holds a private key when its start says so (a CA bundle is no secret; a chain may come first;
# PGP's says "PRIVATE KEY BLOCK").
KEY_HEAD_BYTES = 64 * 1024
KEY_FILES = (".pem", ".key")
# A repository's config is read to this size to see whether it holds a credential: a password or token
# where scan.py finds one, a header git sends, or a user name in an http(s) URL (https://TOKEN@host).
MAX_CONFIG_BYTES = 64 * 1024
GIT_CONFIGS = ("config", "config.worktree")
URL_USER = re.compile(r"https?://[^/\s@]+@", re.IGNORECASE)


class Inside:
    """What a grant of folders keeps out (`out`: secrets) and read only (`readonly`: what runs later), and
    the folders whose top takes no new entry (`closed`); each a resolved path. With `mounts` (the launcher
    isolates the server in namespaces of its own, walls.py) the launcher's mounts keep them, and Landlock's
    rules grant whole trees."""

    def __init__(self, mounts: bool = False) -> None:
        self.mounts = mounts
        self.out: set[str] = set()
        self.readonly: set[str] = set()
        self.closed: set[str] = set()
        self._walked = 0

    def look(self, root: str, write: bool, named: set[str]) -> None:
        """Walk a granted folder for its secrets (and, for a `write` grant, what runs later); `named`: the
        files entries' logins read, secrets wherever they are."""
        stack, before = [root], self.out | self.readonly
        while stack:
            folder = stack.pop()
            try:
                with os.scandir(folder) as listed:
                    entries = list(listed)
            except OSError:
                continue  # not readable here: the server reads nothing of it either
            self._walked += len(entries)
            if self._walked > MAX_WALKED:
                raise Refused(f"too many files to exclude secrets from under {folder} (over {MAX_WALKED:,}): "
                              "grant subfolders instead")
            names = {entry.name for entry in entries}
            git = "/.git/" in folder + "/" or GIT_DIR <= names  # in .git, or a bare or separate one
            if write and GIT_DIR <= names and folder != root:
                self.readonly.add(folder)
            if write and names & {".git", ".geekagent"}:
                self.closed.add(folder)  # a repository's or a project's top
            for entry in entries:
                stack += self._judge(root, entry, write, named, git)
            if len(self.out) > MAX_SECRETS:
                raise Refused(f"too many files to exclude secrets from under {root} (over {MAX_SECRETS}): "
                              "grant subfolders instead")
        for path in (self.out | self.readonly) - before if write else ():  # nor do the folders on the way to
            while (path := os.path.dirname(path)) != os.path.dirname(root):  # one: no rename out of a walk's sight
                self.closed.add(path)

    def granted(self, paths) -> None:
        """What "read" or "write" names is granted as named: that very path, were it kept out or read only,
        is not (what it holds still is: naming a folder is no grant of the .git or secrets inside it)."""
        for kept in (self.out, self.readonly):
            kept -= set(paths)

    def _judge(self, root: str, entry: os.DirEntry, write: bool, named: set[str], git: bool) -> list[str]:
        """Note what `entry` is (a secret, what runs later) and return it when it is a folder to walk; `git`:
        it is in a repository's own folder."""
        relative = entry.path[len(root) + 1:]  # below root: as os.path.relpath says it, without its cost
        if entry.is_symlink():
            return []  # a link is never granted: what it leads to is judged where it is
        if write and entry.name in RUNS_LATER:  # a .git file too (a submodule's, a worktree's): where git goes
            self.readonly.add(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if looks_secret(relative + "/x"):  # .ssh/, .aws/, .gnupg/, .kube/
                self.out.add(entry.path)
                return []
            return [] if entry.name in PASSED_OVER or git and entry.name == "objects" else [entry.path]
        if entry.is_file(follow_symlinks=False) and (entry.path in named
                                                     or _secret_file(entry.path, relative, git)):
            self.out.add(entry.path)
        return []

    def rules(self, root: str, kind: str) -> list[tuple[str, str]]:
        """(path, kind) rules that grant `root` as `kind` ("read" or "write") but what this keeps out and
        read only: the folders on the way listed ("list"), their other entries granted one by one ("file",
        "file-write", or the tree)."""
        inside = [path for path in self.out | self.readonly if path.startswith(root + "/")]
        if self.mounts or not inside and root not in self.closed:
            return [(root, kind)]
        rules = [(root, "list")]
        try:
            with os.scandir(root) as listed:
                entries = sorted(listed, key=lambda entry: entry.name)
        except OSError:
            return rules
        for entry in entries:
            if entry.is_symlink() or entry.path in self.out:
                continue
            here = "read" if entry.path in self.readonly else kind
            if entry.is_dir(follow_symlinks=False):
                rules += self.rules(entry.path, here)
            elif entry.is_file(follow_symlinks=False):
                rules.append((entry.path, "file-write" if here == "write" else "file"))
        return rules

    def said(self, root: str, write: bool) -> str:
        """What the question adds to a folder granted (to `write`, or read): "(not .env, .git/config; .git read
        only; no new files at its top)"."""
        names = lambda paths: ", ".join(sorted(os.path.relpath(p, root) for p in paths  # noqa: E731
                                               if p.startswith(root + "/")))
        parts = [f"not {names(self.out)}"] * bool(names(self.out))
        parts += [f"{names(self.readonly)} read only"] * bool(write and names(self.readonly))
        parts += ["no new files at its top"] * (write and root in self.closed)
        parts += ["nothing new on the way to what stays out"] * (write and any(p.startswith(root + "/")
                                                                             for p in self.closed))
        return f" ({'; '.join(parts)})" if parts else ""


def _secret_file(path: str, relative: str, git: bool) -> bool:
    """A file of the user's secrets: by its name, a key file only when it holds a private key, a
    repository's config (`git`: in its folder) only when it holds a credential (git needs to read one that
    holds none)."""
    if git and relative.rpartition("/")[2] in GIT_CONFIGS:
        text = _head(path, MAX_CONFIG_BYTES).decode("utf-8", "replace")
        return "extraheader" in text.lower() or URL_USER.search(text) is not None or mask(text) != text
    if not looks_secret(relative):
        return False
    if path.endswith(KEY_FILES):
        return b"PRIVATE KEY" in _head(path, KEY_HEAD_BYTES)
    return True


def _head(path: str, size: int) -> bytes:
    """The first `size` bytes of a regular file, never through a link nor waiting on a FIFO; none if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        return f.read(size) if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else b""
