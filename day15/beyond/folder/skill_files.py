"""Beyond the tutorial: skills kept as folders (the Agent Skills format: `<name>/SKILL.md` and its files), the
project's in .geekagent/skills/ and the user's own in $XDG_CONFIG_HOME/geekagent/skills/.

Each skill is read once, as the folder's files are: never through a link, no device, bounded by the
MCP extension's limits; a file that looks secret (a .env, a key) is no file of a skill. SKILL.md's bytes
are kept (what the trust question shows is what is loaded); every other file's size and SHA-256 are, so
a file read later is used only if it is still what was seen.
"""
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field

from beyond.client.frontmatter import split
from beyond.client.skill_entries import MAX_SKILL_BYTES, MAX_SKILL_FILES, NAME, digest_of
from beyond.dirs import FolderError, read_inside
from beyond.secrets import looks_secret
from beyond.text import clean, shorten

SKILLS_FOLDER = os.path.join(".geekagent", "skills")
# A skills folder offers at most this many skills: each is one line of the model's catalog.
MAX_LOCAL_SKILLS = 200
# All of a skills folder's files are read (and hashed) at every start: this many bytes in all, past which the
# remaining skills are left out, so a cloned folder cannot make each start read gigabytes.
MAX_LOCAL_SKILLS_BYTES = 64 << 20
# A skill folder is walked this deep and through this many entries (files, folders, those left out) at most:
# a cloned folder of a thousand nested folders is refused, not followed.
MAX_DEPTH = 16
MAX_ENTRIES = 4 * MAX_SKILL_FILES


@dataclass
class LocalSkill:
    """One skill folder as read: its SKILL.md's bytes, and every file's (relative path -> size, digest)."""
    name: str
    description: str
    folder: str
    text: bytes
    files: dict[str, tuple[int, str]] = field(default_factory=dict)
    frontmatter: dict = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(size for size, _ in self.files.values())

    def digest(self) -> str:
        """One hash of every file's path, size and digest: what trust is bound to."""
        said = "\n".join(f"{path} {size} {digest}" for path, (size, digest) in sorted(self.files.items()))
        return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()

    def read(self, path: str) -> bytes:
        """A file of the skill, only if it is one of those seen and still the same; FolderError otherwise."""
        plain = os.path.normpath(path)
        if plain not in self.files:
            raise FolderError(f"{path} is not a file of skill {self.name}")
        if plain == "SKILL.md":
            return self.text
        data = read_inside(plain, self.files[plain][0], root=self.folder)
        if data is None or digest_of(data) != self.files[plain][1]:
            raise FolderError(f"{path} of skill {self.name} changed since it was read; start the agent again")
        return data


def folder_skills(folder: str) -> tuple[list[LocalSkill], list[str]]:
    """The project's skills (.geekagent/skills/ of `folder`), never through a link, and why any was left out."""
    root = os.path.join(folder, SKILLS_FOLDER)
    if os.path.islink(root) or os.path.islink(os.path.dirname(root)):
        return [], [f"{SKILLS_FOLDER} is a link; its skills are not read"]
    return scan(root)


def shown_skills(skills: list[LocalSkill], problems: list[str]) -> list[str]:
    """The trust question's lines for the folder's skills: each by what identifies it (name, files, size, digest)."""
    lines = [clean(f"  skill {s.name}: {len(s.files)} file{'s' * (len(s.files) > 1)}, {s.size:,} bytes, digest "
                   f"{s.digest()[:12]}: {shorten(s.description, 100)}", one_line=True) for s in skills]
    return lines + [f"  warning: {clean(problem, one_line=True)}" for problem in problems]


def scan(root: str) -> tuple[list[LocalSkill], list[str]]:
    """The skills of a skills folder (none when it is missing), and why any was left out."""
    try:
        names = sorted(os.listdir(root))
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    except OSError as e:
        return [], [f"{root}: cannot be read ({e.strerror or e})"]
    found, problems, room = [], [], MAX_LOCAL_SKILLS_BYTES
    for name in names[:MAX_LOCAL_SKILLS]:
        folder = os.path.join(root, name)
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                continue  # a file beside the skills, or a link: not a skill of this folder
            if not NAME.fullmatch(name):
                raise ValueError("a skill's folder is named with lowercase letters, digits and hyphens")
            found.append(_read_skill(name, folder, min(room, MAX_SKILL_BYTES)))
            room -= found[-1].size
        except (OSError, FolderError, ValueError) as e:
            problems.append(f"skill {name!r} is left out: {e}")
    if len(names) > MAX_LOCAL_SKILLS:
        problems.append(f"{root}: only its first {MAX_LOCAL_SKILLS} skills are offered")
    return found, problems


def _read_skill(name: str, folder: str, limit: int) -> LocalSkill:
    """One skill folder, every file of it read once (links and devices refused, at most `limit` bytes)."""
    files, text, total = {}, None, 0
    for path in _walk(folder):
        if looks_secret(path):  # a key or a .env beside a skill is never a file of it: the model reads those
            continue
        if len(files) >= MAX_SKILL_FILES:
            raise ValueError(f"over {MAX_SKILL_FILES} files")
        data = read_inside(path, limit - total, root=folder)
        if data is None:
            raise FolderError(f"{path} went away while it was read")
        total += len(data)
        files[path] = (len(data), digest_of(data))
        text = data if path == "SKILL.md" else text
    if text is None:
        raise ValueError("it has no SKILL.md")
    try:
        front, _ = split(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"SKILL.md: {e}") from None
    if front.get("name") != name or not isinstance(front.get("description"), str) or not front["description"]:
        raise ValueError(f"its SKILL.md must name it {name!r} and have a description")
    return LocalSkill(name, front["description"], folder, text, files, front)


def _walk(folder: str) -> list[str]:
    """The paths of a skill folder's files (relative, in order), its folders followed at most MAX_DEPTH deep and
    MAX_ENTRIES entries in all; a link is refused (FolderError), as a skill's files are its own."""
    found, seen, stack = [], 0, [("", 0)]
    while stack:
        relative, depth = stack.pop()
        with os.scandir(os.path.join(folder, relative)) as listing:
            entries = sorted(listing, key=lambda entry: entry.name, reverse=True)
        seen += len(entries)
        if seen > MAX_ENTRIES or depth > MAX_DEPTH:
            raise ValueError(f"over {MAX_ENTRIES} entries or {MAX_DEPTH} folders deep")
        for entry in entries:
            path = os.path.join(relative, entry.name)
            if entry.is_symlink():
                raise FolderError(f"{path} is a link; a skill's files are its own")
            if entry.is_dir(follow_symlinks=False):
                stack.append((path, depth + 1))
            else:
                found.append(path)
    return sorted(found)
