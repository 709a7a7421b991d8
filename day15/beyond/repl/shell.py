"""Beyond the tutorial: the agent's shell, the REPL beyond_agent.py runs.

It keeps the tutorial's section 4.5 as index.ts has it (connect at start-up, the side panel's line,
/mcp, /exit, the loop) with the agent's console for every line read (keys, history, one question at
a time). It reads the command line (options.py) and puts the commands beyond /mcp and /exit
(commands.py, resources.py) in its table; an Agent (agent.py) holds the rest: the folder and its
trust, the console, the full client's servers, the model.
"""
import shlex
import sys
import time

import chat
from beyond.agent import Agent, shown, style
from beyond.folder.mcp_files import entry_scopes
from beyond.model.hints import missing_key_hint
from beyond.repl import commands, manage, reload, resources, unattended
from beyond.repl.options import USAGE, VERSION, UsageError, parse
from beyond.servers import toolset
from beyond.servers.status import McpStatus
from beyond.wire.sandbox import what_it_may

# /mcp lists this many tools of each server (/mcp <server> lists them all): six servers fit on a screen.
TOOLS_LISTED = 8
# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80
# Words that end the session when typed alone, as in Python's REPL (beyond the tutorial).
LEAVE_WORDS = ("exit", "quit")


class Session:
    """The REPL's state: the agent (its servers, console and commands), the conversation, the last tool result."""

    def __init__(self, agent: Agent, watch: reload.Watch) -> None:
        self.agent, self.servers, self.console, self.audit = agent, agent.servers, agent.console, agent.audit
        self.history = chat.new_history()
        self.last_result = ""
        self.running = True
        self.activity = agent.console.activity
        # The tutorial's commands are /help, /mcp and /exit; (beyond the tutorial) the agent's come between.
        self.commands = {"/help": cmd_help, "/mcp": cmd_mcp, **commands.for_client(), "/exit": cmd_exit}
        self.watch = watch  # the mcp.json files as applied: the prompt says when they change

    def status_line(self, status: McpStatus) -> str:
        return status_lines(status, False)[0]

    def chat(self, text: str, typed: bool = True) -> None:
        """A chat turn, for a command that sends a message (a server's prompt)."""
        chat_turn(self, text, typed)


def main(argv: list[str] | None = None) -> int:
    """The full agent."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:  # Beyond the tutorial: the servers managed without a session (manage.py)
        return manage.main(argv[1:])
    try:  # Beyond the tutorial: flags, -p, --help
        options = parse(argv)
    except UsageError as e:
        print(f"{e}\n{USAGE}", file=sys.stderr)
        return 2
    if options.help or options.version:
        print(USAGE if options.help else VERSION)
        return 0
    agent = Agent(options)
    try:
        if not agent.prepare():  # Beyond the tutorial: the folder's trust, its .env and policies; built-in tools
            return 1
        watch = reload.Watch()  # the files as prepare() read them, not as they are once the servers are up
        print(style("GeekAgent Day 15 (Python): MCP tools", "1") + f"  model {chat.model()} at {chat.base_url()}")
        for line in agent.intro():
            print(style(line, "2") if line.startswith("client:") else line)
        if not connect(agent):
            return 1
        print_banner(agent, interactive=agent.prompt is None)
        session = Session(agent, watch)
        if agent.prompt is not None:  # Beyond the tutorial: one prompt, unattended
            return unattended.run(session, agent.prompt, options.as_json, agent.out)
        repl(session)
    except KeyboardInterrupt:  # Ctrl-C at the trust question or while the servers start: leave quietly
        print()
        return 130
    finally:
        agent.stop()  # as index.ts's exit: no server is left behind
    return 0


# --- tutorial section 4.5 (index.ts): connect at start-up, mcpLine, /mcp, /exit ------------------

def connect(agent: Agent) -> bool:
    """index.ts: connectMcpServers at start-up; a config the tutorial's client cannot read stops it
    (the full agent says what is wrong with a file and starts without its servers)."""
    try:
        agent.connect_mcp_servers(line=lambda status: status_lines(status, False)[0])
    except Exception as e:  # as index.ts: whatever stops the client from reading the file
        print(f"error: cannot use .geekagent/mcp.json: {shown(str(e), one_line=True)}", file=sys.stderr)
        return False
    return True


def mcp_line(servers) -> str:
    """index.ts: mcpLine, the side panel's line: each server with its tool count, or that it failed.
    A plain REPL has no side panel, so it is printed at start-up and at the top of /mcp."""
    statuses = servers.mcp_statuses()
    if not statuses:
        return "none"
    return ", ".join(shown(f"{s.server}(needs login)" if s.needs_login  # beyond the tutorial: logins, late joiners
                           else f"{s.server}(starting)" if s.starting is not None
                           else f"{s.server}(failed to start)" if s.error else f"{s.server}(disabled)"
                           if s.disabled else f"{s.server}({len(s.tools)})", one_line=True)
                     for s in statuses)


def status_lines(status: McpStatus, with_tools: bool, most: int | None = None,
                 scopes: dict | None = None) -> list[str]:
    """One server as the tutorial's /mcp shows it: `demo (2 tools)` and, with_tools, one tool a line
    (at most `most` of them, then how many more /mcp <server> lists), and the scope its entry is in."""
    server = shown(status.server, one_line=True)
    scope = (scopes or {}).get(status.server)
    if status.disabled:  # beyond the tutorial: entries that are configured and not started
        return [f"- {server}: disabled" + (f" ({scope})" if scope else "")]
    if status.starting is not None:  # beyond the tutorial: joins when it is up
        return [f"- {server}: still starting ({time.monotonic() - status.starting:.0f} s so far)"]
    if status.error:
        more = f" (/logs {server} has what it said)" if status.said else ""
        where = f" ({scope})" if scope else ""
        return [style(f"x {server}: {shown(status.error, one_line=True)}{more}", "31") + where]
    skills = len(status.client.skills) if status.client else 0  # beyond the tutorial: skills (client/skills.py)
    head = f"{server} ({len(status.tools)} tool{_s(len(status.tools))}" + \
        (f", {skills} skill{_s(skills)})" if skills else ")")
    # Beyond the tutorial: the full client's tools that need tasks, and the revision the server speaks.
    unusable = [f"  {shown(name, one_line=True)}: needs tasks (not supported)" for name in status.needs_tasks]
    unusable += [f"  {shown(name, one_line=True)}: not offered, its inputSchema is not an object schema"
                 for name in status.bad_schemas]
    client = status.client
    revision, login = (client.revision, client.login_status()) if client else (None, None)
    spoken = [f"  speaks MCP {shown(revision, one_line=True)}"] if revision else []
    spoken += [f"  {shown(login, one_line=True)}"] if login else []
    spoken += [f"  skills: {shown(client.skills_note, one_line=True)}"] if client and client.skills_note else []
    spoken += [f"  scope: {scope}"] if scope else []
    spoken += [f"  {shown(what_it_may(client.cfg), one_line=True)}"] if client and client.cfg.kind == "stdio" else []
    listed = status.tools if most is None or len(status.tools) <= most + 1 else status.tools[:most]
    more = [f"  ... and {len(status.tools) - len(listed)} more (/mcp {server})"] * (len(listed) < len(status.tools))
    return [head] + ([f"  {tool}" for tool in listed] + more + unusable + spoken if with_tools else [])


# The `mcp` verbs of the shell (repl/manage.py): in the REPL, /mcp <verb> says the line to type there.
SHELL_VERBS = ("add", "add-json", "remove", "list", "get", "import", "validate")


def cmd_mcp(session: Session, arg: str) -> None:
    """the MCP servers and their tools (/mcp <server>: that one)"""
    statuses = session.servers.mcp_statuses()
    verb, _, rest = arg.partition(" ")
    if verb in ("login", "logout"):  # Beyond the tutorial: a remote server's login
        return commands.mcp_account(session, arg)
    if arg == "reload":  # Beyond the tutorial: the servers follow the files (reload.py)
        return reload.reload(session)
    if verb in ("enable", "disable") and rest.strip():
        return reload.switch(session, rest.strip(), verb == "enable")
    if verb in SHELL_VERBS:  # Beyond the tutorial: the mcp verbs are the shell's (repl/manage.py)
        door = shlex.quote(sys.argv[0] or "day15/beyond_agent.py")
        print(f"`mcp {verb}` is a shell command; in a shell, type: python3 {door} mcp {shown(arg, one_line=True)}"
              + ("\nthen /mcp reload here starts what it changed" if verb in ("add", "remove", "import") else ""))
        return
    if arg:  # Beyond the tutorial: one server of many
        chosen = [status for status in statuses if status.server == arg]
        print("\n".join(status_lines(chosen[0], with_tools=True, scopes=entry_scopes(session.agent.trusted)))
              if chosen else
              f"no server named {shown(arg, one_line=True)}; /mcp lists them")
        return
    if not statuses:
        print("(no MCP servers: declare them in .geekagent/mcp.json and restart)")
        return
    scopes = entry_scopes(session.agent.trusted)  # Beyond the tutorial: where each running entry is written
    print(f"MCP  {mcp_line(session.servers)}")
    for status in statuses:  # Beyond the tutorial: many servers' tools, a few each (/mcp <server>: all)
        print("\n".join(status_lines(status, with_tools=True, most=TOOLS_LISTED, scopes=scopes)))


def cmd_exit(session: Session, arg: str) -> None:
    """leave (Ctrl-D works too)"""
    session.servers.stop_mcp_servers()  # as index.ts's /exit (main() stops them on every other way out)
    session.running = False


# --- the REPL -------------------------------------------------------------------------------

def print_banner(agent: Agent, interactive: bool = True) -> None:
    servers = agent.servers
    print(f"MCP  {mcp_line(servers)}" + ("  (their tools are named mcp_<server>_<tool>; /mcp lists them)"
                                         if servers.mcp_statuses() else ""))
    for hint in agent.hints(interactive):  # Beyond the tutorial: no key (-p says it as its error), plain http
        print(style(hint, "33"))
    if interactive:
        print("Type a message, or /help for commands.")


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def repl(session: Session) -> None:
    console = session.console
    # Beyond the tutorial: keys, history and completion (the console's; commands, tools and @ mentions).
    console.start_repl(commands.completer([name for name, f in session.commands.items() if f.__doc__],
                                          lambda: [t.name for t in toolset.every()],
                                          lambda: resources.mentions(session)))
    while session.running:
        if session.watch.changed():  # Beyond the tutorial: said once, until /mcp reload applies it
            print("mcp.json changed: /mcp reload applies it")
        message = console.read_message()  # kept in the history file as it is entered (the console's)
        if message is None or message.strip() in LEAVE_WORDS:
            return
        if message.strip():
            handle_line(session, message)


def handle_line(session: Session, line: str) -> None:
    """One message: a slash command or a chat turn. Nothing that goes wrong here ends the REPL."""
    command, _, rest = line.strip().partition(" ")
    try:
        if command.startswith("/"):
            session.commands.get(command, unknown_command)(session, rest.strip())
        else:
            chat_turn(session, line)
    except KeyboardInterrupt:
        session.activity.stop()
        print("\n(cancelled)")
    except Exception as e:  # a bug must not end the session: show it and read the next line
        print(f"internal error: {type(e).__name__}: {shown(str(e), one_line=True)}", file=sys.stderr)


def chat_turn(session: Session, text: str, typed: bool = True) -> None:
    """One turn; `typed` is False for text a server wrote (a prompt), whose @server:uri is never read."""
    hint = missing_key_hint()  # Beyond the tutorial: the REPL stays usable without a model
    if hint:
        print(hint)
        return
    if typed:  # Beyond the tutorial: @server:uri, only in what the user typed
        text = resources.attach_mentions(session, text)
    output = session.console.output(TOOL_LINE_CHARS)

    def on_tool(name: str, result: str) -> None:
        session.last_result = result
        output.tool(name, result)
    try:
        session.agent.chat.run_turn(session.history, text, on_tool=on_tool,
                      waiting=session.activity.waiting, on_text=output.text, on_usage=output.usage,
                      on_retry=session.activity.progress if session.activity.live else None)
    except chat.ChatError as e:
        output.end()
        print(style(f"error: {shown(str(e), one_line=True)}", "31"))
        return
    finally:
        output.end()
    if output.tokens_in or output.tokens_out:
        print(style(f"tokens: {output.tokens_in:,} in, {output.tokens_out:,} out", "2"))


# --- slash commands: one small function each -----------------------------------------------

def cmd_help(session: Session, arg: str) -> None:
    """this list"""
    for name, function in session.commands.items():
        if function.__doc__:
            print(f"  {name:<9} {function.__doc__}")
        if function is cmd_mcp:  # beyond the tutorial: logins
            print(f"  {'':<9} /mcp login <server>, /mcp logout <server>: a remote server's login")
            print(f"  {'':<9} /mcp reload: follow the mcp.json files; /mcp enable|disable <server>: and write it")
    print("  Enter sends; a line ending in \\ goes on; Ctrl-C clears the line; Ctrl-D, /exit or exit leave.")


def unknown_command(session: Session, arg: str) -> None:
    print("Unknown command; /help lists the commands.")
