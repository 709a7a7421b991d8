"""The official MCP Python SDK's client on the benchmark's echo server (run by bench.py in .bench/venv).

`python sdk_peer.py sequential|threads|blob CALLS TASKS CALLS_PER_TASK BLOB SERVER-COMMAND...`
prints one number: median µs per call, calls/s with TASKS tasks, or ms for one BLOB-byte result.
"""
import asyncio
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

FIGURE, CALLS, TASKS, PER_TASK, BLOB = sys.argv[1], *map(int, sys.argv[2:6])
SERVER = sys.argv[6:]


async def measure(session: ClientSession) -> float:
    for _ in range(100):
        await session.call_tool("echo", {"text": "warm"})
    if FIGURE == "sequential":
        samples = []
        for _ in range(CALLS):
            begun = time.perf_counter_ns()
            await session.call_tool("echo", {"text": "hello"})
            samples.append((time.perf_counter_ns() - begun) / 1000)
        return statistics.median(samples)
    if FIGURE == "threads":
        async def work(t: int) -> None:
            for i in range(PER_TASK):
                result = await session.call_tool("echo", {"text": f"{t}:{i}"})
                assert result.content[0].text == f"{t}:{i}"
        begun = time.perf_counter()
        await asyncio.gather(*(work(t) for t in range(TASKS)))
        return TASKS * PER_TASK / (time.perf_counter() - begun)
    begun = time.perf_counter()
    result = await session.call_tool("blob", {"size": BLOB})
    assert len(result.content[0].text) == BLOB
    return (time.perf_counter() - begun) * 1000


async def main() -> None:
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        print(await measure(session))


if __name__ == "__main__":
    asyncio.run(main())
