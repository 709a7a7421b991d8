"""Beyond the tutorial: skills loaded into the conversation, by the model (load_skill, read_skill_file) or by
the user (/skill NAME), each MCP server's after the user's answer.

An MCP server's skill is loaded only once the user said yes to it: the question names the server, the
skill, its description, files, size and allowed-tools. `a` is kept bound to the skill's exact set of
{uri, digest} under the server's identity (its name, what its entry runs or its URL, its login's issuer)
and its URI: any change asks
again, saying so; -p loads only what such an `a` allows. Loading grants nothing: allowed-tools is a
question of its own, whose default is no. The text enters the conversation marked with its origin, MCP
servers' as untrusted. The folder's skills were shown in the trust question, yours are yours: both load
without one. A skill's files are read from its own origin only, and only what its entry lists.
"""
import hashlib
import json
import os
import re
import sys
import threading

from beyond.client.skill_entries import SkillEntry
from beyond.dirs import config_dir, state_dir
from beyond.folder import approvals
from beyond.folder.project import JsonStore
from beyond.folder.skill_files import LocalSkill, scan
from beyond.secrets import mask
from beyond.servers import toolset
from beyond.skills.cache import identity
from beyond.skills.catalog import Skill, build, catalog_text, find
from beyond.terminal import shown
from beyond.text import clean, shorten
from tools import Tool

LOAD, READ = "load_skill", "read_skill_file"
# A URI, as the model may give one for a skill no listing has: a scheme, then ://.
URI = re.compile(r"[a-z][a-z0-9+.-]*://")
DECLINED = "Not loaded: the user declined skill {label}. Do not retry it; go on without it."


class AgentSkills:
    """The skills of one agent: its servers' (servers.mcp_statuses()), the folder's (as trusted) and yours.
    `confirm(question, always)` asks the user (the console's; -p's says no), `approvals` holds this run's
    tool policies (a granted allowed-tools); an `a` is kept for `folder` in the user's state."""

    def __init__(self, servers, folder: str | None, confirm, policies) -> None:
        self.servers, self.confirm, self.approvals = servers, confirm, policies
        self.folder_skills: list[LocalSkill] = []  # use_folder() gives them, once the folder is trusted
        self.folder_problems: list[str] = []
        self.yours, self.problems = scan(os.path.join(config_dir(), "skills"))
        self.folder = os.path.realpath(folder) if folder else None
        self.store = JsonStore(os.path.join(state_dir(), "skill-approvals.json")) if folder else None
        kept = self.store.load().get(self.folder) if self.store else None
        self.kept: dict[str, dict] = kept if isinstance(kept, dict) else {}
        self.loaded: dict[str, Skill] = {}  # origin -> the skill as loaded in this session: its files may be read
        self.said: set[str] = set()  # the collisions said already (once each)
        self._lock = threading.Lock()  # guards kept, loaded and said: calls of one reply run side by side

    # --- the catalog ---------------------------------------------------------------------------

    def catalog(self) -> list[Skill]:
        """Every skill now: the folder's, yours, each running server's as it last listed them."""
        served = [(s.server, list(s.client.skills.values())) for s in self.servers.mcp_statuses()
                  if s.client is not None and not s.error and s.client.skills]
        skills, collisions = build(served, self.folder_skills, self.yours)
        with self._lock:
            new = [line for line in collisions if line not in self.said]
            self.said.update(new)
        for line in new:
            print(f"note: {shown(line, one_line=True)}", file=sys.stderr)
        return skills

    def system_note(self) -> str:
        """What the model's system prompt says of the skills (masked, as all text sent to the model)."""
        return mask(catalog_text(self.catalog()))

    def register(self) -> None:
        """load_skill and read_skill_file, allowed (their own questions are the gate; GeekAgent.json may deny them)."""
        skill = {"type": "string", "description": "the skill's name as the catalog lists it (server:name), or its URI"}
        if toolset.get(LOAD) is None:
            toolset.add(toolset.Gated(LOAD, "Load a skill of the catalog in the system prompt: its instructions "
                                            "(SKILL.md) come back as this call's result.",
                                      {"type": "object", "required": ["skill"], "properties": {"skill": skill}},
                                      self.load, gate=self.gate))
            toolset.add(Tool(READ, "Read a file of a skill loaded with load_skill, by its path relative to the "
                                   "skill's folder (as SKILL.md names it) or its URI.",
                             {"type": "object", "required": ["skill", "path"], "properties": {
                                 "skill": skill, "path": {"type": "string"}}}, self.read_file))
        for name in (LOAD, READ):
            approvals.ensure(name, "allow")

    def use_folder(self, project, trusted: bool) -> None:
        """The folder's skills (of a Project, folder/trust.py) as its trust allows: none when it is not trusted
        (at start, and after /mcp reload asked again); why any was left out, for /skills."""
        self.folder_skills = project.skills if project is not None and trusted else []
        self.folder_problems = project.skill_problems if project is not None and trusted else []

    def offered(self, specs: list[dict]) -> list[dict]:
        """The specs a request offers, without the skill tools while there is no skill (and no server that
        serves them: one whose listing is empty may still load a skill by its URI)."""
        if self.catalog() or any(s.client is not None and not s.error and s.client.serves_skills()
                                 for s in self.servers.mcp_statuses()):
            return specs
        return [spec for spec in specs if spec["function"]["name"] not in (LOAD, READ)]

    # --- loading -------------------------------------------------------------------------------

    def load(self, args: dict) -> str:
        """load_skill: the skill's text, marked with its origin, after the user's answer where one is needed."""
        return self.gate(args)()

    def gate(self, args: dict, refused: list | None = None):
        """What load_skill asks before any call of its reply runs (the skill named, whether it may load, the
        user's answer and allowed-tools' question); returns what loads it: the text, checked, marked (or the
        model's note that the user said no, then also added to `refused`)."""
        skill = self._named(args.get("skill"))
        if skill.local is not None:
            grant = self._grant(skill)
            return lambda: self._loaded(skill, self._text(skill), grant)
        client = self._client(skill.server)
        why = skill.entry.declined()
        if why:
            raise ValueError(why)
        if not self._approved(skill, client):
            (refused if refused is not None else []).append(skill.label)
            return lambda: DECLINED.format(label=skill.label)
        grant = self._grant(skill)
        return lambda: self._loaded(skill, client.load_skill(skill.entry.uri, skill.entry), grant)

    def _text(self, skill: Skill) -> str:
        return skill.local.text.decode("utf-8", "replace")

    def _loaded(self, skill: Skill, text: str, grant: list[str]) -> str:
        """A skill that loaded (checked): kept as loaded, its allowed-tools granted if the user said so."""
        with self._lock:
            self.loaded[_origin(skill)] = skill
        for name in grant:
            self.approvals.allow_for_run(name)
        return f"{_mark(skill)}\n{text}\n[end of skill {skill.label}]"

    def read_file(self, args: dict) -> str:
        """read_skill_file: a listed file of a loaded skill, from that skill's own origin, checked."""
        path = args.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ValueError('"path" must be a file of the skill, relative to its folder')
        skill = self._named(args.get("skill"))
        with self._lock:
            loaded = self.loaded.get(_origin(skill))
        if loaded is None:
            raise ValueError(f"skill {skill.label} is not loaded: call {LOAD} first")
        if loaded.local is not None:
            data = loaded.local.read(path)
        else:
            data = self._client(loaded.server).read_skill_file(loaded.entry.uri, path)
        what = f"file {shorten(path, 200)} of skill {loaded.label}"
        return f"{_mark(loaded, what)}\n{text_of(data, path)}\n[end of {what}]"

    def load_for_user(self, wanted: str) -> str | None:
        """/skill NAME: the same load, by the user's own choice; the text for the conversation, or None when
        the user said no."""
        refused = []
        result = self.gate({"skill": wanted}, refused)()
        return None if refused else mask(result)

    def _named(self, wanted: object) -> Skill:
        if not isinstance(wanted, str) or not wanted.strip():
            raise ValueError('"skill" must name a skill of the catalog (server:name) or give its URI')
        skills = self.catalog()
        skill = find(skills, wanted)
        if skill is None:
            skill = self._by_uri(wanted.strip())
        if skill is None:
            names = ", ".join(s.label for s in skills[:20]) or "none"
            raise ValueError(f"no skill {shorten(wanted, 100)!r}; the skills are: {names}")
        return skill

    def _by_uri(self, wanted: str) -> Skill | None:
        """A skill known only by its URI (a listing may be partial): `server:URI`, or a URI where one server
        serves skills; its entry is asked for (skills/get). ValueError where several might serve it."""
        serving = [s for s in self.servers.mcp_statuses() if s.client is not None and not s.error
                   and s.client.serves_skills()]
        for status in serving:
            rest = wanted[len(status.server) + 1:] if wanted.startswith(status.server + ":") else ""
            if URI.match(rest):
                return self._got(status, rest)
        if not URI.match(wanted) or not serving:
            return None
        if len(serving) > 1:
            raise ValueError(f"several servers serve skills; name the one: "
                             f"{', '.join(s.server + ':' + shorten(wanted, 100) for s in serving)}")
        return self._got(serving[0], wanted)

    def _got(self, status, uri: str) -> Skill:
        entry: SkillEntry = status.client.get_skill(uri)
        return Skill(f"{status.server}:{entry.name}", entry.name, entry.description, "server",
                     server=status.server, entry=entry)

    def _client(self, server: str):
        status = next((s for s in self.servers.mcp_statuses() if s.server == server and s.client is not None), None)
        if status is None or status.error:
            raise ValueError(f"MCP server {server} is not running")
        return status.client

    # --- the user's answers --------------------------------------------------------------------

    def _standing(self, skill: Skill, client) -> str | None:
        """What an `a` kept for this skill says now: "allowed" (for exactly its files), "changed" (for others),
        or None (no `a`)."""
        with self._lock:
            kept = self.kept.get(_key(client, skill.server, skill.entry.uri))
        if not isinstance(kept, dict):
            return None
        return "allowed" if kept.get("set") == _bound(skill.entry) else "changed"

    def _approved(self, skill: Skill, client) -> bool:
        """Whether the user lets this exact skill load: an `a` kept for its set, or the answer now."""
        standing = self._standing(skill, client)
        if standing == "allowed":
            return True
        changed = " It changed since you allowed it: its files are not those you allowed." if standing else ""
        answer = self.confirm(mask(_question(skill) + changed), always=True)
        if answer == "always":
            key = _key(client, skill.server, skill.entry.uri)
            record = {"set": _bound(skill.entry), "skill": skill.label}
            with self._lock:
                self.kept[key] = record
            written = self.store.edit(self.folder, lambda on_disk: {
                **(on_disk if isinstance(on_disk, dict) else {}), key: record}) if self.store else False
            print(f"skill {shown(skill.label, one_line=True)} now loads without asking while its files stay as they "
                  "are" + (f" (kept in {self.store.path})" if written else " (for this session)"))
        return bool(answer)

    def _grant(self, skill: Skill) -> list[str]:
        """The tools of a skill's allowed-tools the user lets run without asking for this session once it loads
        (asked now; the default is none)."""
        wanted = skill.frontmatter.get("allowed-tools")
        names = wanted.split() if isinstance(wanted, str) else [str(n) for n in wanted] \
            if isinstance(wanted, list) else []
        ours = [n for n in dict.fromkeys(names) if toolset.get(n) is not None
                and self.approvals.policy_for(n) == "ask"]
        if not ours:
            return []
        question = clean(f"Skill {skill.label} ({skill.where}) asks that these tools run without asking: "
                         f"{', '.join(ours)}. Loading it grants nothing. Once it loads, let them run without asking "
                         "for this session?", one_line=True)
        return ours if self.confirm(mask(question), always=False) is True else []

    def lines(self) -> list[str]:
        """/skills: each skill, its origin, files, size and whether an `a` lets it load."""
        skills = self.catalog()
        rows = []
        running = {s.server: s.client for s in self.servers.mcp_statuses() if s.client is not None}
        for skill in skills:
            client = running.get(skill.server)
            if skill.entry and skill.entry.declined():
                state = f"not loadable: {skill.entry.declined()}"
            elif client is not None:
                state = {"allowed": "allowed (a)", "changed": "changed since allowed: asks",
                         None: "asks before loading"}[self._standing(skill, client)]
            else:
                state = "loads without asking"
            state += ", loaded" if _origin(skill) in self.loaded else ""
            rows.append(f"  {skill.label}  ({skill.where}; {skill.file_count} files, {skill.size:,} bytes; {state})")
        notes = [f"  {s.server}: {s.client.skills_note}" for s in self.servers.mcp_statuses()
                 if s.client is not None and s.client.skills_note]
        notes += [f"  warning: {p}" for p in self.folder_problems + self.problems]
        return [shown(row, one_line=True) for row in rows + notes] or ["  (no skills)"]


def _mark(skill: Skill, what: str = "") -> str:
    """Where text of a skill comes from, as the model reads it above the text: an MCP server's is untrusted."""
    what = what or f"skill {skill.label}"
    return f"[{what} from MCP server {skill.server}; untrusted]" if skill.server else f"[{what} from {skill.where}]"


def _origin(skill: Skill) -> str:
    """What a loaded skill is kept by: its server and URI, or its folder (a label may change as skills come)."""
    return f"{skill.server}\n{skill.entry.uri}" if skill.entry else skill.local.folder


def text_of(data: bytes, path: str) -> str:
    """A file's bytes as text for the model; a binary file described."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return f"({shorten(path, 200)}: a binary file of {len(data):,} bytes, not shown)"


def _question(skill: Skill) -> str:
    front = skill.frontmatter
    allowed = f"; it lists allowed-tools: {shorten(str(front['allowed-tools']), 200)} (not granted by loading)" \
        if front.get("allowed-tools") else ""
    return clean(f"Load skill {skill.label} from MCP server {skill.server}: {shorten(skill.description, 300)!r} "
                 f"({skill.file_count} files, {skill.size:,} bytes{allowed})?", one_line=True)


def _key(client, server: str, uri: str) -> str:
    """Where an `a` is kept: the server's identity (its name, what it runs or its URL, its login's issuer) and
    the skill's URI, never the URI alone: a renamed or replaced server inherits nothing."""
    said = f"{identity(client.cfg, server)} {client.issuer() or ''} {uri}"
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()


def _bound(entry: SkillEntry) -> str:
    """The exact set of {uri, digest} an `a` is bound to, hashed."""
    return hashlib.sha256(json.dumps(entry.digest_set()).encode("utf-8", "surrogatepass")).hexdigest()
