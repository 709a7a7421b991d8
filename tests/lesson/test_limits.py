"""The lesson modules' limits (tools.py): results and reads bounded (the model's: tests/model/test_model_limits.py)."""
import tools
from conftest import set_tool_policy


def test_tool_result_is_cut_for_the_model():
    """A 300,000-character result reaches the model as 100,000 and a note of how much was cut."""
    tools.register_tool(tools.Tool("huge", "", {"type": "object"}, lambda args: "y" * 300_000))
    set_tool_policy("huge", "allow")
    result = tools.run_tool("huge", "{}")
    assert result.startswith("y" * 100_000) and "200,000 more characters cut" in result
    assert len(result) < 100_200


def test_read_is_bounded_in_bytes_and_refuses_a_fifo(tmp_path):
    """A one-line 1 MB file gives a 64 KB page; a FIFO is refused instead of blocking."""
    import os
    (tmp_path / "one-line.txt").write_text("z" * 1_000_000)
    os.mkfifo(tmp_path / "pipe")
    tools.register_builtin_tools(str(tmp_path))
    page = tools.run_tool("read", '{"path": "one-line.txt"}')
    assert page.startswith("z" * 1000) and len(page) < 70_000 and "longer than 65,536 bytes" in page
    assert "not a regular file" in tools.run_tool("read", '{"path": "pipe"}')
