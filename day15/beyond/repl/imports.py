"""Beyond the tutorial: `beyond_agent.py mcp import SOURCE [-s local|project|user] [--yes]`, the servers another
client has, into your local servers for this folder unless a scope is named.

SOURCE names a client (its project file in this folder and its user file where it keeps it) or a file.
Each file is read as its client reads it (VS Code's, Cursor's and Gemini's: JSON with comments and
trailing commas). Each entry becomes this agent's: VS Code's `servers`, `type`, `${workspaceFolder}` and
`${userHome}`, Gemini's `httpUrl` and `type: "http"`, Codex's TOML tables and `bearer_token_env_var` (as
`Authorization: Bearer ${VAR}`); `${env:VAR}` becomes `${VAR}`. What this agent cannot honour is skipped
with the reason: the old HTTP+SSE transport, VS Code's `${input:...}` prompts, a tool filter it would not
apply. The plan is shown, one line an entry, and asked (--yes: not).
No name is overwritten. Entries from a project file (committed by whoever wrote it) go into the local or
user scope (no trust question) only after a question that shows what each would run, which --yes does not
skip; into the project's mcp.json (-s project), behind its trust question.
"""
import json
import os
import re
import sys

from beyond.client.config import parse_server_config
from beyond.console import Console
from beyond.dirs import VARIABLE, FolderError, decode_json, read_inside
from beyond.folder.mcp_files import project_file
from beyond.folder.question import what_runs
from beyond.repl.verbs import (NAME, Refused, Usage, file_of, flag, literal_secrets, no_more, scope_of, too_short,
                               written_out)
from beyond.secrets import mask
from beyond.text import clean
from mcp import McpError

# A variable as VS Code and Cursor write it, and what no other form may be: ${input:...}, ${workspaceFolder}...
VS_CODE_VARIABLE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
ANY_VARIABLE = re.compile(r"\$\{[^}]*\}")
BARE_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# What JSON with comments holds beside JSON: comments, and a comma before } or ]; a string is matched first,
# so what looks like either inside one (a URL's //) is kept as it is.
COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(?=\s*[}\]])')
# The files whose clients read plain JSON only (Claude Desktop's, Claude Code's): a comment there is an error.
STRICT_JSON = re.compile(r"(claude_desktop_config\.json|/\.claude\.json|/\.mcp\.json)$")
# Another client's file is read up to this size (Claude Code keeps its history in ~/.claude.json too).
MAX_CLIENT_FILE_BYTES = 32 << 20
# Keys another client's entry may carry that change nothing here, or only make this agent ask more often.
HARMLESS = {"type", "description", "autoApprove", "alwaysAllow", "trust", "disabled", "enabled", "name", "transport"}
# Keys taken over as this agent's own (Gemini's timeout is in milliseconds, Codex's in seconds).
TAKEN = {"command", "args", "env", "env_vars", "cwd", "url", "httpUrl", "headers", "http_headers", "env_http_headers",
         "bearer_token_env_var", "timeout", "startup_timeout_sec", "tool_timeout_sec"}


def sources(folder: str) -> dict[str, tuple[list[str], list[str]]]:
    """Each client's (project files in `folder`, the user's files), where that client keeps them."""
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        app = os.path.join(home, "Library", "Application Support")
    elif sys.platform == "win32":
        app = os.environ.get("APPDATA") or os.path.join(home, "AppData", "Roaming")
    else:
        app = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    codex = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    inside = lambda *paths: [os.path.join(folder, path) for path in paths]  # noqa: E731
    return {"claude-desktop": ([], [os.path.join(app, "Claude", "claude_desktop_config.json")]),
            "claude-code": (inside(".mcp.json"), [os.path.join(home, ".claude.json")]),
            "cursor": (inside(".cursor/mcp.json"), [os.path.join(home, ".cursor", "mcp.json")]),
            "vscode": (inside(".vscode/mcp.json"), [os.path.join(app, "Code", "User", "mcp.json")]),
            "gemini": (inside(".gemini/settings.json"), [os.path.join(home, ".gemini", "settings.json")]),
            "codex": (inside(".codex/config.toml"), [os.path.join(codex, "config.toml")])}


def import_servers(args: list[str]) -> int:
    """-s/--scope or --user picks the scope the entries go into (local by default)."""
    yes, named = flag(args, "--yes"), scope_of(args)
    if len(args) != 1 or args[0].startswith("-"):
        raise Usage("import takes one SOURCE: " + ", ".join(sources(".")) + ", or a file")
    source = args.pop()
    no_more(args)
    target = file_of(named)
    folder = project_file().root
    found = found_entries(source, folder)
    taken = set(target.entries())
    plan, lines = {}, []
    for path, from_project, name, raw in found:
        entry, why = converted(raw, path, folder)
        where = clean(path.replace(os.path.expanduser("~"), "~", 1), one_line=True)
        if why is None and (name in taken or name in plan):
            why = f"exists in {target.shown}" if name in taken else "named twice"
        if why is None and not NAME.fullmatch(name):
            why = "its name is not one this agent takes (letters, digits, '_', '.' and '-')"
        # Its secrets are masked where they stand, never by value: a file's value must not hide another's command.
        written = literal_secrets(entry or {})
        if why is None and written and target.scope == "project":
            why = written_out(written[0], entry, target.path)
        lines.append(f"  skipped {clean(name, one_line=True)} ({where}): {clean(why, one_line=True)}" if why else
                     f"  + {clean(name, one_line=True)} ({where}): {shown(name, entry)}")
        if why is None:
            plan[name] = (entry, from_project)
    too_short([entry for entry, _ in plan.values()])
    print(f"{clean(source, one_line=True)}: {len(plan)} to import into {target.shown}"
          + ("" if found else " (no servers found)"))
    print(mask("\n".join(lines)))
    if not plan:
        return 0 if found else 1
    console = Console()
    if not yes and not (console.terminal and console.confirm(f"Import {len(plan)} into {target.shown}?", always=False)):
        raise Refused("nothing imported" + ("" if console.terminal else ": no terminal to ask; --yes imports"))
    shared = [name for name, (_, from_project) in plan.items() if from_project]
    if target.scope != "project" and shared and not (console.terminal and console.confirm(
            f"{', '.join(shared)} came from a project file, which anyone may have written, and your {target.scope} "
            "servers run without a trust question. Run them as shown above?", always=False)):
        raise Refused(f"nothing imported: entries from a project file go into the {target.scope} scope only when "
                      "you say so at a terminal (with -s project they go into this folder's mcp.json, behind its "
                      "trust question)")
    added = []

    def add(servers: dict) -> None:
        for name, (entry, _) in plan.items():
            if name not in servers:  # one written meanwhile is kept
                servers[name] = entry
                added.append(name)
    target.edit(add)
    print(f"imported {len(added)} into {target.shown}" + ("; the folder's trust question asks at the next start"
                                                        if target.scope == "project" and added else ""))
    return 0


def found_entries(source: str, folder: str) -> list[tuple[str, bool, str, object]]:
    """(file, whether it is a project's, name, entry as written) of every server the source's files hold."""
    known = sources(folder)
    if source in known:
        files = [(path, True) for path in known[source][0]] + [(path, False) for path in known[source][1]]
    elif os.path.exists(source):  # a file no client keeps for the user may be anyone's (a clone's): a project's
        mine = {os.path.realpath(path) for _, users in known.values() for path in users}
        files = [(os.path.abspath(source), os.path.realpath(source) not in mine)]
    else:
        raise Usage(f"{source!r} is no client this agent knows ({', '.join(known)}) and no file")
    found = []
    for path, from_project in files:
        inside = os.path.commonpath([os.path.abspath(path), folder]) == folder
        data = read(path, folder if inside else None)  # a file of the folder, never through a link out of it
        for name, entry in servers_in(data, folder).items():
            found.append((path, from_project, str(name), entry))
    return found


def read(path: str, root: str | None) -> object:
    """A client's file: JSON, or TOML (Codex); None when it is not there."""
    try:
        raw = read_inside(os.path.relpath(path, root) if root else path, MAX_CLIENT_FILE_BYTES, root=root)
    except FolderError as e:
        raise Refused(str(e)) from None
    if raw is None:
        return None
    if path.endswith(".toml"):
        try:
            import tomllib
        except ImportError:
            raise Refused(f"{path} is TOML, which Python reads from 3.11 on; this is "
                          f"{sys.version_info.major}.{sys.version_info.minor}") from None
        try:
            return tomllib.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise Refused(f"{path}: cannot read it as TOML: {e}") from None
    try:
        return decode_json(path, raw)
    except ValueError as e:
        if STRICT_JSON.search(path.replace("\\", "/")):
            raise Refused(str(e)) from None
    try:  # VS Code's, Cursor's and Gemini's files are JSON with comments and trailing commas, as they read them
        return decode_json(path, without_comments(raw))
    except ValueError as e:
        raise Refused(str(e)) from None


def without_comments(raw: bytes) -> bytes:
    """JSON with comments (// and /* */) and trailing commas, as VS Code reads it, made plain JSON: both go
    outside strings (a // in a URL stays); line numbers stay as they were."""
    text = raw.decode("utf-8-sig", "replace")
    for part in (COMMENT, TRAILING_COMMA):  # comments first: a comma before a comment and a } is trailing too
        text = part.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "\n" * m.group(0).count("\n"), text)
    return text.encode("utf-8")


def servers_in(data: object, folder: str) -> dict:
    """The server entries of a client's file, whatever its shape: mcpServers, VS Code's servers (or its
    settings' mcp.servers), Codex's mcp_servers, and Claude Code's entries for this folder."""
    if not isinstance(data, dict):
        return {}
    found = {}
    for holder in (data, data.get("mcp") if isinstance(data.get("mcp"), dict) else {}):
        for key in ("mcpServers", "servers", "mcp_servers"):
            if isinstance(holder.get(key), dict):
                found.update(holder[key])
    projects = data.get("projects") if isinstance(data.get("projects"), dict) else {}
    mine = projects.get(folder) if isinstance(projects.get(folder), dict) else {}
    found.update(mine.get("mcpServers") if isinstance(mine.get("mcpServers"), dict) else {})
    return found


def converted(raw: object, path: str, folder: str = ".") -> tuple[dict | None, str | None]:
    """(this agent's entry, None), or (None, why it is skipped); `folder` is the project's (VS Code's
    ${workspaceFolder})."""
    if not isinstance(raw, dict):
        return None, "not an entry object"
    unknown = sorted(str(key) for key in raw if key not in HARMLESS and key not in TAKEN)
    if unknown:
        return None, f"its {unknown[0]!r} is not something this agent does"
    if raw.get("type") == "sse" or raw.get("transport") == "sse" or ("url" in raw and path.endswith("settings.json")
                                                                       and "httpUrl" not in raw
                                                                       and raw.get("type") != "http"):
        return None, "the old HTTP+SSE transport, which this agent does not speak"
    url = raw.get("httpUrl") or raw.get("url")
    tables = [raw.get(key) or {} for key in ("headers", "http_headers", "env_http_headers", "env")]
    if not all(isinstance(table, dict) for table in tables) or not isinstance(raw.get("env_vars") or [], list):
        return None, "its headers, env or env_vars are not written as that client writes them"
    if url:
        headers = {**tables[0], **tables[1], **{key: f"${{{var}}}" for key, var in tables[2].items()}}
        if raw.get("bearer_token_env_var"):
            headers["Authorization"] = f"Bearer ${{{raw['bearer_token_env_var']}}}"
        entry = {"url": url, **({"headers": headers} if headers else {})}
    else:
        env = {**{str(name): f"${{{name}}}" for name in raw.get("env_vars") or []}, **tables[3]}  # Codex passes these
        entry = {"command": raw.get("command"), "args": raw.get("args", []),
                 **({"env": env} if env else {}), **({"cwd": raw["cwd"]} if raw.get("cwd") else {})}
    timeout = raw.get("tool_timeout_sec") or (raw["timeout"] / 1000 if path.endswith("settings.json")
                                              and isinstance(raw.get("timeout"), (int, float)) else None)
    entry.update({"timeout": timeout} if timeout else {})
    entry.update({"startupTimeout": raw["startup_timeout_sec"]} if raw.get("startup_timeout_sec") else {})
    entry.update({"disabled": True} if raw.get("disabled") is True or raw.get("enabled") is False else {})
    text = json.dumps(entry)
    if path.endswith(os.path.join(".gemini", "settings.json")):  # Gemini reads $VAR as ${VAR}
        text = BARE_VARIABLE.sub(r"${\1}", text)
    if "${input:" in text:
        return None, "it asks for ${input:...} values when it starts, which this agent does not"
    editor = any(part in path.replace("\\", "/") for part in ("/.vscode/", "/Code/User/", "/.cursor/"))
    if editor:  # the folder and the home, as VS Code resolves them where the entry runs
        for name, value in (("workspaceFolder", folder), ("userHome", os.path.expanduser("~"))):
            text = text.replace(f"${{{name}}}", json.dumps(value)[1:-1])
    # VS Code and Cursor read ${name} as their own (${workspaceFolder}) and the environment's as ${env:NAME}.
    strange = [m.group(0) for m in ANY_VARIABLE.finditer(text) if editor and not VS_CODE_VARIABLE.fullmatch(m.group(0))]
    entry = json.loads(VS_CODE_VARIABLE.sub(r"${\1}", text))
    strange += [m.group(0) for m in ANY_VARIABLE.finditer(json.dumps(entry)) if not VARIABLE.fullmatch(m.group(0))]
    if strange:
        return None, f"it uses {strange[0]}, which this agent does not expand"
    try:
        parse_server_config("imported entry", entry)
    except McpError as e:
        return None, str(e).removeprefix("imported entry: ")
    return entry, None


def shown(name: str, entry: dict) -> str:
    """What the entry runs, as the trust question shows it."""
    return what_runs(parse_server_config(name, entry))
