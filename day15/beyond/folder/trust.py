"""Beyond the tutorial: a folder's .geekagent/mcp.json, .env and GeekAgent.json take effect only
once the user trusts them (the .env file itself is beyond the tutorial too).

The tutorial starts every server in mcp.json and reads .env, so starting the agent in a cloned
folder would run that folder's commands, and a .env could send your API key to another host.
Here the three files are read once (Project), and what the question shows is built from the same
parsed entries that start the servers: every
command line or URL, every key the .env sets (those that change how programs run set apart), every
tool GeekAgent.json allows unasked. The answer is kept, with a hash of each file, in the user's
config directory ($XDG_CONFIG_HOME/geekagent/), never in the folder: a changed mcp.json or .env
asks again, and so does a GeekAgent.json that allows more. Without a terminal nothing is asked:
--trust or GEEKAGENT_TRUST=1 trusts for one run. The user's own mcp.json
($XDG_CONFIG_HOME/geekagent/mcp.json, servers for every folder) needs no trust.
"""
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field

import permissions
from beyond.client.roots import roots_of
from beyond.folder.dotenv import DOTENV_PATH, parse_dotenv
from beyond.client.config import MCP_CONFIG_PATH, ServerConfig, load_mcp_config
from beyond.dirs import FolderError, LinkOutside, config_dir, decode_json, read_inside
from beyond.folder.project import JsonStore
from beyond.folder.question import DISABLED, summary, what_runs
from beyond.folder.skill_files import SKILLS_FOLDER, LocalSkill, folder_skills
from beyond.text import clean
from beyond.wire.sandbox import insist
from mcp import McpError

# The files a folder's trust covers, relative to the folder; a change to the first two asks again.
TRUSTED_FILES = (MCP_CONFIG_PATH, DOTENV_PATH, permissions.POLICY_PATH)
# .env keys a folder may not set at all: where the agent finds its own files (the user's own mcp.json,
# the trust record, the logins), how it behaves, and which certificates it trusts. Refused, and named.
REFUSED_SETTING = re.compile(r"XDG_.*|HOME|GEEKAGENT_.*|SSL_CERT_FILE|SSL_CERT_DIR", re.IGNORECASE)
@dataclass
class Project:
    """The folder's config files as read once at start-up: the bytes that are hashed, shown and used."""
    folder: str
    files: dict[str, bytes | None] = field(default_factory=dict)    # path -> bytes; None when missing
    problems: dict[str, str] = field(default_factory=dict)          # path -> why it is not used
    links: set[str] = field(default_factory=set)                    # the paths that are links out of the folder
    sandbox: bool = False   # --sandbox: every stdio entry confined, shown so in the question (wire/sandbox.py)
    parsed: dict[str, ServerConfig] | None = None  # mcp.json's entries, parsed once: shown, then started
    skills: list[LocalSkill] = field(default_factory=list)  # .geekagent/skills/, read once: shown, then loaded
    skill_problems: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, folder: str = ".", sandbox: bool = False) -> "Project":
        project = cls(os.path.realpath(folder), sandbox=sandbox)
        for path in TRUSTED_FILES:
            try:
                project.files[path] = read_inside(path, root=folder)
            except FolderError as e:
                project.files[path], project.problems[path] = None, str(e)
                if isinstance(e, LinkOutside):
                    project.links.add(path)
        project.skills, project.skill_problems = folder_skills(project.folder)
        return project

    def skill_digests(self) -> dict[str, str]:
        """Each skill of the folder's, by name: one digest of all its files (what trust is bound to)."""
        return {skill.name: skill.digest() for skill in self.skills}

    def digest(self, path: str) -> str | None:
        data = self.files.get(path)
        return None if data is None else hashlib.sha256(data).hexdigest()

    def servers(self) -> dict[str, ServerConfig]:
        """The parsed mcpServers entries (what the question shows and what starts); McpError if unusable."""
        if MCP_CONFIG_PATH in self.problems:
            raise McpError(self.problems[MCP_CONFIG_PATH])
        if self.parsed is None:
            raw = self.files[MCP_CONFIG_PATH]
            self.parsed = {} if raw is None else load_mcp_config(MCP_CONFIG_PATH, raw)
            for config in self.parsed.values():
                config.folder_entry = True  # its roots are held to the folder's bounds (client/roots.py)
                config.shown_roots = roots_of(config, self.folder)  # resolved once: what the question shows
            if self.sandbox:
                insist(self.parsed)
        return self.parsed

    def entries(self) -> dict[str, str]:
        """What each entry runs, as the question shows it; McpError if mcp.json cannot be used."""
        return {name: what_runs(config, self.folder) for name, config in self.servers().items()}

    def policies(self) -> dict[str, str]:
        """GeekAgent.json's tool policies; PolicyError when it cannot be used (it never silently widens access)."""
        if permissions.POLICY_PATH in self.links:  # a policy file meant to be somewhere else: never ignored in silence
            raise permissions.PolicyError(self.problems[permissions.POLICY_PATH])
        if permissions.POLICY_PATH in self.problems:
            return {}  # a folder, unreadable: it allows nothing (the agent says so in one line)
        raw = self.files[permissions.POLICY_PATH]
        if raw is None:
            return {}
        try:
            data = decode_json(permissions.POLICY_PATH, raw)
        except ValueError as e:
            raise permissions.PolicyError(str(e)) from None
        return checked_policies(permissions.POLICY_PATH, data)

    def allows(self) -> list[str]:
        """The tools GeekAgent.json lets run unasked beyond the built-in defaults (none when it is broken)."""
        try:
            policies = self.policies()
        except permissions.PolicyError:
            return []  # reported when the policies are loaded; it allows nothing
        return sorted(name for name, value in policies.items()
                      if value == "allow" and permissions.DEFAULT_POLICIES.get(name) != "allow")

    def dotenv(self) -> tuple[dict[str, str], list[str]]:
        """The .env settings that may take effect, and what is wrong with the file (refused keys named)."""
        if DOTENV_PATH in self.problems:
            return {}, [self.problems[DOTENV_PATH]]
        settings, warnings = parse_dotenv(self.files[DOTENV_PATH], DOTENV_PATH)
        refused = [key for key in settings if REFUSED_SETTING.fullmatch(key)]
        warnings += [f"{DOTENV_PATH} may not set {key}: it would move the agent's own files or what it trusts; "
                     "refused" for key in refused]
        return {k: v for k, v in settings.items() if k not in refused}, warnings


def store() -> JsonStore:
    """Where the answers are kept: the user's config directory, never the folder itself."""
    return JsonStore(os.path.join(config_dir(), "trusted-folders.json"))


def trusted(project: Project) -> bool:
    """Whether the folder's files take effect without a question: nothing to trust, or trusted as they are
    (a look: nothing is asked, said or kept)."""
    return _nothing_to_trust(project) or _as_trusted(project)[0]


def _nothing_to_trust(project: Project) -> bool:
    return not project.allows() and not project.skills and \
        all(project.files[p] is None and p not in project.problems for p in TRUSTED_FILES[:2])


def _as_trusted(project: Project) -> tuple[bool, list[str], dict | None, list[str], list[str], dict | None]:
    """(whether what the files say now is what was trusted, the tools allowed, the record kept, the allowed
    ones new since, the files changed since, what each entry runs)."""
    allows, record = project.allows(), _record(project)
    new = allows if record is None else [name for name in allows if name not in _allowed_before(record)]
    changed = [] if record is None else [p for p in TRUSTED_FILES[:2]
                                         if record["files"].get(p, "-") != project.digest(p)]
    if record is not None and record.get("skills", {}) != project.skill_digests():
        changed.append(SKILLS_FOLDER)
    entries = _entries(project)
    same = record is not None and not new and set(changed) <= {MCP_CONFIG_PATH} \
        and _runs_as_trusted(entries, record, changed)
    return same, allows, record, new, changed, entries


def decide(project: Project, trust_now: bool, ask) -> bool:
    """Whether the folder's files may take effect: nothing to trust, --trust, trusted as they are, or asked
    (`ask` takes the question and returns the answer; None without a terminal)."""
    if _nothing_to_trust(project) or trust_now:
        return True
    same, allows, record, new, changed, entries = _as_trusted(project)
    if same:
        if changed:
            _remember(project, allows, record, entries)
        return True
    if not entries and project.files[DOTENV_PATH] is None and not allows and not project.skills:  # nothing to ask
        if entries is None:
            print("\n".join(summary(project)))
        return entries is not None
    if ask is None:
        _say(f"{clean(project.folder, one_line=True)}: its .geekagent/mcp.json, .env and GeekAgent.json are not "
             "trusted" + (" since they changed" if record else " yet") + ", so none of its servers starts and .env "
             "is not read. "
             "Start the agent in a terminal to review them, or pass --trust (or set GEEKAGENT_TRUST=1) to trust "
             "them for this run.")
        return False
    return _asked(project, ask, allows, record, entries, new, changed)


def _asked(project: Project, ask, allows: list[str], record: dict | None, entries: dict | None, new: list[str],
           changed: list[str]) -> bool:
    """The question, with what is new or changed since the folder was trusted; the answer is kept."""
    reread = [f"  what {MCP_CONFIG_PATH} runs is not what you trusted (a sandbox's grants, or what a path leads to)"]
    print("\n".join(summary(project, new if record else ()) + [f"  {p} changed since you trusted this folder"
                                                               for p in changed]
                     + (reread if record and not changed and not new else [])))
    if not ask(f"Trust this folder: {_what_trust_does(project, allows, entries)}?"):
        print("Not trusted: none of its servers starts, .env is not read and GeekAgent.json allows nothing.")
        return False
    _remember(project, allows, record, entries)
    return True


def forget_trust(folder: str) -> bool:
    """The trust answer kept for a folder, forgotten (mcp reset-project-choices); whether there was one."""
    return store().forget(os.path.realpath(folder))


def reaffirm(project: Project, name: str) -> None:
    """The entry `name`, which this session disabled, is enabled again unchanged (repl/reload.py checks that):
    keep the folder as trusted with it, if nothing else differs from what was trusted (.env, tools allowed,
    skills, every other entry); else nothing is kept, and the question asks as it would."""
    record, entries = _record(project), _entries(project)
    kept = record.get("entries") if record else None
    if not isinstance(kept, dict) or entries is None or record["files"].get(DOTENV_PATH, "-") != \
            project.digest(DOTENV_PATH) or set(project.allows()) - set(_allowed_before(record)) or \
            record.get("skills", {}) != project.skill_digests():
        return
    if all(kept.get(other) == runs or runs == DISABLED for other, runs in entries.items() if other != name) \
            and kept.get(name) in (DISABLED, entries.get(name)):
        _remember(project, project.allows(), record, entries)


def _record(project: Project) -> dict | None:
    """What was kept when the folder was last trusted (None: never, or not usable)."""
    record = store().load().get(_key(project))
    return record if isinstance(record, dict) and isinstance(record.get("files"), dict) else None


def checked_policies(path: str, data: object) -> dict[str, str]:
    """GeekAgent.json's tool policies, the whole file checked before any of it takes effect, so a typo never
    widens access (as the lesson's load_policies checks them); PolicyError naming the file and the key."""
    if not isinstance(data, dict):
        raise permissions.PolicyError(f"{path}: the top level must be a JSON object")
    tools = data.get("tools", {})
    if not isinstance(tools, dict):
        raise permissions.PolicyError(f"{path}: \"tools\" must be an object of tool name -> allow/ask/deny")
    for name, value in tools.items():
        if value not in permissions.POLICIES:
            raise permissions.PolicyError(f"{path}: tools.{name} must be \"allow\", \"ask\" or \"deny\", "
                                          f"not {value!r}")
    return tools


def _key(project: Project) -> str:
    """Where the answer is kept: per folder (an answer kept for a client this agent no longer has, under
    the folder's name and more, is never read)."""
    return project.folder


def _runs_as_trusted(entries: dict | None, record: dict, changed: list[str]) -> bool:
    """Whether what mcp.json runs, read now, was shown when the folder was trusted: each entry as it was, or
    disabled since (fewer servers, or the same written otherwise)."""
    kept = record.get("entries")
    if entries is None or not isinstance(kept, dict):
        return not changed  # unusable now, or trusted before entries were kept: only as it was
    return all(kept.get(name) == runs or runs == DISABLED for name, runs in entries.items())


def _entries(project: Project) -> dict[str, str] | None:
    """What each of the folder's entries runs, as the question shows it; None when mcp.json cannot be used."""
    try:
        return project.entries()
    except McpError:
        return None


def _remember(project: Project, allows: list[str], record: dict | None, entries: dict | None) -> None:
    """Keep what was trusted: the files' digests, what each entry runs, the tools allowed."""
    store().update(_key(project), {"files": {p: project.digest(p) for p in TRUSTED_FILES[:2]},
                                    "entries": entries or {}, "skills": project.skill_digests(),
                                    "allows": sorted(set(allows) | set(_allowed_before(record)))})


def _what_trust_does(project: Project, allows: list[str], entries: dict | None) -> str:
    parts = [what for path, what in ((MCP_CONFIG_PATH, "start these servers"), (DOTENV_PATH, "use this .env"))
             if project.files[path] is not None and (entries or path != MCP_CONFIG_PATH)] + \
        (["let these tools run unasked"] if allows else []) + (["offer its skills to the model"] if project.skills
                                                                else [])
    return ", ".join(parts) or "use its configuration"


def _allowed_before(record: dict | None) -> list[str]:
    allows = record.get("allows") if isinstance(record, dict) else None
    return [name for name in allows if isinstance(name, str)] if isinstance(allows, list) else []


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
