"""Everything the tutorial leaves out: the Day 15 agent made ready for real servers, models and folders.

The parts, each a folder named for what it owns (imports point down this list; tests/test_layers.py
holds the arrows):
  repl/       the REPL beyond_agent.py runs (shell.py: section 4.5 with the agent's console), around
              the agent: commands, resources and prompts, -p, the mcp verbs
  agent.py    the one object the shell builds for the full agent
  model/      the model client: streamed, retried, bounded replies; the tools tool search offers
  skills/     the agent's skills: MCP servers', the folder's and yours, loaded after the user's answer
  servers/    many servers as registry tools: parallel start, names, pins, tool search, kept results
  folder/     the project folder and the user's own files: trust, approvals, the audit log
  asks/       what a server asks of the user: the handlers, the terminal form
  client/     one MCP session over the twin (mcp.py): revisions, what a server sends unasked, restarts
  auth/       OAuth for remote servers: discovery, the login, tokens, where a login may go
  wire/       bytes in, messages out, knowing no MCP: stdio and Streamable HTTP
  console.py  the one owner of the terminal (turn.py draws the activity line and the answer; terminal.py
              what comes above the prompt, held output, typeahead)
  text.py, waits.py, dirs.py   the bottom: text made safe to show, deadlines and waits, the XDG folders;
  net.py, sse.py               one HTTP exchange with a deadline and a size limit; Server-Sent Events;
  secrets/                     the one owner of what is secret, and its masking, which every part asks

The public face, for scripts: McpClient(name, entry).start(login=...), call_tool, stop, McpError,
connect_mcp_servers, mcp_statuses, stop_mcp_servers.
"""
import functools

from beyond.asks.handlers import Handlers
from beyond.auth.screen import Screen
from beyond.client import session
from beyond.console import Console
from beyond.servers.connect import Servers
from beyond.servers.status import McpStatus
from mcp import McpError

__all__ = ["McpClient", "McpError", "McpStatus", "connect_mcp_servers", "mcp_statuses", "stop_mcp_servers"]


class McpClient(session.Session):
    """The full client as a script uses it: the agent's answers to what a server asks (in a terminal,
    the user is asked; else a form is answered as the entry's "elicitation" says) and a login that
    may be pasted in the terminal, unless other handlers are given."""

    def __init__(self, name: str, cfg, **parts) -> None:
        console = parts.get("asks") is None and parts.get("screen") is None and Console()
        parts.setdefault("asks", Handlers(console or Console()))
        parts.setdefault("screen", Screen(console=console or None))
        super().__init__(name, cfg, **parts)


@functools.cache
def _published() -> Servers:
    """The servers of the published functions below, as the twin's module keeps its statuses: made at
    their first use, so importing beyond builds nothing."""
    return Servers(asks=Handlers(Console()))


def connect_mcp_servers(path: str = ".geekagent/mcp.json", **options) -> list[McpStatus]:
    """Start every server of an mcp.json at once (Servers.connect_mcp_servers)."""
    return _published().connect_mcp_servers(path, **options)


def mcp_statuses() -> list[McpStatus]:
    return _published().mcp_statuses() if _published.cache_info().currsize else []


def stop_mcp_servers() -> None:
    if _published.cache_info().currsize:
        _published().stop_mcp_servers()
