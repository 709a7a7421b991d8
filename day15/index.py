"""The REPL (tutorial Day 15, section 4.5: index.ts, with a plain input() loop).

Start-up as index.ts: load the tool policies, register the built-in tools, connect the servers of
.geekagent/mcp.json (a config that cannot be read stops it), print the side panel's line (a plain
REPL has no panel); then each line is /mcp, /exit or a chat turn; every way out stops the servers.
Like the tutorial's program it trusts the folder it runs in: every server starts unasked, with your
whole environment. The full agent, for folders you did not write, is day15/beyond_agent.py (in the
repository).
"""
import sys

import chat
import mcp
import permissions
import tools

# The tool line shows this much of a result, as the tutorial's `[tool name -> result]`.
TOOL_LINE_CHARS = 80


def main() -> int:
    try:
        permissions.load_policies()  # Day 8: GeekAgent.json's allow / ask / deny
    except permissions.PolicyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    tools.register_builtin_tools()
    try:
        try:
            mcp.connect_mcp_servers()
        except Exception as e:  # as index.ts: whatever stops the client from reading the file
            print(f"MCP config cannot be read: {e}", file=sys.stderr)
            return 1
        print(f"GeekAgent Day 15: MCP tools  (model {chat.model()} at {chat.base_url()})")
        print(f"MCP  {mcp_line()}")
        repl()
    except KeyboardInterrupt:  # as index.ts: Ctrl-C leaves, while the servers start too
        print()
    finally:
        mcp.stop_mcp_servers()  # every way out stops them
    return 0


def mcp_line() -> str:
    """index.ts: mcpLine, each server with its tool count, or that it failed."""
    statuses = mcp.mcp_statuses()
    if not statuses:
        return "none"
    return ", ".join(f"{s.server}(failed to start)" if s.error else f"{s.server}({len(s.tools)})"
                     for s in statuses)


def cmd_mcp() -> None:
    """index.ts's /mcp: each server and its full tool names, or why it failed."""
    statuses = mcp.mcp_statuses()
    if not statuses:
        print("(no MCP servers: declare them in .geekagent/mcp.json and restart)")
    for s in statuses:
        tool_lines = "".join(f"\n  {tool}" for tool in s.tools)
        ok = f"{s.server} ({len(s.tools)} tools){tool_lines}"
        print(f"x {s.server}: {s.error}" if s.error else ok)


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
        del history[start:]  # the failed turn is forgotten: the next request is one the API takes
        print(f"error: {e}")


if __name__ == "__main__":
    sys.exit(main())
