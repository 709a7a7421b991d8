"""A real server of the tasks extension for `make interop`: FastMCP 4.1.4 with fastmcp-tasks 4.1.4 (from
PyPI, installed into .interop/fastmcp/), over stdio. One tool runs only as a task, one may, and one asks
the user inside its task."""
import asyncio
from datetime import timedelta

import mcp_types

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

# Polled every 200 ms (FastMCP's default is 5 s), so the test stays short.
POLL = timedelta(milliseconds=200)

mcp = FastMCP("tasks")
mcp.add_extension(TasksExtension())


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def report(topic: str) -> str:
    """A report that takes a moment: it runs only as a task."""
    await asyncio.sleep(1)
    return f"report on {topic}: done"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def double(n: int) -> str:
    """Twice n, as a task or not."""
    await asyncio.sleep(0.2)
    return str(n * 2)


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def confirm(ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Asks the user, inside its task, whether to go ahead (FastMCP's guard pattern: the task asks by
    returning its question, and runs again with the answer)."""
    answer = (ctx.input_responses or {}).get("go")
    if answer is None:
        form = mcp_types.ElicitRequestFormParams(message="Go ahead?", requested_schema={
            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
        return mcp_types.InputRequiredResult(input_requests={"go": mcp_types.ElicitRequest(params=form)})
    return f"answered: {answer.action}"


if __name__ == "__main__":
    mcp.run(show_banner=False)
