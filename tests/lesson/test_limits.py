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
