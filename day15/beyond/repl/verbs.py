"""Beyond the tutorial: what the `mcp` verbs share (manage.py, validate.py, imports.py): their two failures,
the reading of their command lines (the scopes too), and what they say of the secrets an entry writes out.
"""
import re
import sys

from beyond.dirs import only_variables
from beyond.folder.mcp_files import local_file, project_file, user_file
from beyond.folder.trust import Project, trusted
from beyond.secrets import CREDENTIAL_HEADERS, MIN_MASKED, Place, places

# A server's name: what tool names are made of, so it reads the same in every message.
NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class Refused(Exception):
    """What the user asked cannot be done as asked: exit 1, with the message."""


class Usage(Exception):
    """The command line is not one of the verbs': exit 2, with the usage."""


def flag(args: list[str], wanted: str) -> bool:
    """Whether `wanted` is given (taken out of args)."""
    if wanted in args:
        args.remove(wanted)
        return True
    return False


def value(args: list[str], option: str) -> str | None:
    """The value after `option` (both taken out of args), or None."""
    if option not in args:
        return None
    at = args.index(option)
    if at + 1 >= len(args):
        raise Usage(f"{option} needs a value")
    given = args[at + 1]
    del args[at:at + 2]
    return given


def pairs(args: list[str], option: str, also: str = "") -> dict[str, str]:
    """Every KEY=VALUE given after `option` (or KEY<also>VALUE, where `also` comes before any =: 'Key: Value')."""
    found = {}
    while (pair := value(args, option)) is not None:
        split = also if also and also in pair and pair.index(also) < (pair + "=").index("=") else "="
        key, sep, given = pair.partition(split)
        if not sep or not key.strip() or (split != "=" and not given.strip()):
            raise Usage(f"{option} takes KEY=VALUE{' or KEY' + also + ' VALUE' if also else ''}, not {pair!r}")
        found[key.strip()] = given.strip() if split != "=" else given
    return found


def name_of(args: list[str]) -> str:
    """The first word that is no option: a server's name, checked (taken out of args)."""
    names = [arg for arg in args if not arg.startswith("-")]
    if not names:
        raise Usage("a server's NAME is needed")
    if not NAME.fullmatch(names[0]) or names[0] in (".", ".."):
        raise Usage(f"{names[0]!r} is no server name: letters, digits, '_', '.' and '-', at most 64")
    args.remove(names[0])
    return names[0]


def no_more(args: list[str]) -> None:
    if args:
        raise Usage(f"unexpected {args[0]!r}")


def literal_secrets(entry: dict) -> list[Place]:
    """The secrets an entry writes out: each value at a secret place (secrets.places) with more in it than
    ${VAR}s, which bring the environment's values, not the file's."""
    return [place for place in places(entry) if not only_variables(place.value)]


def written_out(place: Place, entry: dict, shared: str) -> str:
    """Why a literal secret of `entry` stays out of the `shared` file, and how to write it instead: the one
    line the verbs say it with (what is around it kept: 'Authorization=Bearer ${TOKEN}')."""
    string = entry[place.part][place.key] if place.key is not None else entry[place.part]
    name = "TOKEN" if place.part == "headers" or place.name.lower() in ("user", *CREDENTIAL_HEADERS) else place.name
    variable = "${" + re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper() + "}"
    written = string[:place.start] + variable + string[place.end:]
    if place.part == "headers":
        fix = f"--header '{place.key}={written}'"
    elif place.part == "env":
        fix = f"--env '{place.key}={written}'"
    elif place.part == "url":
        fix = f"--url '{written}'"
    else:
        fix = f"'{written}' in its place in the command"
    return (f"{place.where} is a secret written out, and {shared} is the project's, which is shared: keep the "
            "server to yourself with -s local (this folder) or -s user (every folder), or write "
            f"{fix} (quoted, so the shell leaves it) to take it from the environment")


def too_short(entries: list[dict]) -> None:
    """Say once when an entry writes out a secret too short to be masked wherever a server repeats it."""
    short = [place.where for entry in entries for place in literal_secrets(entry) if len(place.value) < MIN_MASKED]
    if short:
        print(f"note: {short[0]} is shorter than {MIN_MASKED} characters: too short to be masked wherever a server "
              "repeats it", file=sys.stderr)


SCOPES = {"local": local_file, "project": project_file, "user": user_file}


def scope_of(args: list[str], default: str | None = "local") -> str | None:
    """The scope named by -s/--scope (Claude Code's) or --user (ours), taken out of args; else `default`."""
    given = [scope for scope in (value(args, "-s"), value(args, "--scope"), "user" if flag(args, "--user") else None)
             if scope]
    if len(given) > 1 or "-s" in args or "--scope" in args:
        raise Usage("a scope is given once: -s local, -s project or -s user")
    named = given[0] if given else None
    if named is not None and named not in SCOPES:
        raise Usage(f"-s {named!r}: the scopes are local (yours, this folder), project (the folder's shared "
                    ".geekagent/mcp.json) and user (yours, every folder)")
    return named or default


def file_of(scope: str):
    return SCOPES[scope]()


def lookup_files() -> list:
    """The files a name is looked up in when no scope is named: those whose entries run, in the order they win
    (local, the project's when the folder is trusted, user), then an untrusted project's (named last: its
    entries do not run)."""
    local, project, user = (SCOPES[scope]() for scope in ("local", "project", "user"))
    runs = trusted(Project.read(project.root))
    return [local, project, user] if runs else [local, user, project]
