"""Beyond the tutorial: one server's status as the agent shows it (/mcp, the panel's line): the twin's
McpStatus (mcp.py) and what the full client knows more of it.
"""
from dataclasses import dataclass, field

import mcp
from beyond.auth.errors import LoginNeeded
from beyond.client.session import Session
from mcp import McpError


@dataclass
class McpStatus(mcp.McpStatus):
    """The twin's status, plus the running client, whether the entry is disabled or needs a login,
    and the tools that need tasks (execution.taskSupport "required"), which this client calls only on
    2026-07-28 (client/tasks.py): before, it does not offer them."""
    client: Session | None = None
    disabled: bool = False
    needs_login: bool = False
    needs_tasks: list[str] = field(default_factory=list)
    bad_schemas: list[str] = field(default_factory=list)  # tools whose inputSchema a model endpoint refuses
    starting: float | None = None  # still starting after the prompt came: since when (time.monotonic())
    said: list[str] = field(default_factory=list)  # a server that failed: the last of what it said (/logs)


def failed_status(name: str, error: McpError | str, client: Session | None = None) -> McpStatus:
    """The status of a server that did not start: its error, whether a login would start it, and
    the last of what it said (its stderr and log messages), for /logs."""
    said = list(client.from_server.tail) if client is not None else []
    return McpStatus(name, [], str(error), needs_login=isinstance(error, LoginNeeded), said=said)
