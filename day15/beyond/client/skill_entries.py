"""Beyond the tutorial: a skill's entry, as skills/list and skills/get give it (SEP-2640), checked before the
client holds it: the URI of its SKILL.md, its front matter (name and description at least), and every file
with its URI, SHA-256 digest and size, or "dynamic". The extension's limits are checked from it alone.
"""
import hashlib
import json
import re
from dataclasses import dataclass

from beyond.text import shorten

SKILLS = "io.modelcontextprotocol/skills"
# The extension's own limits: every host loads a skill of up to 512 files and 16 MiB in all; a bigger one
# is declined from its entry alone, before any of it is read.
MAX_SKILL_FILES = 512
MAX_SKILL_BYTES = 16 << 20
# A file's digest, as the extension writes it.
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
DYNAMIC = "dynamic"
# A skill's name, as the Agent Skills format has it: 1-64 lowercase letters, digits and single hyphens. A name
# is shown as server:name: one with a colon or a slash could pass for another server's skill.
NAME = re.compile(r"(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*")
# An entry's front matter as JSON takes at most this many bytes (a SKILL.md's is read up to as much).
MAX_FRONTMATTER_JSON = 64 << 10


@dataclass(frozen=True)
class SkillFile:
    uri: str
    digest: str
    size: int


@dataclass(frozen=True)
class SkillEntry:
    """One skill's entry as the server sent it, checked: files is None for a skill served dynamically; count is
    how many files it lists (over MAX_SKILL_FILES, none of them is kept: it is declined)."""
    uri: str
    frontmatter: dict
    files: tuple[SkillFile, ...] | None
    count: int = 0

    @property
    def name(self) -> str:
        return self.frontmatter["name"]

    @property
    def description(self) -> str:
        return self.frontmatter["description"]

    @property
    def root(self) -> str:
        """The skill's folder: its SKILL.md's URI without /SKILL.md."""
        return self.uri[:-len("/SKILL.md")]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files or ())

    def digest_set(self) -> list[list[str]]:
        """Every file's {uri, digest}, sorted: what an approval is bound to."""
        return sorted([f.uri, f.digest] for f in self.files or ())

    def declined(self) -> str | None:
        """Why the skill is not loaded whatever the user says (served dynamically, over a limit); None if it may be."""
        if self.files is None:
            return (f"{self.name} serves its files dynamically: they cannot be verified, so it is not loaded")
        if self.count > MAX_SKILL_FILES:
            return f"{self.name} has {self.count:,} files; skills of at most {MAX_SKILL_FILES} are loaded"
        if self.size > MAX_SKILL_BYTES:
            return f"{self.name} has {self.size:,} bytes of files; skills of at most {MAX_SKILL_BYTES:,} are loaded"
        return None


def checked_entry(raw: object) -> SkillEntry:
    """An entry of skills/list or skills/get as the extension shapes it; ValueError saying what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError("an entry that is not an object")
    uri, front, files = raw.get("uri"), raw.get("frontmatter"), raw.get("resources")
    if not isinstance(uri, str) or not uri.endswith("/SKILL.md") or "://" not in uri or len(uri) > 2000:
        raise ValueError(f"uri {shorten(repr(uri), 100)} is not the URI of a SKILL.md")
    if not isinstance(front, dict) or not all(isinstance(front.get(k), str) and front.get(k) for k in
                                              ("name", "description")):
        raise ValueError(f"{shorten(uri, 100)}: its frontmatter lacks a name or a description")
    if not NAME.fullmatch(front["name"]):
        raise ValueError(f"{shorten(uri, 100)}: its name {shorten(front['name'], 60)!r} is not a skill's name "
                         "(lowercase letters, digits, hyphens)")
    if len(json.dumps(front)) > MAX_FRONTMATTER_JSON:
        raise ValueError(f"{shorten(uri, 100)}: its frontmatter is over {MAX_FRONTMATTER_JSON >> 10} KiB")
    if uri.rsplit("/", 2)[-2] != front["name"]:
        raise ValueError(f"{shorten(uri, 100)}: its folder is not named {shorten(front['name'], 60)!r}, as its "
                         "frontmatter says")
    if files == DYNAMIC:
        return SkillEntry(uri, front, None)
    if not isinstance(files, list):
        raise ValueError(f"{shorten(uri, 100)}: resources is neither a list of files nor \"dynamic\"")
    if len(files) > MAX_SKILL_FILES:  # listed, to be declined with its count; none of its files is kept
        return SkillEntry(uri, front, (), len(files))
    listed = tuple(_checked_file(f, uri) for f in files)
    if uri not in {f.uri for f in listed}:
        raise ValueError(f"{shorten(uri, 100)}: its resources do not list its SKILL.md")
    if len({f.uri for f in listed}) < len(listed):
        raise ValueError(f"{shorten(uri, 100)}: its resources list a file twice")
    return SkillEntry(uri, front, listed, len(listed))


def _checked_file(raw: object, skill: str) -> SkillFile:
    root = skill[:-len("SKILL.md")]
    if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str) or not isinstance(raw.get("digest"), str) \
            or not isinstance(raw.get("size"), int) or isinstance(raw.get("size"), bool) or raw["size"] < 0:
        raise ValueError(f"{shorten(skill, 100)}: a file without a uri, digest and size")
    if not DIGEST.fullmatch(raw["digest"]):
        raise ValueError(f"{shorten(skill, 100)}: {shorten(raw['uri'], 100)} has a digest that is not sha256:<hex>")
    if not raw["uri"].startswith(root) or "/../" in raw["uri"] + "/":
        raise ValueError(f"{shorten(skill, 100)}: {shorten(raw['uri'], 100)} is not within the skill's folder")
    return SkillFile(raw["uri"], raw["digest"], raw["size"])


def digest_of(data: bytes) -> str:
    """A file's digest as the extension writes it: sha256: and 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
