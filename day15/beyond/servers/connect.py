"""Beyond the tutorial: the full agent's set of MCP servers.

The tutorial's connect functions (mcp.py) start servers one by one. Here servers start in
parallel, every entry is checked first (client/config.py), their tools are registered as
registry.py makes them, and the registry follows a server's tool-list changes and restarts. A
Servers holds what it needs: the handlers of what servers ask and where a login meets the user
(both handed to each client), the folder's approvals, and what shows a running tool.
"""
import threading
import time
from collections.abc import Callable

from beyond.client.config import MCP_CONFIG_PATH, ServerConfig, load_mcp_config
from beyond.client.session import Session
from beyond.folder.approvals import Approvals
from beyond.servers.logins import Logins
from beyond.servers.registry import (NO_ACTIVITY, claim_names, needing_tasks, offered_names, register_all,
                                     registry_name, with_bad_schemas)
from beyond.servers import toolset
from beyond.servers.status import McpStatus, failed_status
from beyond.text import shorten
from beyond.waits import SIGNAL_CHECK_S, run_all
from mcp import McpError


class Servers(Logins):
    """The servers of one agent: started side by side, their tools in the registry, kept in step."""

    def __init__(self, asks=None, screen=None, approvals: Approvals | None = None, activity=NO_ACTIVITY,
                 tasks=None, skill_cache=lambda name, config: None) -> None:
        self.asks, self.screen, self.activity = asks, screen, activity
        self.skill_cache = skill_cache  # skill_cache(name, config): where a server's verified skill files are kept
        self.tasks = tasks  # where the ids of tasks are kept until their outcome is delivered (folder/tasks.py)
        self.approvals = approvals or Approvals()  # the `a` answers and pins; without a folder, for the run
        # _lock guards _statuses, _contested and the servers' part of the tool set (toolset.py): a server's tool-list
        # change updates them from a helper thread while the REPL reads them. _joined (on _lock) is
        # told when a server that was still starting joins, or the servers stop.
        self._lock = threading.Lock()
        self._joined = threading.Condition(self._lock)
        self._statuses: dict[str, McpStatus] = {}
        self._contested: set[str] = set()  # registry names two tools would share: each gets a hashed one
        self._configs: dict[str, ServerConfig] = {}  # the entries as connected (for /mcp login)
        self._starting: dict[str, Session] = {}  # those that join after the grace (connect_mcp_servers)
        self._disabled_here: set[str] = set()  # the entries this session disabled (drop(disabled=...))
        self.echo = False  # whether servers' words are printed as they come

    def client(self, name: str, config: ServerConfig) -> Session:
        """A client for one entry, with this agent's handlers; it tells us when its tools change."""
        return Session(name, config, on_tools_changed=self._sync_tools, echo=self.echo, asks=self.asks,
                         screen=self.screen, tasks=self.tasks, skill_cache=self.skill_cache(name, config))

    def connect_mcp_servers(self, path: str = MCP_CONFIG_PATH, on_start: Callable[[int], None] = lambda count: None,
                            on_ready: Callable[[McpStatus], None] = lambda status: None,
                            configs: dict[str, ServerConfig] | None = None, echo: bool = False,
                            grace: float | None = None, on_join: Callable[[McpStatus], None] = lambda status: None
                            ) -> list[McpStatus]:
        """Start every configured server at once and register its tools; one failure never stops the others.

        `configs` are the entries as already parsed (the ones the user trusted); without them the file
        at `path` is read. on_start(count) is called before they start, on_ready(status) as each one
        is up or has failed. `echo` prints what servers say (stderr, log messages) as it comes. With
        `grace`, it returns after that many seconds at most: a server still starting is shown as
        starting, and joins when it is up (or failed): registered then, and told to on_join(status).
        """
        configs = load_mcp_config(path) if configs is None else configs  # a file that is not JSON raises here
        self._configs.update(configs)
        self.echo = echo
        clients = {name: self.client(name, config) for name, config in configs.items()
                   if not config.disabled and not config.problem}
        errors: dict[str, McpError | str | None] = {name: c.problem for name, c in configs.items() if c.problem}
        for name in errors:
            on_ready(McpStatus(name, [], errors[name]))  # a broken entry, said first: it does not start
        said = threading.Condition()  # one server's status line at a time; guards `pending` and `late`
        pending, late = set(clients), set()

        def start(client: Session) -> None:
            error = _start(client)
            with said:
                errors[client.name] = error
                pending.discard(client.name)
                joins = client.name in late
                if not joins:
                    on_ready(failed_status(client.name, error, client) if error else
                             McpStatus(client.name, offered_names(client)))
                said.notify_all()
            if joins:
                self._join(client, error, on_join)
        if clients:
            on_start(len(clients))
        began = time.monotonic()
        try:
            if grace is None:
                run_all([(f"mcp-{c.name}-connect", lambda c=c: start(c)) for c in clients.values()])
            else:
                for c in clients.values():
                    threading.Thread(target=start, args=(c,), name=f"mcp-{c.name}-connect", daemon=True).start()
                with said:
                    while pending and time.monotonic() < began + grace:
                        said.wait(min(SIGNAL_CHECK_S, began + grace - time.monotonic()))  # Ctrl-C is seen
                    late |= pending
                    with self._lock:
                        self._starting.update({name: clients[name] for name in late})
            with self._lock:
                self._register(configs, clients, errors, late, began)
        except BaseException:  # Ctrl-C or SIGTERM during start-up: no server may outlive the agent
            stop_all(list(clients.values()))  # a start still under way cannot spawn after its stop()
            raise
        return self.mcp_statuses()

    def _register(self, configs: dict[str, ServerConfig], clients: dict[str, Session], errors: dict,
                  late: set[str], began: float) -> None:
        """Caller holds _lock. Each entry's status, in config order so names are stable: its tools registered,
        its error, or (a server still starting after the grace) starting since `began`."""
        claim_names({c.name: c for c in clients.values() if errors.get(c.name) is None}, self._contested)
        for name in configs:
            if name in late:  # shown as starting, unless it joined already
                if name in self._starting:
                    self._statuses[name] = McpStatus(name, [], starting=began)
                continue
            error = errors.get(name, "failed to start" if name in clients else None)  # None: disabled
            self._statuses[name] = self._connected(name, clients.get(name), error)

    def _join(self, client: Session, error: McpError | str | None, on_join: Callable[[McpStatus], None]) -> None:
        """A server that came after the grace: registered now, unless the servers were stopped meanwhile."""
        with self._lock:
            if self._starting.pop(client.name, None) is not client:
                client.stop()  # stopped meanwhile (stop_mcp_servers): it may not come back
                return
            if error is None:
                claim_names({s.server: s.client for s in self._statuses.values() if s.client} | {client.name: client},
                            self._contested)
            status = self._statuses[client.name] = self._connected(client.name, client, error)
            self._joined.notify_all()
        on_join(status)

    def _connected(self, name: str, client: Session | None, error: McpError | str | None) -> McpStatus:
        """Caller holds _lock."""
        if error:
            return failed_status(name, error, client)
        if client is None:
            return McpStatus(name, [], disabled=True)
        return McpStatus(name, register_all(name, client, self._contested, self.approvals, self.activity,
                                            self.skills_loaded_elsewhere),
                         client=client, needs_tasks=needing_tasks(client), bad_schemas=with_bad_schemas(client))

    def skills_loaded_elsewhere(self, server: str) -> list[str]:
        """The other running servers whose skills are loaded (client/skills.py): a read of this server's
        resources while they are asks, naming them."""
        with self._lock:
            clients = [(s.server, s.client) for s in self._statuses.values() if s.client is not None]
        return [name for name, client in clients if name != server and client.loaded_skills]

    def _sync_tools(self, client: Session) -> None:
        """Replace a server's registered tools by its current list, and say what changed; policies stay."""
        with self._lock:
            status = self._statuses.get(client.name)
            if status is None or status.client is not client:
                return  # stopped meanwhile
            before = set(status.tools)
            running = {s.server: s.client for s in self._statuses.values() if s.client}
            newly = claim_names(running, self._contested)
            for other in self._statuses.values():  # a name now contested is taken from the tool that had it
                if other.client and (other.client is client or newly & set(other.tools)):
                    for tool in other.tools:
                        toolset.remove(tool)
                    other.tools = register_all(other.server, other.client, self._contested, self.approvals,
                                               self.activity, self.skills_loaded_elsewhere)
                    other.needs_tasks, other.bad_schemas = needing_tasks(other.client), with_bad_schemas(other.client)
            added, removed = sorted(set(status.tools) - before), sorted(before - set(status.tools))
        if added or removed:
            change = "; ".join(f"{what} {', '.join(names)}" for what, names in (("added", added), ("removed", removed))
                               if names)
            client.log(f"tools changed: {shorten(change, 400)}")

    def _forget(self, name: str) -> None:
        """Stop a server's client, if it runs, and take its tools from the registry."""
        with self._lock:
            status = self._statuses.get(name)
            for tool in status.tools if status else []:
                toolset.remove(tool)
            if status:
                status.tools = []
        if status and status.client:
            status.client.stop()

    def configs(self) -> dict[str, ServerConfig]:
        """The entries as connected, by name (what /mcp reload compares the files with)."""
        with self._lock:
            return dict(self._configs)

    def drop(self, name: str, disabled: ServerConfig | None = None) -> None:
        """Stop one server and forget it: its tools, its status, its entry (/mcp reload); with `disabled`, its
        entry now disabled, it stays listed as disabled (/mcp disable)."""
        self._forget(name)
        with self._lock:
            self._statuses.pop(name, None)
            self._configs.pop(name, None)
            starting = self._starting.pop(name, None)
            if disabled is not None:
                self._statuses[name], self._configs[name] = McpStatus(name, [], disabled=True), disabled
                self._disabled_here.add(name)
        if starting is not None:
            starting.stop()

    def disabled_here(self, name: str) -> bool:
        """Whether this session disabled the entry (/mcp disable), as opposed to one disabled when it began."""
        with self._lock:
            return name in self._disabled_here

    def server_of(self, tool: str) -> str:
        """The server a registered MCP tool comes from, or "" for a tool of the agent itself."""
        with self._lock:
            return next((s.server for s in self._statuses.values() if tool in s.tools), "")

    def always_loaded(self) -> set[str]:
        """The registry names of the tools whose entries say "alwaysLoad" (true: all of the server's)."""
        names = set()
        with self._lock:
            for status in self._statuses.values():
                wanted = status.client.cfg.always_load if status.client else False
                if wanted is True:
                    names.update(status.tools)
                elif wanted:
                    server = status.server
                    names.update(n for tool in wanted for n in (registry_name(server, tool),
                                                               registry_name(server, tool, True)) if n in status.tools)
        return names

    def wait_for_start(self, server: str) -> bool:
        """Wait for a server still starting to join (up or failed), within its startupTimeout; False if it
        is starting still. Ctrl-C is seen while it waits."""
        deadline = time.monotonic() + self._configs[server].startup_timeout
        with self._joined:
            while server in self._starting and time.monotonic() < deadline:
                self._joined.wait(min(SIGNAL_CHECK_S, deadline - time.monotonic()))
            return server not in self._starting

    def mcp_statuses(self) -> list[McpStatus]:
        """Per server, in config order: its registered tool names, or its error."""
        with self._lock:
            return list(self._statuses.values())

    def stop_mcp_servers(self) -> None:
        """Stop every server at once (so the agent leaves in about 2 s however many there are) and
        remove their tools from the registry; what this run allowed once is forgotten with them."""
        with self._lock:
            statuses = list(self._statuses.values())
            starting, self._starting = list(self._starting.values()), {}
            self._joined.notify_all()
            self._statuses.clear()
            self._contested.clear()
            self.approvals.new_run()
            for status in statuses:
                for tool in status.tools:
                    toolset.remove(tool)
        stop_all([status.client for status in statuses if status.client] + starting)


def _start(client: Session) -> McpError | str | None:
    """None once started, or the error; whatever goes wrong, a server that failed is stopped."""
    try:
        client.start()
    except McpError as e:
        return e
    except Exception as e:  # a server that breaks us in a way we did not foresee: its error, not a traceback
        client.stop()
        return f"failed to start: {type(e).__name__}: {e}"
    return None


def stop_all(clients: list[Session]) -> None:
    """client.stop() for each, side by side; each stop is bounded, so the joins are too."""
    run_all([(f"mcp-{client.name}-stop", client.stop) for client in clients])
