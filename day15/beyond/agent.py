"""Beyond the tutorial: the agent, the one object the shell builds; it holds the parts and hands each what it needs.

repl/shell.py keeps the tutorial's section 4.5 (connect at start-up, the status line, /mcp, /exit, the
REPL loop), reads the command line (repl/options.py) and asks an Agent for the rest: the folder and its
trust (folder/), the console, and the full client's servers (servers/), with the handlers of what
servers ask (asks/), the approvals and audit log of the folder, kept results and tool search. It
extends the lesson from above: the model is a ModelChat (model/client.py), whose tool calls run through
Calls (servers/calls.py) and are answered by Approvals.
"""
import contextlib
import os
import sys

import permissions
import tools
from beyond.asks.handlers import Handlers
from beyond.auth.screen import Screen
from beyond.console import Console
from beyond.folder.approvals import Approvals, load_policies
from beyond.folder.audit import AuditLog
from beyond.folder.project import find_project
from beyond.folder.secret_files import read_question
from beyond.folder.tasks import TaskLog
from beyond.folder.dotenv import load_dotenv
from beyond.folder.mcp_files import servers_to_start, user_config_path
from beyond.folder.trust import MCP_CONFIG_PATH, Project, decide
from beyond.model.client import ModelChat
from beyond.model.hints import missing_key_hint, plain_http_hint
from beyond.servers.calls import Calls
from beyond.servers.exits import Orphans, stop_on_signals
from beyond.servers.reading import read_tool
from beyond.servers.results import Results
from beyond.servers.connect import Servers
from beyond.servers.toolsearch import ToolSearch
from beyond.servers import toolset
from beyond.skills.cache import SkillCache
from beyond.skills.loading import AgentSkills
from beyond.terminal import shown, style  # the shell's too
from beyond.wire.sandbox import keep_to_itself, what_it_may

__all__ = ["Agent", "shown", "style"]

# On a terminal the first prompt waits at most this long for the servers; the rest join when they are up.
GRACE_S = 2.0

BANNER = "client: full (day15/beyond/): hardened, remote servers, the extensions in the README"
# What the model reads for a tool that would have asked, in a run with nobody to ask (-p, repl/unattended.py).
REFUSED = ("not run: {name} needs the user's approval and this run has nobody to ask (beyond_agent.py -p); a tool runs "
           "here only if .geekagent/GeekAgent.json allows it, or the user answered `a` for it in the REPL. "
           "Do not retry it; answer without it.")


class Agent:
    """One run of the agent, as its command line (repl/options.py: Options) asks."""

    def __init__(self, options) -> None:
        self.options = options
        self.prompt = options.prompt
        self.out = sys.stdout  # where the answer of -p goes; everything else goes to stderr then
        self._quiet = contextlib.redirect_stdout(sys.stderr) if self.prompt is not None else contextlib.nullcontext()
        self._quiet.__enter__()
        for stream in (self.out, sys.stderr):  # what a server or model sent that cannot be encoded: replaced
            stream.reconfigure(errors="replace")
        stop_on_signals()  # SIGTERM and SIGHUP leave through the shell's main's finally
        self.console = Console()  # every line read from the user, one question at a time
        if self.prompt is None:
            self.console.take_signals()
        else:
            self.console.activity.report_lines()  # -p: a task's status lines on stderr
        keep_to_itself()  # no process of the user's without CAP_SYS_PTRACE reads its environment (API keys)
        self.orphans, self.results, self.search = Orphans(), Results(), ToolSearch()
        self._confinement: dict[int, str] = {}  # how each server's process is confined, for the audit
        self.root: str | None = None
        self.project: Project | None = None
        self.trusted = False
        self.audit: AuditLog | None = None
        self.servers = Servers()  # prepare() gives it what the folder needs
        self.approvals = Approvals()  # who answers "Allow?" and what was answered: prepare() knows
        self.calls = Calls(self.approvals)  # the tool calls of the model and of /call
        self.task_log = TaskLog()  # the tasks whose outcome is not delivered yet (/tasks)
        self.chat = ModelChat(calls=self.calls)  # the model, with the tools prepare() chooses how to offer

    def prepare(self) -> bool:
        """The folder (found upward), its trust, its .env and policies, the built-in tools, and the full
        agent's parts; False when start-up must stop (a policy file that cannot be used)."""
        self.root = find_project()
        project = self.project = Project.read(".", sandbox=self.options.sandbox)
        ask = (lambda question: self.console.confirm(question, always=False)) \
            if self.console.terminal and self.prompt is None else None
        self.trusted = decide(project, self.options.trust, ask)
        if self.trusted:
            load_dotenv(settings=project.dotenv())
        try:
            policies = project.policies()
        except permissions.PolicyError as e:
            print(f"error: {shown(str(e), one_line=True)}", file=sys.stderr)
            return False
        if permissions.POLICY_PATH in project.problems:  # a folder, unreadable: one line, and start-up goes on
            print(f"warning: {shown(project.problems[permissions.POLICY_PATH], one_line=True)}", file=sys.stderr)
        self.policies = policies  # GeekAgent.json's own, as -p --json names what allowed a tool
        untrusted_allows = [] if self.trusted else project.allows()
        tools.register_builtin_tools()
        # Every Allow? through the console: below what the model wrote, one at a time, never answered by what
        # was typed before it. With -p nobody is asked: the model reads why.
        confirm = self.console.confirm if self.prompt is None else (lambda question, always=True: False)
        folder = self.root or os.getcwd()  # where an `a` is kept
        load_policies({**policies, **dict.fromkeys(untrusted_allows, "ask")})
        self.approvals = Approvals(folder, confirm=confirm, declined=tools.DECLINED if self.prompt is None else REFUSED)
        paging = read_tool()  # by pages; it asks for a file of secrets even when it is allowed
        toolset.replace_builtin(toolset.Asking(paging.name, paging.description, paging.parameters, paging.run,
                                               question=read_question()))
        self.calls = Calls(self.approvals)
        self._full(folder)
        return True

    def _full(self, folder: str) -> None:
        """The full agent's parts for this folder."""
        self.orphans.adopt()  # a server's descendant that leaves its process group is still ours to stop
        self.task_log = TaskLog(folder)
        audit = self.audit = AuditLog(lambda tool: self.servers.server_of(tool), confined=self._confined)
        self.calls.reports.append(lambda name, arguments, decision, outcome, seconds, size, order: audit.record(
            name, arguments, decision, outcome, seconds - self.console.asked_within(seconds), size))  # the tool's time
        self.calls.keep = self.results.keep  # a long result is kept whole, read back by pages
        # Its tools chosen by tool search once the servers are there; a reply's questions first, then its calls at once.
        self.chat = ModelChat(calls=self.calls)
        asks = Handlers(self.console, model=self.chat.sample, record=audit.asked, root=folder,
                        interactive=False if self.prompt is not None else None)
        self.servers = Servers(asks=asks, screen=Screen(browser=self.options.browser, console=self.console),
                               approvals=self.approvals, activity=self.console.activity.tool, tasks=self.task_log,
                               skill_cache=lambda name, config: SkillCache(config, name))
        self.search = ToolSearch(self.servers.always_loaded, self.servers.server_of, self.approvals.policy_for)
        self.search.register()
        # Skills: the servers', the folder's once trusted, yours; each MCP server's loaded after a question.
        self.skills = AgentSkills(self.servers, folder, self.approvals.confirm, self.approvals)
        self.skills.use_folder(self.project, self.trusted)
        self.skills.register()
        self.chat.system_note = self.skills.system_note
        # Many MCP tools: a few offered, the others searched; no skill tool while there is no skill.
        self.chat.choose = lambda specs, messages: self.skills.offered(self.search.choose(specs, messages))
        for tool in toolset.every():  # the built-ins: an `a` allows them; nothing of theirs to pin
            self.approvals.review(tool.name, None)

    def _confined(self, tool: str) -> str | None:
        """How the stdio server of an MCP tool runs (wire/sandbox.py), for the audit; None for other tools."""
        server = self.servers.server_of(tool)
        status = next((s for s in self.servers.mcp_statuses() if s.server == server), None)
        config = status.client.cfg if status and status.client else None
        if config is None or config.kind != "stdio":
            return None
        if id(config) not in self._confinement:  # judged once a server: its grants are paths looked up
            self._confinement[id(config)] = what_it_may(config)
        return self._confinement[id(config)]

    def intro(self) -> list[str]:
        """Which client runs, and where: the lines after the title."""
        mine = os.path.exists(user_config_path())  # the user's own servers
        where = (f"project: {shown(self.root, one_line=True)}" if self.root else
                 f"no .geekagent/ in {shown(os.getcwd(), one_line=True)} or its parents"
                 + ("" if mine else ": built-in tools only"))
        return [BANNER, where]

    def connect_mcp_servers(self, line) -> None:
        """Start the servers, the user's own too, saying at once how many start, then line(status) for each
        as it is ready (and which file it came from)."""
        configs, origins = servers_to_start(self.project if self.trusted else None,  # says what it cannot use
                                            sandbox=self.options.sandbox)
        mixed = any(origin != MCP_CONFIG_PATH for origin in origins.values())
        # On a terminal the prompt does not wait for the slowest server: it joins when it is up.
        grace = GRACE_S if self.console.terminal and self.prompt is None else None
        statuses = self.servers.connect_mcp_servers(
            configs=configs, echo=self.options.verbose, grace=grace,
            on_start=lambda count: print(f"starting {count} server{'' if count == 1 else 's'}..."),
            on_ready=lambda status: print("  " + line(status) + (
                f"  ({shown(origins[status.server], one_line=True)})" if mixed else "")),
            on_join=lambda status: print(f"[mcp] {shown(status.server, one_line=True)}: " + (
                f"failed: {shown(status.error, one_line=True)}" if status.error else
                f"ready, {len(status.tools)} tool{'' if len(status.tools) == 1 else 's'}"),
                file=sys.stderr, flush=True))
        for status in statuses:
            if status.starting is not None:
                print(f"  {shown(status.server, one_line=True)} is still starting (it joins when it is up)")

    def hints(self, interactive: bool) -> list[str]:
        """What the banner warns of: no key (the REPL's hint; -p says it as its error), plain http."""
        return [hint for hint in (missing_key_hint() if interactive else None, plain_http_hint()) if hint]

    def stop(self) -> None:
        """Every server stopped, and what escaped a server's process group (full agent, Linux)."""
        try:
            self.servers.stop_mcp_servers()
            self.orphans.stop()
        finally:
            self._quiet.__exit__(None, None, None)
