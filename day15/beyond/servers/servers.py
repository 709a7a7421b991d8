"""Beyond the tutorial: the full agent's set of MCP servers; the one entry point of the full client.

The tutorial's connect functions (mcp.py) start servers one by one. Here servers start in
parallel, every entry is checked first (beyond_config.py), their tools are registered as
beyond_registry.py makes them, and the registry follows a server's tool-list changes and restarts.
Exports McpClient (beyond_client.py), McpError, connect_mcp_servers, mcp_statuses and
stop_mcp_servers for the REPL, the bench and scripts, and the adapter's as_registry_tool,
registry_name, set_activity and use_approvals.
"""
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import mcp
import permissions
from beyond.folder.approvals import Approvals
from beyond.folder.audit import AuditLog
from beyond.waits import run_all
from beyond.client.session import McpClient
from beyond.client.config import MCP_CONFIG_PATH, ServerConfig, load_mcp_config
from beyond.servers.registry import (as_registry_tool, claim_names, needing_tasks, new_run, offered_names, register_all,
                             registry_name, remember_always, set_activity, use_approvals, with_bad_schemas)
from beyond.text import shorten
from mcp import McpError
from tools import all_tools, set_audit, unregister_tool

__all__ = ["McpClient", "McpError", "McpStatus", "as_registry_tool", "connect_mcp_servers", "mcp_statuses",
           "registry_name", "set_activity", "stop_mcp_servers", "use_approvals"]

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
# The entries as connected (for /mcp login), and whether servers' words are echoed.
_configs: dict[str, ServerConfig] = {}
_echo = False


def connect_mcp_servers(path: str = MCP_CONFIG_PATH, on_start: Callable[[int], None] = lambda count: None,
                        on_ready: Callable[[McpStatus], None] = lambda status: None,
                        configs: dict[str, ServerConfig] | None = None, echo: bool = False) -> list[McpStatus]:
    """Start every configured server at once and register its tools; one failure never stops the others.

    `configs` are the entries as already parsed (the ones the user trusted); without them the file at
    `path` is read. on_start(count) is called before they start, on_ready(status) as each one is up
    or has failed. `echo` prints what servers say (stderr, log messages) as it comes.
    """
    global _echo
    configs = load_mcp_config(path) if configs is None else configs  # a file that is not JSON raises here
    _configs.update(configs)
    _echo = echo
    clients = {name: McpClient(name, config, on_tools_changed=_sync_tools, echo=echo)
               for name, config in configs.items() if not config.disabled and not config.problem}
    errors: dict[str, str | None] = {name: config.problem for name, config in configs.items() if config.problem}
    for name in errors:
        on_ready(McpStatus(name, [], errors[name]))  # a broken entry, said first: it does not start

    said = threading.Lock()  # one server's status line at a time: never two run together

    def start(client: McpClient) -> None:
        errors[client.name] = error = _start(client)
        with said:
            on_ready(McpStatus(client.name, offered_names(client) if not error else [], error))
    if clients:
        on_start(len(clients))
    try:
        run_all([(f"mcp-{c.name}-connect", lambda c=c: start(c)) for c in clients.values()])
        with _servers_lock:
            claim_names({c.name: c for c in clients.values() if errors.get(c.name) is None}, _contested)
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
    return McpStatus(name, register_all(name, client, _contested), client=client,
                     needs_tasks=needing_tasks(client), bad_schemas=with_bad_schemas(client))


def _sync_tools(client: McpClient) -> None:
    """Replace a server's registered tools by its current list, and say what changed; policies stay."""
    with _servers_lock:
        status = _statuses.get(client.name)
        if status is None or status.client is not client:
            return  # stopped meanwhile
        before = set(status.tools)
        running = {s.server: s.client for s in _statuses.values() if s.client}
        newly = claim_names(running, _contested)
        for other in _statuses.values():  # a name now contested is taken from the tool that had it
            if other.client and (other.client is client or newly & set(other.tools)):
                for tool in other.tools:
                    unregister_tool(tool)
                other.tools = register_all(other.server, other.client, _contested)
                other.needs_tasks, other.bad_schemas = needing_tasks(other.client), with_bad_schemas(other.client)
        added, removed = sorted(set(status.tools) - before), sorted(before - set(status.tools))
    if added or removed:
        change = "; ".join(f"{what} {', '.join(names)}" for what, names in (("added", added), ("removed", removed)) if names)
        client.log(f"tools changed: {shorten(change, 400)}")


def login(name: str) -> str:
    """/mcp login <name>: start a remote server again, logging in when it asks; what came of it."""
    config = _configs.get(name)
    if config is None or config.kind == "stdio" or config.disabled or config.problem:
        raise McpError(_no_remote(name))
    _forget(name)
    client = McpClient(name, config, on_tools_changed=_sync_tools, echo=_echo)
    try:
        client.start(login=True)
        error = None
    except McpError as e:
        error = str(e)
    except BaseException:  # Ctrl-C while the login waits: nothing of it stays
        client.stop()
        raise
    with _servers_lock:
        if error is None:
            claim_names({s.server: s.client for s in _statuses.values() if s.client} | {name: client}, _contested)
        _statuses[name] = _connected(name, client if error is None else None, error)
    count = len(_statuses[name].tools)
    return error or f"{count} tool{'' if count == 1 else 's'}; {client.login_status()}"


def logout(name: str) -> str:
    """/mcp logout <name>: revoke and forget the server's tokens, and stop it."""
    from beyond.wire.base import TransportError, expand
    from beyond.auth.provider import OAuth
    config = _configs.get(name)
    if config is None or config.kind == "stdio":
        raise McpError(_no_remote(name))
    try:
        said = OAuth(name, expand(config.url, "url"), config.oauth, lambda text: None,
                     allow_insecure=config.allow_insecure).logout()
    except TransportError as e:
        raise McpError(str(e), name) from None
    _forget(name)
    with _servers_lock:
        _statuses[name] = McpStatus(name, [], f"logged out (/mcp login {name} to log in again)")
    return said


def _no_remote(name: str) -> str:
    """What /mcp login or logout says for a name no usable remote server has."""
    return f"no remote server named {name} in the folder's .geekagent/mcp.json or your own mcp.json (/mcp lists them)"


def _forget(name: str) -> None:
    """Stop a server's client, if it runs, and take its tools from the registry."""
    with _servers_lock:
        status = _statuses.get(name)
        for tool in status.tools if status else []:
            unregister_tool(tool)
        if status:
            status.tools = []
    if status and status.client:
        status.client.stop()


def server_of(tool: str) -> str:
    """The server a registered MCP tool comes from, or "" for a tool of the agent itself."""
    with _servers_lock:
        return next((s.server for s in _statuses.values() if tool in s.tools), "")


def always_loaded() -> set[str]:
    """The registry names of the tools whose entries say "alwaysLoad" (true: all of the server's)."""
    names = set()
    with _servers_lock:
        for status in _statuses.values():
            wanted = getattr(status.client.cfg, "always_load", False) if status.client else False
            if wanted is True:
                names.update(status.tools)
            elif wanted:
                server = status.server
                names.update(n for tool in wanted for n in (registry_name(server, tool), registry_name(server, tool, True))
                             if n in status.tools)
    return names


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
        new_run()
        for status in statuses:
            for tool in status.tools:
                unregister_tool(tool)
    stop_all([status.client for status in statuses if status.client])


def stop_all(clients: list[McpClient]) -> None:
    """client.stop() for each, side by side; each stop is bounded, so the joins are too."""
    run_all([(f"mcp-{client.name}-stop", client.stop) for client in clients])
