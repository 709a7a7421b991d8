"""Beyond the tutorial: a server's tools as registry tools, with names that stay distinct and prompts that show.

The tutorial's adapter (mcp.py: as_registry_tool) registers mcp_<server>_<tool> as it comes. Here
names stay within the API's 64 characters and distinct (a contested name goes to nobody, so no
tool inherits another's policy), the permission prompt shows the arguments, cleaned and masked,
descriptions are bounded, a tool the model endpoint would refuse is not offered, a server that
lists resources gets a reader, and an allowed tool that changes its description or schema asks again.
connect.py holds the set of servers and calls these under its lock, with the folder's approvals (the
`a` answers and pins) and what shows a running tool.
"""
import contextlib
import json
import re
import sys
import zlib
from collections import defaultdict
from collections.abc import Callable

from beyond.folder.approvals import Approvals, ensure, runs_of
from beyond.secrets import mask, mask_data
from beyond.servers import toolset
from beyond.text import clean, shorten, shown_arguments, squeeze
from tools import Tool

# The OpenAI API refuses longer function names.
MAX_TOOL_NAME = 64
# The permission prompt shows about this much of the arguments, so a huge payload stays readable.
PROMPT_ARGS_CHARS = 500
# A description is sent to the model up to this long: enough for any honest tool, not a page of
# instructions that fills the context with every request.
MAX_DESCRIPTION_CHARS = 2000

# What shows a running tool when nothing does: activity(name) is a context manager that yields a
# function taking the server's progress as text (the console's, in the agent).
NO_ACTIVITY: Callable[[str], contextlib.AbstractContextManager] = lambda name: contextlib.nullcontext(lambda text: None)


def registry_name(server: str, tool: str, hashed: bool = False) -> str:
    """mcp_<server>_<tool> as the twin makes it; cut with a short hash when too long or (hashed) taken."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")
    if len(name) <= MAX_TOOL_NAME and not hashed:
        return name
    digest = f"{zlib.crc32(f'{server}/{tool}'.encode('utf-8', 'surrogatepass')):08x}"  # lone surrogates too
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def as_registry_tool(server: str, client, info: dict, name: str | None = None, approvals: Approvals | None = None,
                     activity=NO_ACTIVITY, skills_elsewhere=lambda server: []) -> Tool:
    """The twin's adapter, with a prompt that shows the arguments the tool will get; an allowed tool is
    pinned in `approvals` at its first use, and shows itself running through `activity`. While a skill of
    another server is loaded (skills_elsewhere(server) names them), it asks, allowed or not: that skill's text
    may be what asks for the call, and no skill's words run code here unasked (the skills extension's rule)."""
    name = name or registry_name(server, info["name"])
    approvals = approvals or Approvals()

    # What the server calls things is shown bounded and cleaned; the registry name is safe as it is.
    shown_server, shown_tool = (clean(shorten(text, 80), one_line=True) for text in (server, info["name"]))

    def question(args: dict) -> tuple[str, bool]:
        # Every key and the ends of every value, each masked before it is shortened.
        shown = clean(shown_arguments(args, PROMPT_ARGS_CHARS, mask), one_line=True)
        asked = f"MCP server '{shown_server}' wants to run tool '{shown_tool}' ({name}) with {shown}"
        others = [] if approvals.granted(name) else skills_elsewhere(server)  # granted to a skill: as the user said
        return f"{asked}{_while_skills(others)}. Allow?", bool(others)

    def run(args: dict) -> str:
        with activity(name) as progress:
            return client.call_tool(info["name"], args, on_progress=progress, output_schema=info.get("outputSchema"))

    description = shorten(mask(f"[MCP:{server}] {info.get('description') or info['name']}"),
                          MAX_DESCRIPTION_CHARS)
    schema = info.get("inputSchema") or {"type": "object", "properties": {}}
    return toolset.Asking(name=name, description=description,  # the schema's words go to the model too: masked
                          parameters=mask_data(schema), run=run,
                          question=question)


def claim_names(clients: dict, contested: set[str]) -> set[str]:
    """Add every registry name that two tools of these clients would share to `contested`, say so,
    and return the new ones."""
    owners = defaultdict(list)
    for server, client in clients.items():
        for info in client.tools:
            if isinstance(info.get("name"), str):
                owners[registry_name(server, info["name"])].append(
                    (f"{clean(shorten(info['name'], 80), one_line=True)} of server {clean(server, one_line=True)}",
                     registry_name(server, info["name"], hashed=True)))
        if has_resources(client):  # the reader's name is taken too (server a's b_read_resource)
            owners[registry_name(server, "read_resource")].append(
                (f"the resource reader of server {clean(server, one_line=True)}", _reader_name(server, True)))
    newly = {name for name, pairs in owners.items() if len(pairs) > 1} - contested
    for name in sorted(newly):
        tools_ = ", ".join(f"{what} ({hashed})" for what, hashed in owners[name])
        print(f"warning: {len(owners[name])} tools would be named {name}: {tools_}. Each gets the hashed "
              f"name shown, and a policy for {name} applies to none of them.", file=sys.stderr)
    contested.update(newly)
    return newly


def register_all(server: str, client, contested: set[str], approvals: Approvals, activity=NO_ACTIVITY,
                 skills_elsewhere=lambda server: []) -> list[str]:
    """Register every tool of a server with default policy ask (a contested name hashed); returns
    the names they got. skills_elsewhere(server) names the other servers whose skills are loaded."""
    names = []
    runs = runs_of(client.cfg)  # once a server: a sandbox's grants are paths looked up
    for info in client.tools:
        if not isinstance(info.get("name"), str):
            client.log(f"skipped a tool without a name: {shorten(json.dumps(info))}")
            continue
        if _needs_tasks(client, info):
            continue  # it would always fail here; /mcp lists it
        if not _object_schema(info):  # the endpoint would refuse every request that offers it
            client.log(f"tool {clean(shorten(info['name'], 80), one_line=True)} is not offered: its inputSchema "
                       "is not a JSON object schema ({\"type\": \"object\", ...})")
            continue
        if mask(info["name"]) != info["name"]:  # a name goes to the model and the screen as it is: it cannot be masked
            client.log("a tool is not offered: its name holds a secret")
            continue
        plain = registry_name(server, info["name"])
        name = registry_name(server, info["name"], hashed=True) if plain in contested else plain
        try:
            toolset.add(as_registry_tool(server, client, info, name, approvals, activity, skills_elsewhere))
        except ValueError as e:
            client.log(f"skipped tool {info['name']}: {e}")
            continue
        ensure(name, "ask")
        _pin(server, name, info, runs, approvals)
        names.append(name)
    if has_resources(client):
        names += _register_resource_reader(server, client, contested, approvals, skills_elsewhere)
    return names


def _register_resource_reader(server: str, client, contested: set[str], approvals: Approvals,
                              skills_elsewhere) -> list[str]:
    """mcp_<server>_read_resource, so the model can open the links and resources tool results point to;
    it asks like any MCP tool. While another server's skill is loaded (whose text may ask for the read: a
    confused deputy), it asks every time, allowed or not, naming both servers (as every tool does then)."""
    name = _reader_name(server, registry_name(server, "read_resource") in contested)

    def question(args: dict) -> tuple[str, bool]:
        shown = clean(squeeze(mask(str(args.get("uri", ""))), PROMPT_ARGS_CHARS), one_line=True)
        others = skills_elsewhere(server)
        return f"MCP server '{clean(server, one_line=True)}': read resource {shown}{_while_skills(others)}? Allow?", \
            bool(others)

    schema = {"type": "object", "properties": {"uri": {"type": "string", "description": "the resource's URI"}},
              "required": ["uri"]}
    toolset.add(toolset.Asking(name, f"[MCP:{server}] Read one resource of this server by its URI (as tool results "
                                     "link to them: [link: ...], [resource: ...]).", schema,
                               lambda args: client.read_resource(str(args.get("uri", ""))), question=question))
    ensure(name, "ask")
    approvals.review(name, None, runs_of(client.cfg))  # its description is ours and never changes: nothing to pin
    return [name]


def _while_skills(servers: list[str]) -> str:
    """What a question adds while skills of other servers are loaded: their text may be what asks."""
    if not servers:
        return ""
    return f", while skills of MCP server {clean(shorten(', '.join(servers), 200), one_line=True)} are loaded " \
           "(their text may ask for it)"


def has_resources(client) -> bool:
    """Whether the server listed resources or templates (at start, or when it said they changed): only
    then does it get a reader."""
    return bool(client.listed)


def _reader_name(server: str, contested: bool) -> str:
    """mcp_<server>_read_resource; when contested, a hashed name distinct from that of a tool named read_resource."""
    if contested:
        return registry_name(f"{server}/", "read_resource", hashed=True)
    return registry_name(server, "read_resource")


def _needs_tasks(client, info: dict) -> bool:
    """A tool that can only run as a task, which this client runs only as 2026-07-28 has them (client/tasks.py),
    not as 2025-11-25 did."""
    execution = info.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required" and not client.revisions.modern


def offered_names(client) -> list[str]:
    """The names a server's tools will be offered under (before collisions are settled), the resource
    reader among them: as many as /mcp will list."""
    names = [registry_name(client.name, info["name"]) for info in client.tools
             if isinstance(info.get("name"), str) and not _needs_tasks(client, info) and _object_schema(info)]
    return names + ([_reader_name(client.name, False)] if has_resources(client) else [])


def needing_tasks(client) -> list[str]:
    return [str(info.get("name")) for info in client.tools if _needs_tasks(client, info)]


def _object_schema(info: dict) -> bool:
    """No inputSchema or an empty one (taken as no arguments), or an object schema: what a model endpoint accepts."""
    schema = info.get("inputSchema")
    return schema in (None, {}) or isinstance(schema, dict) and schema.get("type") == "object"


def with_bad_schemas(client) -> list[str]:
    return [str(info.get("name")) for info in client.tools
            if not _needs_tasks(client, info) and not _object_schema(info)]


def _pin(server: str, name: str, info: dict, runs: dict, approvals: Approvals) -> None:
    """An allowed tool whose description or schema is not what it was, or whose entry runs another
    program now, asks again."""
    changed = approvals.review(name, info, runs)
    if changed:
        approvals.ask_again(name)
        print(f"warning: {name} (server {clean(server, one_line=True)}) {changed}.", file=sys.stderr)
