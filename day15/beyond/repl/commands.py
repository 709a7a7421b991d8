"""Beyond the tutorial: the REPL's commands that index.ts does not have (its own are /mcp and /exit,
with /help listing them), one small function each: /tools, /call, /logs, /history, /last, /audit and
/reset, and /mcp login and /mcp logout. The shell (shell.py) puts them in its command table beside the
tutorial's; resources and prompts are repl/resources.py's. Each takes the REPL's session and the
rest of the line.
"""
import difflib
import json

from beyond.repl import resources, tasks
from beyond.servers import toolset
from beyond.servers.toolsearch import NAME as TOOL_SEARCH
from beyond.skills.loading import LOAD
import chat
from beyond.terminal import shown
from mcp import McpError


def mcp_account(session, arg: str) -> None:
    """/mcp login <server> (opens the login, in a browser or as a URL to open) and /mcp logout <server>."""
    action, _, name = arg.strip().partition(" ")
    if action not in ("login", "logout") or not name.strip():
        print("usage: /mcp, /mcp login <server> or /mcp logout <server>")
    else:
        try:
            said = getattr(session.servers, action)(name.strip())
        except Exception as e:  # McpError, or the user's Ctrl-C during a login is handled by the REPL
            said = f"error: {e}"
        print(shown(f"{name.strip()}: {said}", one_line=True))


def completer(commands: list[str], tool_names, mentions):
    """What Tab offers for a word, given the line so far: commands, tool names after /call, and
    @server: or @server:uri after @ (with "@server:" typed already, its URIs are what is left)."""
    def complete(text: str, line: str) -> list[str]:
        words = (mentions() if text.startswith("@") else tool_names() if line.startswith("/call ")
                 else commands if " " not in line else [])
        matches = [w for w in words if w.startswith(text)]
        if text.startswith("@") and text in matches and len(matches) > 1:
            matches.remove(text)
        return matches
    return complete


def cmd_tools(session, arg: str) -> None:
    """every tool with its policy (and, with many, which ones the model is offered now)"""
    chosen = {spec["function"]["name"] for spec in session.agent.search.choose(toolset.specs(), session.history)}
    searching = TOOL_SEARCH in chosen
    for tool in toolset.every():
        waits = searching and tool.name not in chosen and session.agent.approvals.policy_for(tool.name) != "deny"
        note = "  (not loaded: tool_search finds it)" if waits else \
            "  (not offered now: every tool is)" if tool.name == TOOL_SEARCH and not searching else ""
        print(f"  {session.agent.approvals.policy_for(tool.name):<5}  {tool.name}{note}")


def cmd_call(session, arg: str) -> None:
    """<tool> [json-args]: run one tool directly"""
    name, _, arguments = arg.partition(" ")
    if not name:
        print("usage: /call <tool> [json-args], e.g. /call mcp_demo_dice {}")
        return
    server = _server_of(session, name)
    if toolset.get(name) is None and server is not None and server.starting is not None:  # it joins soon
        print(f"{shown(name, one_line=True)}: {shown(server.server, one_line=True)} is still starting; waiting for it")
        if not session.servers.wait_for_start(server.server):
            print(f"{shown(server.server, one_line=True)} is still starting after its startupTimeout; /mcp says more")
            return
        server = _server_of(session, name)
    if toolset.get(name) is None and server is not None and server.needs_login:  # back with a login
        print(f"{shown(name, one_line=True)}: {shown(server.server, one_line=True)} needs a login first: "
              f"/mcp login {shown(server.server, one_line=True)}")
        return
    if toolset.get(name) is None and server is not None and server.error:
        print(f"{shown(name, one_line=True)}: {shown(server.server, one_line=True)} failed to start: "
              f"{shown(server.error, one_line=True)}")
        return
    if toolset.get(name) is None:  # say what was probably meant
        names = [t.name for t in toolset.every()]
        near = [n for n in names if n.endswith(f"_{name}") or name in n]
        near += [n for n in difflib.get_close_matches(name, names, n=3, cutoff=0.75) if n not in near]
        print(f"no tool {shown(name, one_line=True)}" + (f"; did you mean {', '.join(near[:5])}?" if near else
                                                        "; /tools lists them"))
        return
    session.last_result = session.agent.calls.run(name, arguments.strip() or "{}")
    print(shown(session.last_result))


def _server_of(session, tool: str):
    """The status of the server whose tools are named like `tool` (mcp_<server>_...), if any."""
    return next((s for s in session.servers.mcp_statuses() if tool.startswith(f"mcp_{s.server}_")), None)


def cmd_logs(session, arg: str) -> None:
    """[server]: what the servers wrote on stderr or logged, last 200 lines each (a failed one's too)"""
    statuses = [s for s in session.servers.mcp_statuses() if arg in ("", s.server)]
    if arg and not statuses:
        print(f"no server named {shown(arg, one_line=True)}; /mcp lists them")
    for status in statuses:
        lines = list(status.client.from_server.tail) if status.client is not None else status.said
        if status.client is not None or status.error:
            print(f"{shown(status.server, one_line=True)}:" + (" (failed to start)" if status.error else ""))
            print("\n".join(f"  {line}" for line in lines) or "  (nothing)")


def cmd_history(session, arg: str) -> None:
    """the conversation so far, one line a message"""
    if not session.history[1:]:
        print("(no messages yet)")
    for message in session.history[1:]:
        text = message.get("content") or ", ".join(c["function"]["name"] for c in message.get("tool_calls", []))
        print(f"  {message['role']:<9} {shown(' '.join(str(text).split())[:100], one_line=True)}")


def cmd_last(session, arg: str) -> None:
    """the last tool result in full"""
    print(shown(session.last_result) or "(no tool has run yet)")


def cmd_audit(session, arg: str) -> None:
    """the last 20 tool calls (.geekagent/audit.jsonl)"""
    print("\n".join(session.audit.last(20)) or "(no tool calls recorded yet)")


def cmd_skills(session, arg: str) -> None:
    """the skills the model may load: origin, files, size, whether they ask"""
    print("\n".join(session.agent.skills.lines()))


def cmd_skill(session, arg: str) -> None:
    """<name>: load a skill into the conversation yourself (an MCP server's asks first)"""
    if not arg.strip():
        print("usage: /skill <name> (/skills lists them)")
        return
    try:
        text = session.agent.skills.load_for_user(arg.strip())
    except (McpError, ValueError, OSError) as e:  # a refused check, no such skill, a file gone: said
        print(shown(f"error: {e}", one_line=True))
        return
    if text is None:
        print("not loaded")
        return
    # As the model's own load_skill call and its result: the skill's words are its origin's, never the user's.
    call = {"id": f"skill-{len(session.history)}", "type": "function",
            "function": {"name": LOAD, "arguments": json.dumps({"skill": arg.strip()})}}
    session.history += [{"role": "assistant", "content": None, "tool_calls": [call]},
                        {"role": "tool", "tool_call_id": call["id"], "content": text}]
    print(f"loaded {shown(arg.strip(), one_line=True)} into the conversation ({len(text):,} characters)")


def cmd_reset(session, arg: str) -> None:
    """start a new conversation"""
    session.history = chat.new_history()
    print("(conversation cleared)")


# The REPL's commands beyond the tutorial's (the shell has /help, /mcp and /exit), in the order /help
# lists them.
COMMANDS = {"/tools": cmd_tools, "/call": cmd_call, "/logs": cmd_logs, "/history": cmd_history, "/last": cmd_last,
            "/audit": cmd_audit, "/resources": resources.cmd_resources, "/read": resources.cmd_read,
            "/prompts": resources.cmd_prompts, "/prompt": resources.cmd_prompt, "/skills": cmd_skills,
            "/skill": cmd_skill, "/tasks": tasks.cmd_tasks, "/reset": cmd_reset}


def for_client() -> dict:
    """The commands beyond the tutorial's, by name."""
    return dict(COMMANDS)
