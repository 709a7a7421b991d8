"""The REPL (tutorial Day 15: index.ts, with a plain input() loop).

Start-up: load the policies, register the built-in tools, connect the MCP servers, show one
status line per server. Then each line is a slash command or a chat turn. The servers are
stopped on every way out. Run from the repository root: python day15/index.py
"""
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable

import chat
import mcp
import permissions
import tools

# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80
# The waiting indicator redraws this often; slow enough to cost nothing.
SPINNER_INTERVAL_S = 0.1


class Session:
    """The REPL's state: the conversation and whether to go on."""

    def __init__(self) -> None:
        self.history = chat.new_history()
        self.running = True


def main() -> int:
    chat.load_dotenv()
    _stop_on_signals()
    try:
        permissions.load_policies()
        tools.register_builtin_tools()
        statuses = mcp.connect_mcp_servers()  # a broken mcp.json raises before any server starts
        print_banner(statuses)
        repl(Session())
    except (permissions.PolicyError, mcp.McpError) as e:  # only a broken config gets this far
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C while the servers start: leave quietly
        print()
        return 130
    finally:
        mcp.stop_mcp_servers()
    return 0


# Beyond the tutorial: servers are stopped on SIGTERM and SIGHUP too, not only on /exit.
def _stop_on_signals() -> None:
    """SIGTERM or a closed terminal leaves through main()'s finally, so servers are stopped."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), lambda signum, frame: sys.exit(128 + signum))


def print_banner(statuses: list[mcp.ServerStatus]) -> None:
    print(style("GeekAgent Day 15 (Python)", "1") + f"  model {chat.model()} at {chat.base_url()}")
    for status in statuses:
        print("  " + status_line(status))
    if not statuses:
        print("  no MCP servers configured (.geekagent/mcp.json)")
    hint = chat.missing_key_hint()
    if hint:
        print(style(hint, "33"))
    print("Type a message, or /help for commands.")


def status_line(status: mcp.ServerStatus) -> str:
    if status.disabled:
        return f"- {status.name}: disabled"
    if status.error:
        return style(f"x {status.name}: failed: {status.error}", "31")
    return style(f"✓ {status.name}: {len(status.tools)} tools, {status.connect_ms:.0f} ms", "32")


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
        print(f"internal error: {type(e).__name__}: {e}", file=sys.stderr)


def chat_turn(session: Session, text: str) -> None:
    hint = chat.missing_key_hint()
    if hint:
        print(hint)
        return
    try:
        answer = chat.run_turn(session.history, text, on_tool=print_tool_line, waiting=waiting_indicator)
    except chat.ChatError as e:
        print(style(f"error: {e}", "31"))
        return
    print(answer)


def print_tool_line(name: str, result: str) -> None:
    shown = " ".join(result.split())
    if len(shown) > TOOL_LINE_CHARS:
        shown = shown[:TOOL_LINE_CHARS - 3] + "..."
    print(style(f"[tool {name} -> {shown}]", "2"))


# --- slash commands: one small function each -----------------------------------------------

def cmd_help(session: Session, arg: str) -> None:
    """this list"""
    for name, function in COMMANDS.items():
        print(f"  {name:<8} {function.__doc__}")


def cmd_mcp(session: Session, arg: str) -> None:
    """the MCP servers and their tools"""
    statuses = mcp.mcp_statuses()
    if not statuses:
        print("No MCP servers. Add one to .geekagent/mcp.json (see README) and restart.")
    for status in statuses:
        if status.disabled:
            print(f"- {status.name}: disabled")
        elif status.error:
            print(style(f"x {status.name}: {status.error}", "31"))
        else:
            print(style(f"✓ {status.name}", "32") + f": {', '.join(status.tools) or '(no tools)'}")


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
    print(tools.run_tool(name, arguments.strip() or "{}"))


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
    "/help": cmd_help, "/mcp": cmd_mcp, "/tools": cmd_tools, "/call": cmd_call,
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
