"""Beyond the tutorial: the `mcp` verbs that read (list, get): every entry of the three scopes, as a name is looked
up (local > project > user), its secrets masked where they stand; nothing is started or written.
"""
import json
import sys

from beyond.dirs import only_variables
from beyond.folder.mcp_files import ConfigFileError, scope_files
from beyond.folder.trust import Project, trusted
from beyond.repl.verbs import Refused, file_of, flag, name_of, no_more, scope_of, too_short
from beyond.secrets import mask, mask_data, masked_entry
from beyond.text import clean


def cmd_list(args: list[str]) -> int:
    as_json = flag(args, "--json")
    no_more(args)
    problems: list[str] = []
    rows = listed(problems)
    if as_json:
        print(json.dumps([{key: row[key] for key in ("name", "scope", "transport", "command", "args", "url", "enabled",
                                                      "sandbox", "trusted")} for row in rows], indent=1))
        return 1 if problems else 0
    if not any(row["scope"] == "local" for row in rows):
        print("no local entries for this folder")
    if not rows:
        print("no servers: `mcp add NAME -- COMMAND ...` adds one")
    for row in rows:
        state = "enabled" if row["enabled"] else "disabled"
        note = "  (shadowed by an entry of that name above it)" if row["shadowed"] else ""
        note += "" if row["trusted"] else "  (the folder is not trusted: it does not start)"
        print(f"{clean(row['name'], one_line=True):<20} {row['scope']:<7} {row['transport']:<5} {state:<8} "
              f"{'sandbox' if row['sandbox'] else '-':<7} {row['shown']}{note}")
    return 1 if problems else 0


def listed(problems: list[str] | None = None) -> list[dict]:
    """Every entry of the three scopes, as a name is looked up (local, project, user); one a scope before holds
    is shadowed; a file that cannot be read is said (and put in `problems`) and skipped."""
    rows, seen = [], set()
    for file in scope_files():
        try:
            entries = file.entries()
        except ConfigFileError as e:
            print(f"error: {clean(mask(str(e)), one_line=True)}", file=sys.stderr)
            (problems if problems is not None else []).append(str(e))
            continue
        trust = trusted(Project.read(file.root)) if file.scope == "project" else True
        for name, entry in entries.items():
            rows.append({"name": name, "scope": file.scope, "shadowed": name in seen, "trusted": trust,
                         **described(entry)})
        seen |= set(entries) if trust else set()  # an untrusted folder's entries do not run: they shadow nothing
    return rows


def described(entry: object) -> dict:
    """What list shows of an entry as written (its secrets masked): its transport, command line or URL, and
    switches."""
    entry = masked(entry if isinstance(entry, dict) else {})
    remote = "url" in entry or entry.get("type") in ("http", "sse", "streamable-http")
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    command, url = entry.get("command"), entry.get("url")
    shown = url if remote else " ".join(str(part) for part in [command or "?", *args])
    return {"transport": "http" if remote else "stdio", "command": None if remote else command,
            "args": [] if remote else args, "url": url if remote else None,
            "enabled": entry.get("disabled") is not True, "sandbox": bool(entry.get("sandbox")),
            "shown": clean(str(shown), one_line=True)}


def cmd_get(args: list[str]) -> int:
    as_json = flag(args, "--json")
    scope = scope_of(args, default=None)
    name = name_of(args)
    no_more(args)
    files = [file_of(scope)] if scope else scope_files()
    for at, file in enumerate(files):
        entries = file.entries()
        if name in entries:
            shown = masked(entries[name])
            too_short([entries[name]] if isinstance(entries[name], dict) else [])
            shadows = [other.scope for other in files[at + 1:] if name in other.entries()]
            if as_json:
                print(json.dumps({"name": name, "scope": file.scope, "file": file.path, "shadows": shadows,
                                  "entry": shown}, indent=1))
            else:
                print(f"{clean(name, one_line=True)} ({file.scope}: {file.shown})"
                      + (f"; it shadows the {' and '.join(shadows)} entry of that name" if shadows else ""))
                print(clean(json.dumps(shown, indent=2, ensure_ascii=False)))
            return 0
    raise Refused(f"no server named {name!r}; {names_there()}")


def masked(entry: object) -> object:
    """An entry as written, each literal at a secret place masked (a ${VAR} kept: it names a variable), then
    every secret the agent knows masked by value."""
    if not isinstance(entry, dict):
        return entry
    shown = masked_entry(entry, keep=only_variables)
    return mask_data(shown)


def names_there() -> str:
    names = sorted({row["name"] for row in listed()})
    return f"there are: {', '.join(names)}" if names else "there are none (`mcp list`)"
