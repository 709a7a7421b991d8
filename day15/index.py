"""The REPL (tutorial Day 15, section 4.5: index.ts, with a plain input() loop).

`python day15/index.py` runs the full agent (beyond_mcp.py); `--tutorial` runs the twin of the
tutorial's client (mcp.py) alone, limits included. This is the one place that chooses. Start-up:
find the project's .geekagent/, load the policies, register the built-in tools, connect the MCP
servers, show them; then each message is a slash command or a chat turn. Servers stop on every way out.
What section 4.5 adds to index.ts is in one place below: connect, mcp_line, /mcp and /exit. What is
beyond the tutorial lives in beyond files: the folder's trust (beyond_trust.py), the keys, completion
and activity line and every question asked (beyond_console.py), the other commands (beyond_commands.py, beyond_resources.py)
and the ways out (beyond_exit.py).
"""
import sys

if sys.version_info < (3, 10):  # Beyond the tutorial: one clear line instead of a TypeError further down
    sys.exit(f"GeekAgent Day 15 needs Python 3.10 or newer; this is {sys.version.split()[0]}.")

import os
from collections.abc import Callable
from types import ModuleType

import beyond.asks.handlers as beyond_asks
import beyond.repl.commands as beyond_commands
import beyond.repl.exits as beyond_exit
import beyond.folder.project as beyond_folder
import beyond.repl.resources as beyond_resources
import beyond.servers.results as beyond_results
import beyond.servers.toolsearch as beyond_toolsearch
import beyond.folder.trust as beyond_trust
import beyond.repl.unattended as beyond_unattended
import chat
import permissions
import tools
from beyond.console import Console
from beyond.console import Output, shown, style
from mcp import McpError

VERSION = "GeekAgent Day 15 (Python) 0.2.0"
USAGE = """usage: python3 day15/index.py [--tutorial] [-p PROMPT [--json]] [--trust] [--verbose] [--no-browser] [--help] [--version]
  --tutorial    run the tutorial's MCP client (day15/mcp.py) instead of the full one
  -p PROMPT     run this prompt to its end without a terminal and print the answer (-p - reads it from stdin);
                only tools GeekAgent.json allows run; exit 0 answered, 1 failed, 2 usage
  --json        with -p: print {"answer", "tool_calls", "usage"} as one JSON object
  --trust       trust this folder's .geekagent/mcp.json and .env for this run (also GEEKAGENT_TRUST=1)
  --verbose     print what servers write on stderr as it comes (/logs shows it anyway)
  --no-browser  /mcp login shows the URL to open elsewhere, even where a browser is (GEEKAGENT_NO_BROWSER=1)"""
FLAGS = ("--tutorial", "--trust", "--verbose", "--no-browser", "--help", "--version")
# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80
BANNER = {
    False: "client: full (beyond_mcp.py): hardened, remote servers, the extensions in the README",
    True: "client: the tutorial's (mcp.py), as section 4.4 builds it: not hardened, and every server "
          "gets your whole environment (API keys included)",
}
# Words that end the session when typed alone, as in Python's REPL (beyond the tutorial).
LEAVE_WORDS = ("exit", "quit")


class Session:
    """The REPL's state: the MCP client module, the audit log, the conversation, the last tool result."""

    def __init__(self, servers: ModuleType, console: Console, audit=None) -> None:
        self.servers, self.console, self.audit = servers, console, audit
        # As index.ts: with the tutorial's client, Ctrl-C leaves (its servers share our process
        # group, so the terminal's Ctrl-C reaches them too); the full client's servers do not.
        self.ctrl_c_leaves = servers.__name__ == "mcp"
        self.history = chat.new_history()
        self.last_result = ""
        self.running = True
        self.activity = console.activity


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--help" in args or "--version" in args:  # Beyond the tutorial
        print(USAGE if "--help" in args else VERSION)
        return 0
    try:  # Beyond the tutorial: -p runs one prompt unattended (beyond_unattended.py)
        prompt, as_json, args = beyond_unattended.options(args)
    except beyond_unattended.UsageError as e:
        print(f"{e}\n{USAGE}", file=sys.stderr)
        return 2
    unknown = [arg for arg in args if arg not in FLAGS]
    if unknown:  # Beyond the tutorial: a misspelt flag must not run another client than the one asked for
        print(f"unknown option {shown(unknown[0], one_line=True)}\n{USAGE}", file=sys.stderr)
        return 2
    answer_out = sys.stdout
    if prompt is not None:  # the answer alone goes to stdout; all the rest to stderr
        sys.stdout = sys.stderr
    tutorial = "--tutorial" in args
    if "--no-browser" in args:  # Beyond the tutorial: read where a login starts (beyond_login.py)
        os.environ["GEEKAGENT_NO_BROWSER"] = "1"
    if tutorial:
        import mcp as servers
    else:
        import beyond.servers.servers as servers
    # Beyond the tutorial: text a server or model sent that the terminal cannot encode (a lone
    # surrogate, say) is shown replaced instead of failing the print.
    for stream in (answer_out, sys.stderr):  # with -p, answer_out is stdout and sys.stdout is stderr
        stream.reconfigure(errors="replace")
    beyond_exit.stop_on_signals()  # Beyond the tutorial: SIGTERM and SIGHUP leave through the finally below
    console = Console()  # Beyond the tutorial: every line read from the user, one question at a time
    if prompt is None:
        console.take_signals()
    root = beyond_folder.find_project()
    try:
        # Beyond the tutorial: the folder's files are read once; mcp.json, .env and what GeekAgent.json
        # allows take effect only once the user trusts them.
        project = beyond_trust.Project.read(".")
        terminal = sys.stdin.isatty() and prompt is None
        ask = (lambda question: console.confirm(question, always=False)) if terminal else None
        trusted = beyond_trust.decide(project, "--trust" in args or os.environ.get("GEEKAGENT_TRUST") == "1", ask)
        if trusted:
            beyond_trust.load_dotenv(settings=project.dotenv())
        policies = project.policies()
        if permissions.POLICY_PATH in project.problems:  # Beyond the tutorial: one line, and start-up goes on
            print(f"warning: {shown(project.problems[permissions.POLICY_PATH], one_line=True)}", file=sys.stderr)
        untrusted_allows = [] if trusted else project.allows()
        permissions.load_policies(policies={**policies, **dict.fromkeys(untrusted_allows, "ask")})
        tools.register_builtin_tools()
        if not tutorial:
            beyond_exit.adopt_orphans()  # a server's descendant that leaves its process group is still ours to stop
        audit = None if tutorial else servers.use_folder_state(root or os.getcwd())
        if audit:  # Beyond the tutorial: what servers may ask of the user, and of the model
            beyond_asks.set_root(root or os.getcwd())
            beyond_asks.set_console(console)  # its questions are the console's, as every other one
            beyond_asks.set_record(audit.asked)
            beyond_asks.set_model(_sampling_model)
            tools.set_long_results(beyond_results.keep)  # a long result is kept whole, read back by pages
            beyond_toolsearch.use(servers.always_loaded, servers.server_of)  # many MCP tools: a few offered, the others searched
            chat.set_tool_choice(beyond_toolsearch.choose)
        print(style("GeekAgent Day 15 (Python): MCP tools", "1") + f"  model {chat.model()} at {chat.base_url()}")
        print(style(BANNER[tutorial], "2"))
        mine = not tutorial and os.path.exists(beyond_trust.user_config_path())  # Beyond the tutorial: the user's own servers
        print(f"project: {shown(root, one_line=True)}" if root else
              f"no .geekagent/ in {shown(os.getcwd(), one_line=True)} or its parents" +
              ("" if mine else ": built-in tools only"))
        if (trusted or not tutorial) and not connect(servers, tutorial, project if trusted else None,
                                                     echo="--verbose" in args):
            return 1
        print_banner(servers, interactive=prompt is None)
        session = Session(servers, console, audit)
        if prompt is not None:
            beyond_unattended.unattended()
            return beyond_unattended.run(session, prompt, as_json, answer_out)
        if not tutorial:
            servers.set_activity(session.activity.tool)  # a running MCP tool shows its seconds and progress
            permissions.set_confirm(console.confirm)  # below what the model wrote, one question at a time
        repl(session)
    except permissions.PolicyError as e:
        print(f"error: {shown(str(e), one_line=True)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C at the trust question or while the servers start: leave quietly
        print()
        return 130
    finally:
        servers.stop_mcp_servers()
        beyond_exit.stop_orphans()  # what escaped a server's process group (full agent, Linux)
    return 0


def _sampling_model(history: list[dict], max_tokens: int) -> tuple[str, str]:
    """The configured model, without tools, for a server's sampling request: (its text, its name)."""
    reply = chat.complete(history, offer_tools=False, max_tokens=max_tokens)
    return chat.text_of(reply.get("content")), chat.model()


# --- tutorial section 4.5 (index.ts): connect at start-up, mcpLine, /mcp, /exit ------------------

def connect(servers: ModuleType, tutorial: bool, project: beyond_trust.Project | None, echo: bool = False) -> bool:
    """Connect the configured servers, from the mcp.json bytes the user trusted (project None: not
    trusted); a config the tutorial's client cannot read or parse stops start-up. The full client adds
    the user's own servers, and prints what servers say as it comes with `echo`."""
    try:
        if tutorial:  # the twin reads a file: it gets a private copy of the bytes that were shown
            if beyond_trust.MCP_CONFIG_PATH in project.problems:
                raise McpError(project.problems[beyond_trust.MCP_CONFIG_PATH])
            with beyond_folder.private_copy(project.files[beyond_trust.MCP_CONFIG_PATH]) as path:
                servers.connect_mcp_servers(path)
        else:  # Beyond the tutorial: something on screen at once, then each server as it is ready (and, with
            # servers of the user's own file, the file each came from)
            configs, origins = beyond_trust.servers_to_start(project)
            mixed = any(origin != beyond_trust.MCP_CONFIG_PATH for origin in origins.values())
            servers.connect_mcp_servers(configs=configs, echo=echo,
                                        on_start=lambda count: print(f"starting {count} server{_s(count)}..."),
                                        on_ready=lambda status: print("  " + status_lines(status, False)[0] + (
                                            f"  ({shown(origins[status.server], one_line=True)})" if mixed else "")))
    except McpError as e:  # the full client names the file and the key, and starts with none of its servers
        print(f"error: {shown(str(e), one_line=True)}", file=sys.stderr)
        return not tutorial
    except Exception as e:  # as index.ts: whatever stops the tutorial's client from reading the file
        print(f"error: cannot use .geekagent/mcp.json: {shown(str(e), one_line=True)}", file=sys.stderr)
        return False
    return True


def mcp_line(servers: ModuleType) -> str:
    """index.ts: mcpLine, the side panel's line: each server with its tool count, or that it failed.
    A plain REPL has no side panel, so it is printed at start-up and at the top of /mcp."""
    statuses = servers.mcp_statuses()
    if not statuses:
        return "none"
    return ", ".join(shown(f"{s.server}(needs login)" if s.error and "/mcp login" in s.error  # beyond the tutorial
                           else f"{s.server}(failed to start)" if s.error else f"{s.server}(disabled)"
                           if getattr(s, "disabled", False) else f"{s.server}({len(s.tools)})", one_line=True)
                     for s in statuses)


def status_lines(status, with_tools: bool) -> list[str]:
    """One server as the tutorial's /mcp shows it: `demo (2 tools)` and, with_tools, one tool a line."""
    server = shown(status.server, one_line=True)
    if getattr(status, "disabled", False):  # only the full client has disabled entries
        return [f"- {server}: disabled"]
    if status.error:
        return [style(f"x {server}: {shown(status.error, one_line=True)}", "31")]
    head = f"{server} ({len(status.tools)} tool{_s(len(status.tools))})"
    # Beyond the tutorial: the full client's tools that need tasks, and the revision the server speaks.
    unusable = [f"  {shown(name, one_line=True)}: needs tasks (not supported)" for name in getattr(status, "needs_tasks", [])]
    unusable += [f"  {shown(name, one_line=True)}: not offered, its inputSchema is not an object schema"
                 for name in getattr(status, "bad_schemas", [])]
    client = getattr(status, "client", None)
    revision, login = getattr(client, "revision", None), client.login_status() if client else None
    spoken = [f"  speaks MCP {shown(revision, one_line=True)}"] if revision else []
    spoken += [f"  {shown(login, one_line=True)}"] if login else []
    return [head] + ([f"  {tool}" for tool in status.tools] + unusable + spoken if with_tools else [])


def cmd_mcp(session: Session, arg: str) -> None:
    """the MCP servers and their tools (/mcp login or logout <server>: a remote server's login)"""
    if arg:  # Beyond the tutorial
        return beyond_commands.mcp_account(session, arg)
    statuses = session.servers.mcp_statuses()
    if not statuses:
        print("(no MCP servers: declare them in .geekagent/mcp.json and restart)")
        return
    print(f"MCP  {mcp_line(session.servers)}")
    for status in statuses:
        print("\n".join(status_lines(status, with_tools=True)))


def cmd_exit(session: Session, arg: str) -> None:
    """leave (Ctrl-D works too)"""
    session.servers.stop_mcp_servers()  # as index.ts's /exit (main() stops them on every other way out)
    session.running = False


# --- the REPL -------------------------------------------------------------------------------

def print_banner(servers: ModuleType, interactive: bool = True) -> None:
    if servers.__name__ == "mcp":  # the tutorial's client says nothing while it starts
        for status in servers.mcp_statuses():
            print("  " + status_lines(status, with_tools=False)[0])
    print(f"MCP  {mcp_line(servers)}" + ("  (their tools are named mcp_<server>_<tool>; /mcp lists them)"
                                         if servers.mcp_statuses() else ""))
    for hint in (chat.missing_key_hint() if interactive else None, chat.plain_http_hint()):  # -p says it as its error
        if hint:
            print(style(hint, "33"))
    if interactive:
        print("Type a message, or /help for commands.")


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def repl(session: Session) -> None:
    commands = [c for c in COMMANDS if not (session.ctrl_c_leaves and c in FULL_AGENT_COMMANDS)]
    console = session.console
    console.start_repl(beyond_commands.completer(commands, lambda: [t.name for t in tools.all_tools()],
                                                 lambda: beyond_resources.mentions(session)),
                       ctrl_c_clears=not session.ctrl_c_leaves)
    try:
        while session.running:
            message = console.read_message()
            if message is None or message.strip() in LEAVE_WORDS:
                return
            if message.strip():
                handle_line(session, message)
    finally:
        console.save_history()


def handle_line(session: Session, line: str) -> None:
    """One message: a slash command or a chat turn. Nothing that goes wrong here ends the REPL."""
    command, _, rest = line.strip().partition(" ")
    try:
        if command in FULL_AGENT_COMMANDS and session.ctrl_c_leaves:
            print("not in the tutorial's client (run without --tutorial)")
        elif command.startswith("/"):
            COMMANDS.get(command, unknown_command)(session, rest.strip())
        else:
            chat_turn(session, line)
    except KeyboardInterrupt:
        session.activity.stop()
        if session.ctrl_c_leaves:
            raise
        print("\n(cancelled)")
    except Exception as e:  # a bug must not end the session: show it and read the next line
        print(f"internal error: {type(e).__name__}: {shown(str(e), one_line=True)}", file=sys.stderr)


def chat_turn(session: Session, text: str, typed: bool = True) -> None:
    """One turn; `typed` is False for text a server wrote (a prompt), whose @server:uri is never read."""
    hint = chat.missing_key_hint()
    if hint:
        print(hint)
        return
    if typed:  # Beyond the tutorial: @server:uri, only in what the user typed
        text = beyond_resources.attach_mentions(session, text)
    output = Output(session.activity, TOOL_LINE_CHARS)

    def on_tool(name: str, result: str) -> None:
        session.last_result = result
        output.tool(name, result)
    try:
        chat.run_turn(session.history, text, on_tool=on_tool,
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
    for name, function in COMMANDS.items():
        if not (session.ctrl_c_leaves and name in FULL_AGENT_COMMANDS):
            print(f"  {name:<9} {function.__doc__}")
    ctrl_c = "Ctrl-C leaves" if session.ctrl_c_leaves else "Ctrl-C clears the line"
    print(f"  Enter sends; a line ending in \\ goes on; {ctrl_c}; Ctrl-D, /exit or exit leave.")


def cmd_prompt(session: Session, arg: str) -> None:
    """<server> <name> [key=value ...]: send a server's prompt as the next message"""
    text = beyond_resources.prompt_turn(session, arg)
    if text:
        chat_turn(session, text, typed=False)


def unknown_command(session: Session, arg: str) -> None:
    print("Unknown command; /help lists the commands.")


# The tutorial's commands are /help, /mcp and /exit; the others are beyond it (beyond_commands.py,
# beyond_resources.py). In this order /help lists them.
COMMANDS: dict[str, Callable[[Session, str], None]] = {
    "/help": cmd_help, "/mcp": cmd_mcp, "/tools": beyond_commands.cmd_tools, "/call": beyond_commands.cmd_call,
    "/logs": beyond_commands.cmd_logs, "/history": beyond_commands.cmd_history, "/last": beyond_commands.cmd_last,
    "/audit": beyond_commands.cmd_audit, "/resources": beyond_resources.cmd_resources,
    "/read": beyond_resources.cmd_read, "/prompts": beyond_resources.cmd_prompts, "/prompt": cmd_prompt,
    "/reset": beyond_commands.cmd_reset, "/exit": cmd_exit,
}
# Beyond the tutorial: the full client's commands; with --tutorial they say so instead of printing nothing.
FULL_AGENT_COMMANDS = ("/logs", "/audit", "/resources", "/read", "/prompts", "/prompt")


if __name__ == "__main__":
    sys.exit(main())
