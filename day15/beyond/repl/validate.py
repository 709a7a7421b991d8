"""Beyond the tutorial: `beyond_agent.py mcp validate [NAME...] [--json] [--trust] [--sandbox]`, servers checked
without a chat session.

Each named entry (or every enabled one, of both files) starts as the agent would start it: the folder's
trust question first (or --trust), its .env, the sandbox its entry or --sandbox asks for, held to its
startupTimeout. Then its handshake, tools, resources and prompts are listed, and everything is stopped,
descendants that left a server's process group too. A server is ok (with its counts), failed (the reason
and the last of what it said on stderr, cleaned and masked), needs_login, not_trusted (no terminal to
ask, and no --trust) or disabled. Exit 0 when every one is ok, 1 otherwise.
"""
import contextlib
import json
import os
import signal
import sys
import threading

from beyond.asks.handlers import Handlers
from beyond.auth.screen import Screen
from beyond.console import Console
from beyond.folder.dotenv import load_dotenv
from beyond.folder.mcp_files import project_file
from beyond.folder.mcp_files import servers_to_start
from beyond.folder.trust import Project, decide
from beyond.repl.verbs import Refused, Usage, flag, too_short
from beyond.secrets import mask
from beyond.servers.connect import Servers
from beyond.servers.exits import Orphans, stop_on_signals
from beyond.text import clean
from mcp import McpError

# A failed server's report keeps this many of its last stderr lines.
STDERR_LINES = 10


def validate(args: list[str]) -> int:
    as_json, trust, sandbox = flag(args, "--json"), flag(args, "--trust"), flag(args, "--sandbox")
    trust = trust or os.environ.get("GEEKAGENT_TRUST") == "1"
    if any(arg.startswith("-") for arg in args):
        raise Usage(f"unexpected {next(arg for arg in args if arg.startswith('-'))!r}")
    out, interrupted = sys.stdout, []
    with contextlib.redirect_stdout(sys.stderr) if as_json else contextlib.nullcontext():
        results = checked(args, trust, sandbox, interrupted)
    if as_json:
        print(json.dumps(results, indent=1), file=out)
    else:
        for result in results:
            print(line_of(result))
    if interrupted:  # Ctrl-C: what was known is printed above, and the status says it was cut short
        return 130
    return 0 if results and all(result["status"] == "ok" for result in results) else 1


def checked(names: list[str], trust: bool, sandbox: bool, interrupted: list) -> list[dict]:
    """One result a server: the named ones, or every enabled one. A Ctrl-C while they start stops them all:
    those known are kept, the others are "cancelled", and `interrupted` gets a True."""
    stop_on_signals()  # SIGTERM and SIGHUP leave through the finally below: no server is left
    console = Console()
    folder = project_file().root
    project = Project.read(folder, sandbox=sandbox)
    ask = (lambda question: console.confirm(question, always=False)) if console.terminal else None
    trusted = decide(project, trust, ask)
    if trusted:
        load_dotenv(settings=project.dotenv())
    configs, _ = servers_to_start(project if trusted else None, sandbox=sandbox)
    try:
        theirs = set(project.servers())
    except McpError:
        theirs = set()
    untrusted = theirs - set(configs)
    chosen = names or [name for name in [*configs, *sorted(untrusted)] if name not in configs or
                       not configs[name].disabled]
    unknown = [name for name in chosen if name not in configs and name not in untrusted]
    if unknown:
        raise Refused(f"no server named {unknown[0]!r}; there are: {', '.join(sorted({*configs, *untrusted}))}")
    results = {name: result(name, "not_trusted", error="the folder's configuration is not trusted")
               for name in chosen if name not in configs}
    results.update({name: result(name, "disabled") for name in chosen if name in configs and configs[name].disabled})
    starting = {name: configs[name] for name in chosen if name not in results}
    too_short([{"args": c.args, "env": c.env, "headers": c.headers, "url": c.url} for c in starting.values()])
    orphans = Orphans()
    orphans.adopt()  # a server's descendant that leaves its process group is still stopped
    servers = Servers(asks=Handlers(console, interactive=False), screen=Screen(browser=False, console=None))
    known: dict[str, dict] = {}  # as each server is up or failed, until a Ctrl-C: what it leaves
    cut = threading.Event()  # set by the Ctrl-C: a start it ends is no result of the server's

    def on_interrupt(signum, frame) -> None:
        cut.set()
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        def ready(status) -> None:
            if not cut.is_set():
                known[status.server] = reported(status)
        for status in servers.connect_mcp_servers(configs=starting, on_ready=ready) if starting else []:
            results[status.server] = reported(status)
    except KeyboardInterrupt:
        interrupted.append(True)
        results.update(known)
        results.update({name: result(name, "cancelled", error="Ctrl-C before it was ready")
                        for name in chosen if name not in results})
    finally:
        signal.signal(signal.SIGINT, previous)
        servers.stop_mcp_servers()
        orphans.stop()
    return [results[name] for name in chosen]


def reported(status) -> dict:
    """A started (or failed) server's result; a running one's lists are asked for here (one just up, not yet
    registered, is counted by its tools alone)."""
    if status.needs_login:
        return result(status.server, "needs_login", error=status.error)
    if status.error:
        return result(status.server, "failed", error=status.error, said=status.said)
    if status.client is None:
        return result(status.server, "ok", tools=len(status.tools))
    client = status.client
    try:
        resources = len(client.list_resources()) if "resources" in client.capabilities else 0
        prompts = len(client.list_prompts()) if "prompts" in client.capabilities else 0
    except McpError as e:
        return result(status.server, "failed", error=str(e), said=list(client.from_server.tail))
    # The tools as the model is offered them (and /mcp counts them): a resource reader too, none unusable.
    return result(status.server, "ok", tools=len(status.tools), resources=resources, prompts=prompts)


def result(name: str, status: str, error: str | None = None, said: list[str] = (), tools: int = 0,
           resources: int = 0, prompts: int = 0) -> dict:
    return {"name": name, "status": status, "tools": tools, "resources": resources, "prompts": prompts,
            "error": None if error is None else clean(mask(str(error)), one_line=True),
            "stderr": [clean(mask(line), one_line=True) for line in list(said)[-STDERR_LINES:]]}


def line_of(result: dict) -> str:
    name = clean(result["name"], one_line=True)
    if result["status"] == "ok":
        return f"{name}: ok ({result['tools']} tools, {result['resources']} resources, {result['prompts']} prompts)"
    said = "".join(f"\n    {line}" for line in result["stderr"])
    why = f": {result['error']}" if result["error"] else ""
    return f"{name}: {result['status'].replace('_', ' ')}{why}{said}"
