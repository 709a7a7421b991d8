"""The REPL (tutorial Day 15, section 4.5: index.ts, with a plain input() loop).

Start-up as index.ts: connect the servers of .geekagent/mcp.json (a config that cannot be read stops
it), print the side panel's line (a plain REPL has no panel); then each line is /mcp, /exit or a chat
turn, and every way out stops the servers. Beyond the tutorial: where day15/beyond/ is there, the full
agent runs instead (full_agent(), the one import of it), or says why it cannot; with --tutorial it runs
this program (tutorial()) behind the folder's trust question, with the files the user trusted.
"""
import os
import sys

if sys.version_info < (3, 10):  # Beyond the tutorial: one clear line instead of a TypeError further down
    sys.exit(f"GeekAgent Day 15 needs Python 3.10 or newer; this is {sys.version.split()[0]}.")

import chat
import mcp
import permissions
import tools

# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80
# Beyond the tutorial: in the repository, on a Python without the POSIX calls the full agent needs.
NO_POSIX = ("error: the full agent (day15/beyond/) needs Linux, macOS or WSL, where --tutorial runs the tutorial's "
            "program behind the folder's trust question; the lesson's files, copied into a folder of their own, run "
            "on any Python.")


def main(argv: list[str] | None = None) -> int:
    agent = full_agent()
    if agent is not None:  # Beyond the tutorial: it runs tutorial() with --tutorial, behind the folder's trust
        return agent(sys.argv[1:] if argv is None else argv, tutorial)
    return tutorial()


def tutorial(config_file: str = ".geekagent/mcp.json", policy_file: str = permissions.POLICY_PATH) -> int:
    """The tutorial's program: its policies, built-in tools and servers, the side panel's line, the REPL."""
    try:
        permissions.load_policies(policy_file)  # Day 8: GeekAgent.json's allow / ask / deny
    except permissions.PolicyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    tools.register_builtin_tools()
    try:
        mcp.connect_mcp_servers(config_file)
    except Exception as e:  # as index.ts: whatever stops the client from reading the file
        print(f"MCP config cannot be read: {e}", file=sys.stderr)
        mcp.stop_mcp_servers()
        return 1
    try:
        print(f"GeekAgent Day 15: MCP tools  (model {chat.model()} at {chat.base_url()})")
        print(f"MCP  {mcp_line()}")
        repl()
    except KeyboardInterrupt:  # as index.ts: Ctrl-C leaves
        print()
    finally:
        mcp.stop_mcp_servers()
    return 0


def mcp_line() -> str:
    """index.ts: mcpLine, each server with its tool count, or that it failed."""
    statuses = mcp.mcp_statuses()
    if not statuses:
        return "none"
    return ", ".join(f"{s.server}(failed to start)" if s.error else f"{s.server}({len(s.tools)})" for s in statuses)


def cmd_mcp() -> None:
    """index.ts's /mcp: each server and its full tool names, or why it failed."""
    statuses = mcp.mcp_statuses()
    if not statuses:
        print("(no MCP servers: declare them in .geekagent/mcp.json and restart)")
    for s in statuses:
        tool_lines = "".join(f"\n  {tool}" for tool in s.tools)
        print(f"x {s.server}: {s.error}" if s.error else f"{s.server} ({len(s.tools)} tools){tool_lines}")


def repl() -> None:
    model, history = chat.Chat(), chat.new_history()
    while True:
        try:
            line = input("You > ").strip()
        except EOFError:  # Ctrl-D
            print()
            return
        if line == "/exit":
            return
        if line == "/mcp":
            cmd_mcp()
        elif line.startswith("/"):
            print("Commands: /mcp, /exit")
        elif line:
            chat_turn(model, history, line)


def chat_turn(model: chat.Chat, history: list[dict], text: str) -> None:
    """One turn of the unchanged tool loop (chat.py); its tool calls go through the registry."""
    def on_tool(name: str, result: str) -> None:
        short = result if len(result) <= TOOL_LINE_CHARS else result[:TOOL_LINE_CHARS] + "..."
        print(f"[tool {name} -> {short}]")
    start = len(history)
    try:
        print(model.run_turn(history, text, on_tool=on_tool))
    except chat.ChatError as e:
        del history[start:]  # the failed turn is forgotten, so the next request is one the API takes
        print(f"error: {e}")


def full_agent():
    """Beyond the tutorial: the full agent's main where day15/beyond/ is there (None: the lesson runs alone).
    Without the POSIX calls it needs, it never falls back to the lesson, which would start a cloned
    folder's servers unasked: it says so and exits 2."""
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isdir(os.path.join(here, "beyond")):
        return None
    try:
        import fcntl  # noqa: F401 (the product's locks)
        import termios  # noqa: F401 (the product's console)
        posix = all(hasattr(os, call) for call in ("geteuid", "killpg", "set_blocking", "O_NOFOLLOW"))
    except ImportError:
        posix = False
    if not posix:
        return lambda argv, program: print(NO_POSIX, file=sys.stderr) or 2
    from beyond.repl.shell import main as agent_main
    return agent_main


if __name__ == "__main__":
    sys.exit(main())
