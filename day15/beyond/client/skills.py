"""Beyond the tutorial: skills a server serves (the extension io.modelcontextprotocol/skills, SEP-2640),
as methods of the full client (session.py's Session takes them in as ServedSkills).

A skill is a SKILL.md and its files, each a resource. skills/list and skills/get give each skill's
entry: its front matter, and every file's URI, SHA-256 digest and size. Nothing of a skill is read
before it is loaded (not at connect, not on listing); load_skill reads SKILL.md alone and checks its
size, its digest, then its front matter against the entry, field by field; read_skill_file reads only
what the entry it was loaded from lists, checked the same way. What fails a check is never used: the
entry is asked for again (skills/get, once) and the error names the check, the URI and both values.
Digests prove the server consistent, not trustworthy: the agent's half (beyond/skills/) asks the user.
"""
import base64
import binascii
import json
import posixpath
import re

from beyond.client.capabilities import METHOD_NOT_FOUND
from beyond.client.content import MAX_LISTED_BYTES
from beyond.client.errors import ReplyError, ServerError
from beyond.client.frontmatter import split
from beyond.client.frontmatter_values import differences
from beyond.client.skill_entries import SKILLS, MAX_SKILL_FILES, SkillEntry, SkillFile, checked_entry, digest_of
from beyond.text import clean, shorten
from beyond.waits import Call
from mcp import McpError

# One listing reads at most this many entries and pages (and MAX_LISTED_BYTES, as tools/list): a server's
# catalog cannot fill memory; of the entries left out, the first MAX_PROBLEMS are said.
MAX_LISTED_SKILLS = 2000
MAX_SKILL_PAGES = 100
MAX_PROBLEMS = 20
# A resource URI that looks like a skill's SKILL.md (a hint only: a skill is what skills/list or skills/get says).
SKILL_URI = re.compile(r"[a-z][a-z0-9+.-]*://\S+/SKILL\.md")


class SkillRefused(ServerError):
    """A skill, or one of its files, that is not used: over the limits, served dynamically, not listed,
    or failing a check. The message names the check, the URI and both values."""


class ServedSkills:
    """The extension's methods of a Session (requests.Requests): self.request, self.capabilities, self.name,
    self.log. `skill_cache`, if given, keeps verified files: get(uri, digest) -> bytes or None (checked again
    on every use), put(uri, digest, data)."""

    def __init__(self, *args, skill_cache=None, **kwargs) -> None:
        self.skills: dict[str, SkillEntry] = {}  # skill URI -> its entry, as last listed or got
        self.skill_problems: list[str] = []  # why entries of the last listing were left out
        self.loaded_skills: dict[str, SkillEntry] = {}  # skill URI -> the entry it was loaded from: its files
        self.skill_cache = skill_cache  # where verified files are kept (beyond/skills/cache.py), if anywhere
        super().__init__(*args, **kwargs)

    def serves_skills(self) -> bool:
        """Whether the server declared the extension (initialize's capabilities, or server/discover's)."""
        extensions = self.capabilities.get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(SKILLS), dict)

    def list_skills(self) -> list[SkillEntry]:
        """Every page of skills/list, within one startupTimeout, MAX_LISTED_SKILLS entries and MAX_LISTED_BYTES
        in all; invalid entries are left out, with their reasons (the first MAX_PROBLEMS) in skill_problems."""
        self._declared("skills/list")
        found, problems, params, seen, size = [], [], {}, 0, 0
        call = Call.within(self.cfg.startup_timeout)  # the whole listing: a server cannot hold start-up page by page
        for _ in range(MAX_SKILL_PAGES):
            result = self.request("skills/list", params, call=call)
            page = result.get("skills")
            if not isinstance(page, list):
                raise ServerError("skills/list answered \"skills\" that is not a list", self.name)
            size += len(json.dumps(page))
            if size > MAX_LISTED_BYTES:
                raise ServerError(f"skills/list answered over {MAX_LISTED_BYTES >> 20} MB in its pages; refused",
                                  self.name)
            for raw in page[:MAX_LISTED_SKILLS - seen]:
                try:
                    found.append(checked_entry(raw))
                except ValueError as e:
                    problems.append(f"skills/list: left out {e}")
            seen += len(page)
            if not result.get("nextCursor"):
                break
            if seen >= MAX_LISTED_SKILLS:
                problems.append(f"skills/list: only its first {MAX_LISTED_SKILLS} entries are read")
                break
            params = {"cursor": result["nextCursor"]}
        else:
            problems.append(f"skills/list: only its first {MAX_SKILL_PAGES} pages are read")
        more = len(problems) - MAX_PROBLEMS
        self.skills = {entry.uri: entry for entry in found}
        self.skill_problems = problems[:MAX_PROBLEMS] + [f"skills/list: and {more} more left out"] * (more > 0)
        return found

    def get_skill(self, uri: str) -> SkillEntry:
        """skills/get: one skill's entry, by the URI of its SKILL.md (a listing may be partial); held from now on."""
        self._declared("skills/get")
        result = self.request("skills/get", {"uri": uri})
        try:
            entry = checked_entry(result.get("skill"))
        except ValueError as e:
            raise ServerError(f"skills/get {shorten(uri, 100)}: no usable skill in the answer ({e})", self.name) \
                from None
        if entry.uri != uri:
            raise ServerError(f"skills/get {shorten(uri, 100)} answered another skill ({shorten(entry.uri, 100)})",
                              self.name)
        self.skills = {**self.skills, uri: entry}
        return entry

    def load_skill(self, uri: str, entry: SkillEntry | None = None) -> str:
        """The text of a skill's SKILL.md, checked against `entry` (the one the user approved; else the held
        one, else skills/get's): size, digest, then its front matter field by field. SkillRefused otherwise."""
        entry = entry or self.skills.get(uri) or self.get_skill(uri)
        why = entry.declined()
        if why:
            raise SkillRefused(why, self.name)
        data = self._verified(entry, next(f for f in entry.files if f.uri == entry.uri))
        try:
            text = data.decode("utf-8")
            parsed, _ = split(text)
        except (UnicodeDecodeError, ValueError) as e:
            self._refresh(entry.uri)
            raise SkillRefused(f"{shorten(uri, 200)} failed its front matter check: {shorten(str(e), 200)}; "
                               "not loaded", self.name) from None
        differ = differences(parsed, entry.frontmatter)
        if differ:
            self._refresh(entry.uri)
            key = differ[0].split(".")[0]
            raise SkillRefused(
                f"{shorten(uri, 200)} failed its front matter check ({', '.join(differ[:5])}): the entry says "
                f"{key}: {_value(entry.frontmatter.get(key))}, the file says {key}: {_value(parsed.get(key))}; "
                "not loaded", self.name)
        self.loaded_skills = {**self.loaded_skills, entry.uri: entry}
        return text

    def read_skill_file(self, skill_uri: str, path: str) -> bytes:
        """A file of a loaded skill: `path` relative to the skill's folder, or the file's URI; only what the entry
        the skill was loaded from lists (anything else fails without a request), checked by size and digest."""
        entry = self.loaded_skills.get(skill_uri)
        if entry is None:
            raise SkillRefused(f"{shorten(skill_uri, 200)} is not loaded: load the skill first", self.name)
        uri = resolved(entry, path)
        listed = next((f for f in entry.files if f.uri == uri), None)
        if listed is None:
            files = shorten(", ".join(_relative(entry, f.uri) for f in entry.files), 300)
            raise SkillRefused(f"{shorten(uri, 200)} is not a file of skill {entry.name} (its entry lists "
                               f"{len(entry.files)}: {files})", self.name)
        return self._verified(entry, listed)

    def read_skill_directory(self, uri: str) -> list[dict]:
        """resources/directory/read, where the server declared directoryRead: a folder's children as the server
        sees them now (never a file of a held entry: what an entry lists is what may be read)."""
        declared = self.capabilities.get("extensions", {}).get(SKILLS) if self.serves_skills() else None
        if not isinstance(declared, dict) or declared.get("directoryRead") is not True:
            raise ServerError("resources/directory/read: the server did not declare directoryRead", self.name)
        found, params = [], {"uri": uri}
        for _ in range(MAX_SKILL_PAGES):
            result = self.request("resources/directory/read", params)
            found += [r for r in result.get("resources") or [] if isinstance(r, dict)][:MAX_SKILL_FILES]
            if not result.get("nextCursor") or len(found) >= MAX_SKILL_FILES:
                return found[:MAX_SKILL_FILES]
            params = {"uri": uri, "cursor": result["nextCursor"]}
        return found

    # --- below: reading one file, checked ---------------------------------------------------------

    def _declared(self, method: str) -> None:
        if not self.serves_skills():
            raise ServerError(f"{method}: the server did not declare the skills extension", self.name)

    def _verified(self, entry: SkillEntry, listed: SkillFile) -> bytes:
        """The file's bytes, from the cache or read, checked by size then digest; never unchecked bytes."""
        cached = self.skill_cache.get(listed.uri, listed.digest) if self.skill_cache else None
        if cached is not None and len(cached) == listed.size:
            return cached
        data = raw_bytes(self.request("resources/read", {"uri": listed.uri}), listed.uri, self.name)
        check = None
        if len(data) != listed.size:
            check = f"size check: the entry says {listed.size:,} bytes, the file read has {len(data):,}"
        else:
            digest = digest_of(data)
            if digest != listed.digest:
                check = f"digest check: the entry says {listed.digest[:19]}, the file read is {digest[:19]}"
        if check:
            self._refresh(entry.uri)
            raise SkillRefused(f"{shorten(listed.uri, 200)} failed its {check}; not used", self.name)
        if self.skill_cache:
            self.skill_cache.put(listed.uri, listed.digest, data)
        return data

    def _refresh(self, uri: str) -> None:
        """After a failed check: the entry asked for again (once), so a change is seen as one; its failure is
        only logged."""
        try:
            self.get_skill(uri)
        except McpError as e:
            self.log(f"skills/get {shorten(uri, 100)} after a failed check: {e}")


def resolved(entry: SkillEntry, path: str) -> str:
    """A file's URI: a URI as it is, a relative path against the skill's folder (never above it)."""
    if "://" in path:
        return path
    plain = posixpath.normpath(path.replace("\\", "/"))
    if plain.startswith(("/", "..")) or plain == ".":
        raise SkillRefused(f"{shorten(path, 100)}: a path within the skill's folder is wanted", "")
    return f"{entry.root}/{plain}"


def raw_bytes(result: dict, uri: str, server: str) -> bytes:
    """The bytes a resources/read answered for `uri`: its text as UTF-8, or its blob decoded."""
    contents = [c for c in result.get("contents") or [] if isinstance(c, dict)]
    item = next((c for c in contents if c.get("uri") == uri), contents[0] if contents else None)
    if item is not None and isinstance(item.get("text"), str):
        return item["text"].encode("utf-8", "surrogatepass")
    try:
        if item is not None and isinstance(item.get("blob"), str):
            return base64.b64decode(item["blob"], validate=True)
    except binascii.Error:
        pass  # said below, as no content
    raise ServerError(f"resources/read {shorten(uri, 100)}: no text or blob in the answer", server)


def _relative(entry: SkillEntry, uri: str) -> str:
    return uri[len(entry.root) + 1:] if uri.startswith(entry.root + "/") else uri


def _value(value: object) -> str:
    return "(absent)" if value is None else shorten(clean(str(value), one_line=True), 80)


def is_method_missing(error: McpError) -> bool:
    return isinstance(error, ReplyError) and error.code == METHOD_NOT_FOUND
