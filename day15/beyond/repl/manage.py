"""Beyond the tutorial: `beyond_agent.py mcp <verb>`, the servers managed without editing JSON and without a session.

list, get, add, remove, enable and disable read and write the three scopes (folder/mcp_files.py: local,
the default; project; user), as Claude Code's verbs and flags do, and start nothing; validate starts the
servers to check them; import (imports.py) copies another client's. A project file is committed and shared,
so a literal secret is never written into it (a ${VAR} is). A project write's effect on trust follows the
trust question's rule: fewer servers ask nothing at the next start, a new or changed one asks again.
Exit status: 0 done, 1 refused or failed (the message says what to change), 2 a usage error.
"""
import json
import os
import sys
import urllib.parse

from beyond.client.config import parse_server_config
from beyond.dirs import StateError
from beyond.folder.approvals import forget_answers
from beyond.folder.mcp_files import ConfigFileError, McpFile, project_root, scope_files
from beyond.folder.trust import forget_trust
from beyond.net import is_this_machine
from beyond.repl import listing
from beyond.repl.imports import import_servers
from beyond.repl.validate import validate
from beyond.repl.verbs import (Refused, Usage, file_of, flag, literal_secrets, lookup_files, name_of, no_more, pairs,
                                scope_of, too_short, value, written_out)
from beyond.secrets import mask
from beyond.skills.cache import remove_cached
from beyond.text import clean
from mcp import McpError

USAGE = """usage: python3 day15/beyond_agent.py mcp <verb> ...  (as Claude Code's `claude mcp`, beside ours)
  list [--json]                               every server of the three scopes, none started
  get NAME [--json]                           one entry as written, with its scope and what it shadows
  add NAME [-e K=V]... [--sandbox[=network]] [--force] -- COMMAND [ARG...]   a local server
  add -t http NAME URL [-H 'Key: Value']...   a remote server (also: --url URL --header K=V)
  add-json NAME '{"command": ...}'            an entry as JSON ("sandbox" too)
  remove NAME / enable NAME / disable NAME    take an entry out / start it again / leave it and not start it
  validate [NAME...] [--json] [--trust] [--sandbox]   start them, list what they offer, stop them; exit 1 if any fails
  import SOURCE [--yes]                       copy another client's servers: claude-desktop, claude-code, cursor,
                                              vscode, gemini, codex, or a file (add-from-claude-desktop: the first)
  reset-project-choices                       forget this folder's trust answer and its `a` answers
  -s local (the default: yours, this folder only, kept in your state), -s project (the nearest
  .geekagent/mcp.json, shared: no secret written out), -s user or --user (yours, every folder)."""


def main(argv: list[str]) -> int:
    verb, args = (argv[0], argv[1:]) if argv else ("--help", [])
    if verb in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    try:
        if verb == "validate":
            return validate(args)
        if verb == "import":
            return import_servers(args)
        if verb not in VERBS:
            raise Usage(f"unknown verb {verb!r}")
        return VERBS[verb](args)
    except Usage as e:
        print(f"{clean(mask(str(e)), one_line=True)}\n{USAGE}", file=sys.stderr)
        return 2
    except (Refused, ConfigFileError, StateError) as e:
        print(f"error: {clean(mask(str(e)), one_line=True)}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `mcp list | head`: the reader has all it wanted; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush goes nowhere
        return 141  # as a program the pipe stops (128 + SIGPIPE)
    except OSError as e:  # a folder that cannot be written, a full disk
        print(f"error: {clean(f'{e.filename or verb}: {e.strerror or e}', one_line=True)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C at a question or while servers start: they are stopped on the way out
        print(file=sys.stderr)
        return 130


# --- writing ----------------------------------------------------------------------------------------

def cmd_add(args: list[str]) -> int:
    command = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    file, force = file_of(scope_of(args)), flag(args, "--force")
    sandbox = {"network": True} if flag(args, "--sandbox=network") else flag(args, "--sandbox")
    env = {**pairs(args, "--env"), **pairs(args, "-e")}  # -e: Claude Code's
    headers = {**pairs(args, "--header"), **pairs(args, "-H", ":")}  # -H 'Key: Value', as Claude Code writes it
    url, transport = value(args, "--url"), value(args, "-t") or value(args, "--transport")
    if transport not in (None, "stdio", "http"):
        raise Refused("this agent does not speak the old HTTP+SSE transport; if the server also serves Streamable "
                      "HTTP, use `-t http` with that URL" if transport == "sse" else
                      f"-t {transport!r}: the transports are stdio and http")
    for given in args:  # Claude Code's flags that have no meaning here: what to write instead
        if given.split("=")[0] in ELSEWHERE:
            raise Usage(f"{given.split('=')[0]}: {ELSEWHERE[given.split('=')[0]]}")
    name = name_of(args)
    if transport == "http" and command:
        raise Usage("-t http takes NAME URL, not -- COMMAND (that is -t stdio, the default)")
    if transport == "http" and not url:  # Claude Code's `mcp add -t http NAME URL`
        url = next((arg for arg in args if not arg.startswith("-")), None)
        if url:
            args.remove(url)
    no_more(args)
    if bool(url) == bool(command):
        raise Usage("add needs either -- COMMAND [ARG...] (a local server) or --url URL (a remote one)")
    if url and (env or sandbox):
        raise Usage("--env and --sandbox are for a local server; a remote one takes --header")
    if command and headers:
        raise Usage("--header is for a remote server (--url)")
    if url:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise Refused(f"--url {url!r} is no http(s) URL of a server")
        if parts.scheme == "http" and not is_this_machine(parts.hostname) and "${" not in url:
            raise Refused(f"plain http to {parts.hostname} would send everything unencrypted: use https (the agent "
                          "starts a plain http entry for another host only when it says \"allowInsecure\": true)")
    entry = {"url": url, **({"headers": headers} if headers else {})} if url else \
        {"command": command[0], "args": command[1:], **({"env": env} if env else {})}
    return _added(file, name, entry, force, sandbox)


# Claude Code's `mcp add` flags this agent takes in another form, and that form.
ELSEWHERE = {flag_: "a login is written in the entry: add-json NAME '{\"url\": \"...\", \"oauth\": {\"clientId\": "
                    "\"...\", \"clientSecret\": \"${SECRET}\", \"callbackPort\": 8765}}'"
             for flag_ in ("--client-id", "--client-secret", "--callback-port")}


def _added(file, name: str, entry: dict, force: bool, sandbox: object = None) -> int:
    """Write one entry into `file` (its scope's): a project's never with a literal secret."""
    written = literal_secrets(entry)
    if written and file.scope == "project":
        raise Refused(written_out(written[0], entry, file.path))
    too_short([entry])
    entry.update({"sandbox": sandbox} if sandbox else {})
    if file.read()[1] == "servers":  # VS Code's file says which transport
        entry = {"type": "http" if "url" in entry else "stdio", **entry}

    def add(servers: dict) -> None:
        if name in servers and not force:
            raise Refused(f"{file.path} has a server named {name!r} already; --force replaces it")
        servers[name] = entry
    file.edit(add)
    print(f"added {name} to {file.shown} ({file.scope})" + ("; the folder's trust question asks at the next start"
                                                          if file.scope == "project" else ""))
    return 0


def cmd_add_json(args: list[str]) -> int:
    """Claude Code's `mcp add-json NAME 'JSON'`: the entry as written ("sandbox" too), checked as any entry."""
    file, force = file_of(scope_of(args)), flag(args, "--force")
    name = name_of(args)
    if len(args) != 1:
        raise Usage("add-json takes NAME and one JSON object: add-json NAME '{\"command\": ...}'")
    try:
        entry = json.loads(args.pop())
    except ValueError as e:
        raise Refused(f"add-json: the entry is not JSON: {e}") from None
    if not isinstance(entry, dict):
        raise Refused("add-json: the entry must be a JSON object")
    if entry.get("type") == "sse":
        raise Refused("this agent does not speak the old HTTP+SSE transport; if the server also serves Streamable "
                      "HTTP, give that URL with \"type\": \"http\"")
    try:
        parse_server_config(name, entry)
    except McpError as e:
        raise Refused(str(e)) from None
    return _added(file, name, entry, force)


def cmd_reset_project_choices(args: list[str]) -> int:
    """Claude Code's `mcp reset-project-choices`: forget this folder's trust answer and the `a` answers kept for
    it, saying what was forgotten."""
    no_more(args)
    folder = project_root()
    forgot = [what for what, done in (("the trust answer", forget_trust(folder)),
                                      ("the `a` answers", forget_answers(folder))) if done]
    print(f"forgot for {clean(folder, one_line=True)}: {', '.join(forgot)}" if forgot else
          f"nothing was kept for {clean(folder, one_line=True)}")
    return 0


def cmd_remove(args: list[str]) -> int:
    file, name = _entry_file(args)
    file.edit(lambda servers: servers.pop(name, None))
    remove_cached(name)  # the skill files kept of it go with it (skills/cache.py)
    print(f"removed {name} from {file.shown}")
    return 0


def cmd_enable(args: list[str], disabled: bool = False) -> int:
    file, name = _entry_file(args)

    def switch(servers: dict) -> None:
        if not isinstance(servers.get(name), dict):
            raise Refused(f"{file.path}: {name} is not an entry object; fix it by hand")
        if disabled:
            servers[name]["disabled"] = True
        else:
            servers[name].pop("disabled", None)
    file.edit(switch)
    print(f"{name} is {'disabled' if disabled else 'enabled'} in {file.shown}"
          + ("; the folder's trust question asks at the next start" if not disabled and file.scope == "project"
             else ""))
    return 0


def _entry_file(args: list[str]) -> tuple[McpFile, str]:
    """The file that holds the named entry: the scope's named (-s, --user), else the first that has it (local,
    project, user)."""
    scope = scope_of(args, default=None)
    name = name_of(args)
    no_more(args)
    for file in [file_of(scope)] if scope else lookup_files():  # the one that runs first
        if name in file.entries():
            return file, name
    raise Refused(f"no server named {name!r}{f' in the {scope} scope' if scope else ''}; {listing.names_there()}")


VERBS = {"list": listing.cmd_list, "get": listing.cmd_get, "add": cmd_add, "add-json": cmd_add_json,
         "remove": cmd_remove, "enable": cmd_enable, "disable": lambda args: cmd_enable(args, disabled=True),
         "add-from-claude-desktop": lambda args: import_servers(["claude-desktop", *args]),
         "reset-project-choices": cmd_reset_project_choices}
