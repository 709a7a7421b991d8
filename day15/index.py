"""The REPL (tutorial Day 15, section 4.5: index.ts, with a plain input() loop).

`python day15/index.py` runs the full agent (beyond_mcp.py); `--tutorial` runs the twin of the
tutorial's client (mcp.py) alone, limits included. This is the one place that chooses. Start-up:
load the policies, register the built-in tools, connect the MCP servers, show them; then each line
is a slash command or a chat turn. The servers are stopped on every way out. Run from the repository root.
"""
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import ModuleType

import beyond_trust
import chat
import permissions
import tools
from beyond_text import clean
from mcp import McpError

# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80
# The waiting indicator redraws this often; slow enough to cost nothing.
SPINNER_INTERVAL_S = 0.1
BANNER = {
    False: "client: full (beyond_mcp.py): hardened, remote servers, the extensions in the README",
    True: "client: the tutorial's (mcp.py), as section 4.4 builds it: not hardened, and every server "
          "gets your whole environment (API keys included)",
}


class Session:
    """The REPL's state: the MCP client module in use, the audit log, the conversation, whether to go on."""

    def __init__(self, servers: ModuleType, audit=None) -> None:
        self.servers, self.audit = servers, audit
        self.history = chat.new_history()
        self.running = True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    tutorial = "--tutorial" in args
    if tutorial:
        import mcp as servers
    else:
        import beyond_mcp as servers
    # Beyond the tutorial: text a server or model sent that the terminal cannot encode (a lone
    # surrogate, say) is shown replaced instead of failing the print.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="replace")
    _stop_on_signals()
    # Beyond the tutorial: the folder's mcp.json and .env take effect only once the user trusts them.
    trusted = beyond_trust.decide(".", "--trust" in args or os.environ.get("GEEKAGENT_TRUST") == "1",
                                  permissions.ask_on_stdin if sys.stdin.isatty() else None)
    if trusted:
        beyond_trust.load_dotenv()
    try:
        permissions.load_policies()
        tools.register_builtin_tools()
        audit = None if tutorial else _audit_log()
        if trusted and not connect(servers):
            return 1
        print_banner(servers, tutorial)
        repl(Session(servers, audit))
    except permissions.PolicyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C while the servers start: leave quietly
        print()
        return 130
    finally:
        servers.stop_mcp_servers()
    return 0


def connect(servers: ModuleType) -> bool:
    """Connect the configured servers; a config that cannot be read or parsed stops start-up."""
    try:
        servers.connect_mcp_servers()
    except McpError as e:  # the full client names the file and the key
        print(f"error: {e}", file=sys.stderr)
        return False
    except Exception as e:  # as index.ts: whatever stops the tutorial's client from reading the file
        print(f"error: cannot use .geekagent/mcp.json: {e}", file=sys.stderr)
        return False
    return True


# Beyond the tutorial: every tool call is recorded in .geekagent/audit.jsonl (the full agent).
def _audit_log():
    import beyond_audit
    import beyond_mcp
    audit = beyond_audit.AuditLog(beyond_mcp.server_of)
    tools.set_audit(audit.record)
    return audit


# Beyond the tutorial: servers are stopped on SIGTERM and SIGHUP too, not only on /exit.
def _stop_on_signals() -> None:
    """SIGTERM or a closed terminal leaves through main()'s finally, so servers are stopped."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _leave)


def _leave(signum: int, frame) -> None:
    """Exit through main()'s finally; a second signal must not cut the stopping of the servers short."""
    for name in ("SIGTERM", "SIGHUP", "SIGINT"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    sys.exit(128 + signum)


def print_banner(servers: ModuleType, tutorial: bool) -> None:
    print(style("GeekAgent Day 15 (Python): MCP tools", "1") + f"  model {chat.model()} at {chat.base_url()}")
    print("Servers declared in .geekagent/mcp.json are connected: their tools carry the mcp_ prefix; /mcp lists them.")
    print(style(BANNER[tutorial], "2"))
    for status in servers.mcp_statuses():
        for line in status_lines(status, with_tools=False):
            print("  " + line)
    for hint in (chat.missing_key_hint(), chat.plain_http_hint()):
        if hint:
            print(style(hint, "33"))
    print("Type a message, or /help for commands.")


def status_lines(status, with_tools: bool) -> list[str]:
    """One server as the tutorial's /mcp shows it: `demo (2 tools)` and, with_tools, one tool a line."""
    server = shown(status.server, one_line=True)
    if getattr(status, "disabled", False):  # only the full client has disabled entries
        return [f"- {server}: disabled"]
    if status.error:
        return [style(f"x {server}: {shown(status.error, one_line=True)}", "31")]
    count = len(status.tools)
    head = f"{server} ({count} tool{'' if count == 1 else 's'})"
    return [head] + ([f"  {tool}" for tool in status.tools] if with_tools else [])


def repl(session: Session) -> None:
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # line editing and history for input(), where available
    while session.running:
        try:
            line = input("> ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return
        if line:
            handle_line(session, line)


def handle_line(session: Session, line: str) -> None:
    """One line: a slash command or a chat turn. Nothing that goes wrong here ends the REPL."""
    command, _, rest = line.partition(" ")
    try:
        if command.startswith("/"):
            COMMANDS.get(command, unknown_command)(session, rest.strip())
        else:
            chat_turn(session, line)
    except KeyboardInterrupt:
        print("\n(cancelled)")
    except Exception as e:  # a bug must not end the session: show it and read the next line
        print(f"internal error: {type(e).__name__}: {shown(str(e), one_line=True)}", file=sys.stderr)


def chat_turn(session: Session, text: str) -> None:
    hint = chat.missing_key_hint()
    if hint:
        print(hint)
        return
    try:
        answer = chat.run_turn(session.history, text, on_tool=print_tool_line, waiting=waiting_indicator)
    except chat.ChatError as e:
        print(style(f"error: {shown(str(e), one_line=True)}", "31"))
        return
    print(shown(answer))


def print_tool_line(name: str, result: str) -> None:
    line = " ".join(result.split())
    if len(line) > TOOL_LINE_CHARS:
        line = line[:TOOL_LINE_CHARS - 3] + "..."
    print(style(f"[tool {name} -> {shown(line, one_line=True)}]", "2"))


# Beyond the tutorial: what a server or model wrote is shown masked, its control characters visible.
def shown(text: str, one_line: bool = False) -> str:
    return clean(permissions.mask_secrets(text), one_line)


# --- slash commands: one small function each -----------------------------------------------

def cmd_help(session: Session, arg: str) -> None:
    """this list"""
    for name, function in COMMANDS.items():
        print(f"  {name:<8} {function.__doc__}")


def cmd_mcp(session: Session, arg: str) -> None:
    """the MCP servers and their tools"""
    statuses = session.servers.mcp_statuses()
    if not statuses:
        print("(no MCP servers: declare them in .geekagent/mcp.json and restart)")
    for status in statuses:
        print("\n".join(status_lines(status, with_tools=True)))


def cmd_tools(session: Session, arg: str) -> None:
    """every tool with its policy"""
    for tool in tools.all_tools():
        print(f"  {permissions.policy_for(tool.name):<5}  {tool.name}")


def cmd_call(session: Session, arg: str) -> None:
    """<tool> [json-args]: run one tool directly"""
    name, _, arguments = arg.partition(" ")
    if not name:
        print("usage: /call <tool> [json-args], e.g. /call mcp_demo_dice {}")
        return
    print(shown(tools.run_tool(name, arguments.strip() or "{}")))


def cmd_audit(session: Session, arg: str) -> None:
    """the last 20 tool calls (.geekagent/audit.jsonl)"""
    if session.audit is None:
        print("(the tutorial's client keeps no audit log)")
        return
    print("\n".join(session.audit.last(20)) or "(no tool calls recorded yet)")


def cmd_reset(session: Session, arg: str) -> None:
    """start a new conversation"""
    session.history = chat.new_history()
    print("(conversation cleared)")


def cmd_exit(session: Session, arg: str) -> None:
    """leave (Ctrl-D works too)"""
    session.running = False


def unknown_command(session: Session, arg: str) -> None:
    print("Unknown command; /help lists the commands.")


COMMANDS: dict[str, Callable[[Session, str], None]] = {
    "/help": cmd_help, "/mcp": cmd_mcp, "/tools": cmd_tools, "/call": cmd_call, "/audit": cmd_audit,
    "/reset": cmd_reset, "/exit": cmd_exit,
}


# --- terminal niceties: only on a terminal ------------------------------------------------

def style(text: str, code: str) -> str:
    """ANSI colour when stdout is a terminal and NO_COLOR is unset; plain text otherwise."""
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        return f"\033[{code}m{text}\033[0m"
    return text


@contextlib.contextmanager
def waiting_indicator():
    """A 'waiting for the model' line that disappears when the reply arrives (terminal only)."""
    if not sys.stdout.isatty():
        yield
        return
    done = threading.Event()
    thread = threading.Thread(target=_spin, args=(done,), name="spinner", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _spin(done: threading.Event) -> None:
    frames = "|/-\\"
    tick = 0
    while not done.wait(SPINNER_INTERVAL_S):
        sys.stdout.write(f"\r{frames[tick % 4]} waiting for the model")
        sys.stdout.flush()
        tick += 1
    sys.stdout.write("\r\033[K")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
