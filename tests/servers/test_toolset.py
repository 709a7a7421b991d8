"""The full agent's tool set (beyond/servers/toolset.py): on top of the lesson's registry, which it never changes."""
import dataclasses

import pytest

import tools
from beyond.servers import toolset


def test_servers_tools_come_and_go_and_the_guarded_builtin_stays(tmp_path):
    tools.register_builtin_tools(str(tmp_path))
    lesson = [t.name for t in tools.all_tools()]
    guarded = dataclasses.replace(tools.get_tool("read"), description="guarded", authorizes=True)
    toolset.replace_builtin(guarded)
    toolset.add(tools.Tool("mcp_s_echo", "echo", {"type": "object"}, lambda args: "echoed"))
    assert [t.name for t in toolset.every()] == lesson + ["mcp_s_echo"]  # the built-in keeps its place
    assert toolset.get("read") is guarded and [s["function"]["description"] for s in toolset.specs()][2] == "guarded"
    with pytest.raises(ValueError, match="already registered"):
        toolset.add(tools.Tool("ls", "a server's tool may not take a built-in's name", {}, lambda args: ""))
    toolset.remove("mcp_s_echo")
    toolset.remove("read")  # a built-in's replacement is never taken back: the plain `read` would ask less
    assert toolset.get("mcp_s_echo") is None and toolset.get("read") is guarded
    assert [t.name for t in tools.all_tools()] == lesson and tools.get_tool("read") is not guarded
