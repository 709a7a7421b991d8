"""Beyond the tutorial: the files of MCP servers' skills, kept once verified, in the user's cache.

One folder a server: named by its identity (its name and what its entry runs, or its URL: folder/approvals.py's
runs_of), so two servers' same URI land apart and a renamed or replaced server finds nothing. A file
is named by its URI's hash and digest, written whole (0600, by rename), never changed in place, and
hashed again on every use: a cached copy that is not what the entry says is dropped and read anew.
The cache is never inside a skills folder (it would become a skill of the folder's), and `mcp remove`
removes a server's folder.
"""
import hashlib
import json
import os
import shutil
import tempfile

from beyond.client.skill_entries import MAX_SKILL_BYTES
from beyond.dirs import NOFOLLOW, cache_dir, config_dir
from beyond.folder.approvals import runs_of
from beyond.folder.skill_files import SKILLS_FOLDER


# `mcp remove` looks at this many cached servers' folders at most for the removed one's.
MAX_CACHED_SERVERS = 1000


def identity(config, server: str) -> str:
    """A server's identity, hashed: its name in mcp.json and what its entry runs (command, args, env, cwd,
    sandbox) or its URL."""
    said = json.dumps([server, runs_of(config)], sort_keys=True)
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()


def remove_cached(server: str) -> None:
    """A removed server's cached skill files (every folder its name was cached under), gone with it."""
    root = os.path.join(cache_dir(), "skills")
    try:
        folders = sorted(os.listdir(root))[:MAX_CACHED_SERVERS]
    except OSError:
        return  # nothing cached
    for folder in folders:
        try:
            with open(os.path.join(root, folder, "origin.json"), "rb") as f:
                named = json.loads(f.read(4096)).get("server")
        except (OSError, ValueError, AttributeError):
            continue  # no folder of ours
        if named == server:
            shutil.rmtree(os.path.join(root, folder), ignore_errors=True)


class SkillCache:
    """One server's cached skill files: get(uri, digest) -> bytes or None, put(uri, digest, data)."""

    def __init__(self, config, label: str) -> None:
        self.folder = os.path.join(cache_dir(), "skills", identity(config, label)[:32])
        self.label = label  # the server's name: origin.json says whose the folder is (mcp remove finds it so)
        self.usable = _outside_skills(self.folder)

    def get(self, uri: str, digest: str) -> bytes | None:
        """The cached bytes of a file, only if they hash to `digest` now."""
        if not self.usable:
            return None
        try:
            fd = os.open(self._path(uri, digest), os.O_RDONLY | NOFOLLOW)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_SKILL_BYTES + 1)  # bounded by the extension's limit of a whole skill
        if "sha256:" + hashlib.sha256(data).hexdigest() == digest:
            return data
        try:
            os.unlink(self._path(uri, digest))  # changed on disk: never used, read from the server again
        except OSError:
            pass  # left as it is: it is hashed again, and refused again, on the next use
        return None

    def put(self, uri: str, digest: str, data: bytes) -> None:
        """Keep verified bytes (written whole, then renamed into place); a cache that cannot be written is none."""
        if not self.usable:
            return
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            origin = os.path.join(self.folder, "origin.json")
            if not os.path.exists(origin):
                self._write(origin, json.dumps({"server": self.label}).encode())
            self._write(self._path(uri, digest), data)
        except OSError:
            pass  # no cache: every use reads the server again

    def _path(self, uri: str, digest: str) -> str:
        named = hashlib.sha256(uri.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return os.path.join(self.folder, f"{named}-{digest[len('sha256:'):][:32]}")

    def _write(self, path: str, data: bytes) -> None:
        fd, temporary = tempfile.mkstemp(dir=self.folder, prefix=".part-")  # 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temporary, path)
        except OSError:
            os.unlink(temporary)
            raise


def _outside_skills(folder: str) -> bool:
    """Whether the cache is outside the user's skills folder and the project's (else it is not used)."""
    real = os.path.realpath(folder)
    for skills in (os.path.join(config_dir(), "skills"), os.path.abspath(SKILLS_FOLDER)):
        base = os.path.realpath(skills)
        if os.path.commonpath([base, real]) == base:
            return False
    return True
