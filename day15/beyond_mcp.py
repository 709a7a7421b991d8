"""Beyond the tutorial: the full agent's MCP servers as registry tools; the one entry point of the full client.

The tutorial's adapter and connect functions (mcp.py) start servers one by one and register names as
they come. Here servers start in parallel, every entry is checked first (beyond_config.py), names stay
within the API's 64 characters and distinct (a contested name goes to nobody, so no tool inherits
another's policy), the permission prompt shows the arguments, cleaned and masked, the registry
follows a server's tool-list changes and restarts, and an allowed tool that changes asks again.
Exports McpClient (beyond_client.py), McpError, connect_mcp_servers, mcp_statuses and
stop_mcp_servers for the REPL, the bench and scripts.
"""
import contextlib
import json
import re
import sys
import threading
import zlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import mcp
import permissions
from beyond_approvals import Approvals
from beyond_audit import AuditLog
from beyond_client import McpClient
from beyond_base import run_all
from beyond_config import MCP_CONFIG_PATH, ServerConfig, load_mcp_config
from beyond_text import clean, shorten, shown_arguments, squeeze
from mcp import McpError
from tools import Tool, all_tools, register_tool, set_audit, unregister_tool

__all__ = ["McpClient", "McpError", "McpStatus", "connect_mcp_servers", "mcp_statuses", "stop_mcp_servers"]

# The OpenAI API refuses longer function names.
MAX_TOOL_NAME = 64
# The permission prompt shows about this much of the arguments, so a huge payload stays readable.
PROMPT_ARGS_CHARS = 500
# A description is sent to the model up to this long: enough for any honest tool, not a page of
# instructions that fills the context with every request.
MAX_DESCRIPTION_CHARS = 2000

# What shows a running tool (index.py sets it): activity(name) is a context manager that yields a
# function taking the server's progress as text.
_activity: Callable[[str], contextlib.AbstractContextManager] = lambda name: contextlib.nullcontext(lambda text: None)


def set_activity(activity: Callable[[str], contextlib.AbstractContextManager]) -> None:
    global _activity
    _activity = activity


# The folder's `a`lways answers and pins (index.py sets them; by default they last for the run).
_approvals = Approvals()


def use_approvals(approvals: Approvals | None) -> None:
    global _approvals
    _approvals = approvals or Approvals()


def remember_always(name: str) -> str:
    """permissions' remember(): keep an `a` for this tool as it is now in the folder's approvals."""
    return _approvals.remember(name)


def use_folder_state(folder: str) -> AuditLog:
    """The full agent's state for this folder: `a` answers and the pins of allowed tools (in the
    user's state), and the audit log of every tool call (.geekagent/audit.jsonl), which it returns."""
    approvals = Approvals(folder)
    use_approvals(approvals)
    permissions.set_remember(remember_always)
    for tool in all_tools():  # the built-ins: an `a` allows them; their descriptions are ours, nothing to pin
        approvals.review(tool.name, None)
    audit = AuditLog(server_of)
    set_audit(audit.record)
    return audit


# --- the registry adapter ------------------------------------------------------------------

def registry_name(server: str, tool: str, hashed: bool = False) -> str:
    """mcp_<server>_<tool> as the twin makes it; cut with a short hash when too long or (hashed) taken."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"mcp_{server}_{tool}")
    if len(name) <= MAX_TOOL_NAME and not hashed:
        return name
    digest = f"{zlib.crc32(f'{server}/{tool}'.encode('utf-8', 'surrogatepass')):08x}"  # lone surrogates too
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def as_registry_tool(server: str, client: McpClient, info: dict, name: str | None = None) -> Tool:
    """The twin's adapter, with a prompt that shows the arguments the tool will get."""
    name = name or registry_name(server, info["name"])

    # What the server calls things is shown bounded and cleaned; the registry name is safe as it is.
    shown_server, shown_tool = (clean(shorten(text, 80), one_line=True) for text in (server, info["name"]))

    def run(args: dict) -> str:
        # Every key and the ends of every value, each masked before it is shortened.
        shown = clean(shown_arguments(args, PROMPT_ARGS_CHARS, permissions.mask_secrets), one_line=True)
        prompt = f"MCP server '{shown_server}' wants to run tool '{shown_tool}' ({name}) with {shown}. Allow?"
        if not permissions.authorize(name, prompt):
            return f"call cancelled: the user declined {name}."
        if permissions.last_decision() == "allow":
            _approvals.used(name)  # pinned at its first use as an allowed tool
        with _activity(name) as progress:
            return client.call_tool(info["name"], args, on_progress=progress)

    description = shorten(permissions.mask_secrets(f"[MCP:{server}] {info.get('description') or info['name']}"),
                          MAX_DESCRIPTION_CHARS)
    return Tool(name=name, description=description,
                parameters=info.get("inputSchema") or {"type": "object", "properties": {}},
                run=run, authorizes=True)


# --- the set of connected servers ------------------------------------------------------------

@dataclass
class McpStatus(mcp.McpStatus):
    """The twin's status, plus the running client, whether the entry is disabled, and the tools that
    need tasks (execution.taskSupport "required"), which this client cannot call and does not offer."""
    client: McpClient | None = None
    disabled: bool = False
    needs_tasks: list[str] = field(default_factory=list)
    bad_schemas: list[str] = field(default_factory=list)  # tools whose inputSchema a model endpoint refuses


# _servers_lock guards _statuses, _contested and the MCP part of the registry: a server's
# tool-list change updates them from a helper thread while the REPL reads them.
_statuses: dict[str, McpStatus] = {}
# Registry names two tools would share: each of those tools gets a hashed name instead.
_contested: set[str] = set()
_servers_lock = threading.Lock()


def connect_mcp_servers(path: str = MCP_CONFIG_PATH, on_start: Callable[[int], None] = lambda count: None,
                        on_ready: Callable[[McpStatus], None] = lambda status: None,
                        configs: dict[str, ServerConfig] | None = None, echo: bool = False) -> list[McpStatus]:
    """Start every configured server at once and register its tools; one failure never stops the others.

    `configs` are the entries as already parsed (the ones the user trusted); without them the file at
    `path` is read. on_start(count) is called before they start, on_ready(status) as each one is up
    or has failed. `echo` prints what servers say (stderr, log messages) as it comes.
    """
    configs = load_mcp_config(path) if configs is None else configs  # a file that is not JSON raises here
    clients = {name: McpClient(name, config, on_tools_changed=_sync_tools, echo=echo)
               for name, config in configs.items() if not config.disabled and not config.problem}
    errors: dict[str, str | None] = {name: config.problem for name, config in configs.items() if config.problem}
    for name in errors:
        on_ready(McpStatus(name, [], errors[name]))  # a broken entry, said first: it does not start

    def start(client: McpClient) -> None:
        errors[client.name] = error = _start(client)
        on_ready(McpStatus(client.name, [str(t.get("name")) for t in client.tools] if not error else [], error))
    if clients:
        on_start(len(clients))
    try:
        run_all([(f"mcp-{c.name}-connect", lambda c=c: start(c)) for c in clients.values()])
        with _servers_lock:
            _claim_names({c.name: c for c in clients.values() if errors.get(c.name) is None})
            for name in configs:  # registered in config order, so names are stable
                error = errors.get(name, "failed to start" if name in clients else None)  # None: disabled
                _statuses[name] = _connected(name, clients.get(name), error)
    except BaseException:  # Ctrl-C or SIGTERM during start-up: no server may outlive the agent
        stop_all(list(clients.values()))  # a start still under way cannot spawn after its stop()
        raise
    return mcp_statuses()


def _start(client: McpClient) -> str | None:
    """None once started, or the error; whatever goes wrong, a server that failed is stopped."""
    try:
        client.start()
    except McpError as e:
        return str(e)
    except Exception as e:  # a server that breaks us in a way we did not foresee: its error, not a traceback
        client.stop()
        return f"failed to start: {type(e).__name__}: {e}"
    return None


def _connected(name: str, client: McpClient | None, error: str | None) -> McpStatus:
    """Caller holds _servers_lock."""
    if error:
        return McpStatus(name, [], error)
    if client is None:
        return McpStatus(name, [], disabled=True)
    return McpStatus(name, _register_all(name, client), client=client, needs_tasks=_needing_tasks(client),
                     bad_schemas=_with_bad_schemas(client))


def _sync_tools(client: McpClient) -> None:
    """Replace a server's registered tools by its current list, and say what changed; policies stay."""
    with _servers_lock:
        status = _statuses.get(client.name)
        if status is None or status.client is not client:
            return  # stopped meanwhile
        before = set(status.tools)
        running = {s.server: s.client for s in _statuses.values() if s.client}
        newly = _claim_names(running)
        for other in _statuses.values():  # a name now contested is taken from the tool that had it
            if other.client and (other.client is client or newly & set(other.tools)):
                for tool in other.tools:
                    unregister_tool(tool)
                other.tools = _register_all(other.server, other.client)
                other.needs_tasks, other.bad_schemas = _needing_tasks(other.client), _with_bad_schemas(other.client)
        added, removed = sorted(set(status.tools) - before), sorted(before - set(status.tools))
    if added or removed:
        change = "; ".join(f"{what} {', '.join(names)}" for what, names in (("added", added), ("removed", removed)) if names)
        client.log(f"tools changed: {shorten(change, 400)}")


def _claim_names(clients: dict[str, McpClient]) -> set[str]:
    """Mark every registry name that two tools would share as contested, say so, and return the new ones.

    Caller holds _servers_lock.
    """
    owners = defaultdict(list)
    for server, client in clients.items():
        for info in client.tools:
            if isinstance(info.get("name"), str):
                owners[registry_name(server, info["name"])].append(
                    (f"{clean(shorten(info['name'], 80), one_line=True)} of server {clean(server, one_line=True)}",
                     registry_name(server, info["name"], hashed=True)))
        if "resources" in client.capabilities:  # the reader's name is taken too (server a's b_read_resource)
            owners[registry_name(server, "read_resource")].append(
                (f"the resource reader of server {clean(server, one_line=True)}", _reader_name(server, True)))
    newly = {name for name, pairs in owners.items() if len(pairs) > 1} - _contested
    for name in sorted(newly):
        tools_ = ", ".join(f"{what} ({hashed})" for what, hashed in owners[name])
        print(f"warning: {len(owners[name])} tools would be named {name}: {tools_}. Each gets the hashed "
              f"name shown, and a policy for {name} applies to none of them.", file=sys.stderr)
    _contested.update(newly)
    return newly


def _register_all(server: str, client: McpClient) -> list[str]:
    """Register every tool of a server with default policy ask; returns the names they got.

    Caller holds _servers_lock.
    """
    names = []
    for info in client.tools:
        if not isinstance(info.get("name"), str):
            client.log(f"skipped a tool without a name: {shorten(json.dumps(info))}")
            continue
        if _needs_tasks(info):
            continue  # it would always fail here; /mcp lists it
        if not _object_schema(info):  # the endpoint would refuse every request that offers it
            client.log(f"tool {clean(shorten(info['name'], 80), one_line=True)} is not offered: its inputSchema "
                       "is not a JSON object schema ({\"type\": \"object\", ...})")
            continue
        plain = registry_name(server, info["name"])
        name = registry_name(server, info["name"], hashed=True) if plain in _contested else plain
        try:
            register_tool(as_registry_tool(server, client, info, name))
        except ValueError as e:
            client.log(f"skipped tool {info['name']}: {e}")
            continue
        permissions.ensure_tool_policy(name, "ask")
        _pin(server, name, info)
        names.append(name)
    if "resources" in client.capabilities:
        names += _register_resource_reader(server, client)
    return names


def _register_resource_reader(server: str, client: McpClient) -> list[str]:
    """mcp_<server>_read_resource, so the model can open the links and resources tool results point to;
    it asks like any MCP tool. Caller holds _servers_lock."""
    name = _reader_name(server, registry_name(server, "read_resource") in _contested)

    def run(args: dict) -> str:
        uri = str(args.get("uri", ""))
        shown = clean(squeeze(permissions.mask_secrets(uri), PROMPT_ARGS_CHARS), one_line=True)
        if not permissions.authorize(name, f"MCP server '{clean(server, one_line=True)}': read resource {shown}? Allow?"):
            return f"call cancelled: the user declined {name}."
        return client.read_resource(uri)

    schema = {"type": "object", "properties": {"uri": {"type": "string", "description": "the resource's URI"}},
              "required": ["uri"]}
    register_tool(Tool(name, f"[MCP:{server}] Read one resource of this server by its URI (as tool results "
                             "link to them: [link: ...], [resource: ...]).", schema, run, authorizes=True))
    permissions.ensure_tool_policy(name, "ask")
    _approvals.review(name, None)  # its description is ours and never changes: nothing to pin
    return [name]


def _reader_name(server: str, contested: bool) -> str:
    """mcp_<server>_read_resource; when contested, a hashed name distinct from that of a tool named read_resource."""
    return registry_name(f"{server}/", "read_resource", hashed=True) if contested else registry_name(server, "read_resource")


def _needs_tasks(info: dict) -> bool:
    """A tool that can only run as a task (MCP 2025-11-25), which this client does not support."""
    execution = info.get("execution")
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def _needing_tasks(client: McpClient) -> list[str]:
    return [str(info.get("name")) for info in client.tools if _needs_tasks(info)]


def _object_schema(info: dict) -> bool:
    """No inputSchema or an empty one (taken as no arguments), or an object schema: what a model endpoint accepts."""
    schema = info.get("inputSchema")
    return schema in (None, {}) or isinstance(schema, dict) and schema.get("type") == "object"


def _with_bad_schemas(client: McpClient) -> list[str]:
    return [str(info.get("name")) for info in client.tools if not _needs_tasks(info) and not _object_schema(info)]


def _pin(server: str, name: str, info: dict) -> None:
    """An allowed tool whose description or schema is not what it was asks again (caller holds _servers_lock)."""
    why = _approvals.review(name, info)
    if why:
        permissions.set_policy(name, "ask")
        print(f"warning: {name} (server {clean(server, one_line=True)}) changed its description or input "
              f"schema {why}.", file=sys.stderr)


def server_of(tool: str) -> str:
    """The server a registered MCP tool comes from, or "" for a tool of the agent itself."""
    with _servers_lock:
        return next((s.server for s in _statuses.values() if tool in s.tools), "")


def mcp_statuses() -> list[McpStatus]:
    """Per server, in config order: its registered tool names, or its error."""
    with _servers_lock:
        return list(_statuses.values())


def stop_mcp_servers() -> None:
    """Stop every server at once (so the agent leaves in about 2 s however many there are) and
    remove their tools from the registry."""
    with _servers_lock:
        statuses = list(_statuses.values())
        _statuses.clear()
        _contested.clear()
        _approvals.new_run()
        for status in statuses:
            for tool in status.tools:
                unregister_tool(tool)
    stop_all([status.client for status in statuses if status.client])


def stop_all(clients: list[McpClient]) -> None:
    """client.stop() for each, side by side; each stop is bounded, so the joins are too."""
    run_all([(f"mcp-{client.name}-stop", client.stop) for client in clients])
